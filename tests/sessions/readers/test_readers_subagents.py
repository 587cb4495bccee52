"""Audit and logs sub-agent rows keyed by agent definition (T-UAS-073).

Fixtures follow the 9.x matrix row of T-UAS-073: Copilot built-in and
declared sub-agents with distinct display names, provider-qualified model
IDs, declared concrete and alias models, and an instance without agentName.
"""

from __future__ import annotations

import copy
import json

import pytest

from bitexact.sessions.render.subagents import (
    MIXED,
    ModelRequests,
    SubagentEvidenceError,
    audit_rows,
    logs_rows,
    run_rows,
    served_model,
)

from uas_reader_helpers import FIXTURES, freeze


def _records(name: str) -> list[dict]:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _by_name(rows):
    return {row.name: row for row in rows}


pytestmark = pytest.mark.uas("T-UAS-073")


def test_rows_are_keyed_by_definition_and_combine_instances() -> None:
    rows = _by_name(audit_rows(_records("subagents_run_a.jsonl")))
    reviewer = rows["reviewer"]
    assert reviewer.agent_type == "subagent"
    assert (reviewer.instances, reviewer.completed, reviewer.failed) == (2, 1, 1)
    # Counts and credits come from the per-agent snapshot, summed over instances.
    assert (reviewer.requests, reviewer.input_tokens, reviewer.output_tokens) == (4, 310, 31)
    assert reviewer.credits_nano_aiu == 3100
    assert reviewer.effort == "high"
    assert "Code Reviewer" not in rows and "i-1" not in rows


def test_display_names_sorted_distinct_and_never_from_selected() -> None:
    reviewer = _by_name(audit_rows(_records("subagents_run_a.jsonl")))["reviewer"]
    assert reviewer.display_names == ("Code Reviewer", "Reviewer (metrics)", "Reviewer (security)")
    assert "Selected Label Must Not Appear" not in reviewer.display_names


def test_instance_without_agent_name_is_named_by_display_name() -> None:
    rows = _by_name(audit_rows(_records("subagents_run_a.jsonl")))
    general = rows["General Purpose"]
    assert general.display_names == ()
    assert general.instances == 1 and general.requests == 4 and general.credits_nano_aiu == 400
    assert general.models == ("claude-haiku-4.5",)


def test_effort_is_shared_value_or_mixed() -> None:
    rows = _by_name(audit_rows(_records("subagents_run_a.jsonl")))
    assert rows["explore"].effort == MIXED
    assert rows["reviewer"].effort == "high"


def test_served_models_bare_no_aliases_dated_kept_no_routing_outcome() -> None:
    rows = _by_name(audit_rows(_records("subagents_run_a.jsonl")))
    # Dated and undated IDs both served requests: both stay; the alias "small" does not.
    assert rows["reviewer"].models == ("claude-sonnet-4", "claude-sonnet-4-20250514")
    # Resolved from each instance's own evidence: only i-3 served gpt-5-mini.
    assert rows["explore"].models == ("gpt-5-mini",)
    assert all("agent-written-model-9" not in r.models for r in rows.values())
    assert all("small" not in r.models for r in rows.values())
    assert all("/" not in m for r in rows.values() for m in r.models)


def test_model_request_rows_resolved_per_instance_then_combined() -> None:
    reviewer = _by_name(audit_rows(_records("subagents_run_a.jsonl")))["reviewer"]
    assert reviewer.model_requests == (
        ModelRequests("claude-sonnet-4", 1, 10, 1),
        ModelRequests("claude-sonnet-4-20250514", 3, 300, 30),
    )


def test_main_row_keeps_role_and_snapshot_counts() -> None:
    rows = audit_rows(_records("subagents_run_a.jsonl"))
    assert rows[0].agent_type == "main" and rows[0].name == "main"
    assert (rows[0].requests, rows[0].credits_nano_aiu) == (7, 7_000_000)
    assert sum(1 for r in rows if r.agent_type == "main") == 1


def test_requests_without_snapshot_are_counted_per_request() -> None:
    rows = _by_name(audit_rows(_records("subagents_run_b.jsonl")))
    reviewer = rows["reviewer"]
    assert (reviewer.requests, reviewer.input_tokens, reviewer.output_tokens) == (2, 110, 11)
    assert reviewer.credits_nano_aiu is None  # unknown, never zero
    assert reviewer.model_requests == (ModelRequests("claude-sonnet-4-20250514", 2, 110, 11),)
    assert rows["explore"].requests is None


def test_logs_combine_runs_by_definition_and_effort() -> None:
    run_a = audit_rows(_records("subagents_run_a.jsonl"))
    run_b = audit_rows(_records("subagents_run_b.jsonl"))
    combined = logs_rows([run_a, run_b])
    keyed = {(r.name, r.effort): r for r in combined}
    reviewer = keyed[("reviewer", "high")]
    assert (reviewer.runs, reviewer.instances, reviewer.requests) == (2, 3, 6)
    assert reviewer.credits_nano_aiu == 3100
    # explore had mixed effort in run A and low in run B: one row per effort.
    assert keyed[("explore", MIXED)].runs == 1 and keyed[("explore", "low")].runs == 1
    assert len([r for r in combined if r.name == "reviewer"]) == 1


def test_input_is_not_mutated_and_bad_records_are_named() -> None:
    records = _records("subagents_run_a.jsonl")
    before = copy.deepcopy(records)
    audit_rows(freeze(records))
    assert records == before
    with pytest.raises(SubagentEvidenceError, match="field 'type'"):
        audit_rows([{"data": {}}])
    with pytest.raises(SubagentEvidenceError, match="record 1: not a JSON object"):
        audit_rows([{"type": "x", "data": {}}, 3])


@pytest.mark.parametrize("raw, expected", [
    ("anthropic/claude-sonnet-4", "claude-sonnet-4"),
    ("gpt-5", "gpt-5"),
    ("o3", "o3"),
    ("small", None),
    ("auto", None),
    ("", None),
    (7, None),
])
def test_served_model_normalization(raw, expected) -> None:
    assert served_model(raw) == expected


def _agent(path: str, kind: str, data: dict) -> dict:
    return {"type": kind, "data": data, "provenance": {"component": "agent", "phase": "agent", "path": path, "index": 0}}


def _proxy(model: str, tokens_in: int, tokens_out: int, aic: float, purpose: str = "subagent") -> dict:
    return {"type": "firewall.token_usage", "data": {"model": model, "purpose": purpose, "aic": aic,
                                                     "usage": {"inputTokens": tokens_in, "outputTokens": tokens_out}},
            "provenance": {"component": "firewall", "phase": "agent", "path": "sandbox/firewall/logs/token-usage.jsonl",
                           "index": 0}}


def test_proxy_credits_correlate_by_model_tokens_and_order_excluding_classifier() -> None:
    records = [
        _agent("a.jsonl", "subagent.started", {"agentId": "x", "agentName": "explore"}),
        _proxy("claude-haiku-4.5", 10, 1, 0.5, purpose="routing_classification"),
        _proxy("anthropic/claude-haiku-4.5", 10, 1, 0.25),
        _proxy("claude-haiku-4.5", 10, 1, 0.75),
        _proxy("claude-haiku-4.5", 99, 1, 8.0),
        _agent("a.jsonl", "subagent.request", {"agentId": "x", "model": "claude-haiku-4.5",
                                               "usage": {"input_tokens": 10, "output_tokens": 1}}),
        _agent("a.jsonl", "subagent.request", {"agentId": "x", "model": "claude-haiku-4.5",
                                               "usage": {"input_tokens": 10, "output_tokens": 1}}),
        _agent("a.jsonl", "subagent.request", {"agentId": "x", "model": "claude-haiku-4.5",
                                               "usage": {"input_tokens": 10, "output_tokens": 1}}),
    ]
    (row,) = audit_rows(records)
    # Two matching proxy copies claimed in order (0.25 + 0.75); the classifier's
    # 0.5 and the 99-token request are never claimed; the third request finds none.
    assert row.proxy_aic == pytest.approx(1.0)
    assert row.requests == 3


def test_no_matching_proxy_request_leaves_proxy_credits_absent() -> None:
    records = [_agent("a.jsonl", "subagent.request", {"agentId": "x", "agentName": "e", "model": "m-1",
                                                      "usage": {"input_tokens": 1, "output_tokens": 1}})]
    (row,) = audit_rows(records)
    assert row.proxy_aic is None


def test_attribution_is_scoped_to_the_final_retry_session() -> None:
    first, final = "copilot-session-state/a/events.jsonl", "copilot-session-state/b/events.jsonl"
    records = [
        _agent(first, "subagent.started", {"agentId": "old", "agentName": "explore", "agentDisplayName": "Old"}),
        _agent(final, "subagent.started", {"agentId": "new", "agentName": "explore", "agentDisplayName": "New"}),
        # interleaved later record of the earlier session: still excluded
        _agent(first, "subagent.completed", {"agentId": "old", "agentName": "explore"}),
        _agent(final, "subagent.failed", {"agentId": "new", "agentName": "explore"}),
    ]
    (row,) = audit_rows(records)
    assert (row.instances, row.completed, row.failed) == (1, 0, 1)
    assert row.display_names == ("New",)


def test_run_rows_prefers_unified_file_and_skips_malformed_sources(tmp_path) -> None:
    unified = (FIXTURES / "subagents_run_a.jsonl").read_bytes()
    legacy = b'{"type":"subagent.started","data":{"agentId":"z","agentName":"legacy-only"}}\n'
    (tmp_path / "usage").mkdir()
    (tmp_path / "agent-session.jsonl").write_bytes(legacy)
    (tmp_path / "agent-stdio.log").write_text("subagent explore started\n")
    (tmp_path / "usage" / "aw_session.jsonl").write_bytes(unified)
    result = run_rows(tmp_path)
    assert result.source == "usage/aw_session.jsonl" and result.diagnostics == ()
    assert "legacy-only" not in {r.name for r in result.rows}
    # A malformed preferred file: diagnostic, then the next structured source.
    (tmp_path / "usage" / "aw_session.jsonl").write_bytes(unified + b"{not json\n")
    result = run_rows(tmp_path)
    assert result.source == "agent-session.jsonl"
    assert result.diagnostics == ("usage/aw_session.jsonl: line 17: invalid JSON; source skipped",)
    assert [r.name for r in result.rows] == ["legacy-only"]


def test_run_rows_without_evidence_is_empty_not_zero(tmp_path) -> None:
    (tmp_path / "agent-stdio.log").write_text("subagent explore started\n")
    (tmp_path / "aw_session.jsonl").write_text('{"type":"assistant.message","data":{}}\n')
    result = run_rows(tmp_path)
    assert result.rows == () and result.source is None
    assert result.diagnostics == ("aw_session.jsonl: no version-1 session.format header; source skipped",)


def test_models_come_from_the_instance_not_from_unrelated_proxy_traffic() -> None:
    records = [
        _agent("a.jsonl", "subagent.started", {"agentId": "x", "agentName": "quiet"}),
        _proxy("gpt-5-mini", 5, 5, 0.1),
        {"type": "model_routing.outcome", "data": {"role": "quiet", "model": "agent-written-model"}},
    ]
    (row,) = audit_rows(records)
    assert row.models == () and row.proxy_aic is None
