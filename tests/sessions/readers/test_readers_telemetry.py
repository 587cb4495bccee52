"""Bootstrap legacy telemetry projection and canonical persistence (T-UAS-046, 047, 048, 053, 060)."""

from __future__ import annotations

import copy
import json

import pytest
from uas_reader_helpers import freeze, frozen

from bitexact.sessions.telemetry import enrich_telemetry, legacy_telemetry, persist_agent_session


def _result(**data):
    return {"type": "session.result", "data": data}


@pytest.mark.uas("T-UAS-046")
def test_appendix_c_projection_bytes() -> None:
    events = freeze([_result(numTurns=2, usage={"input_tokens": 30, "output_tokens": 8})])
    record = legacy_telemetry(events)
    assert json.dumps(record, separators=(",", ":")) == \
        '{"type":"result","num_turns":2,"usage":{"input_tokens":30,"output_tokens":8}}'


@pytest.mark.uas("T-UAS-046", "T-UAS-030", "T-UAS-033", "T-UAS-053")
def test_aliases_and_multiple_snapshots_select_latest_without_summing() -> None:
    events = freeze([
        _result(numTurns=1, usage={"inputTokens": 10, "outputTokens": 3}),
        {"type": "vendor.x", "data": {}},
        _result(numTurns=2, usage={"input_tokens": 0, "inputTokens": 50}),
    ])
    record = legacy_telemetry(events)
    assert record["num_turns"] == 2
    assert record["usage"] == {"input_tokens": 0, "output_tokens": 3}


@pytest.mark.uas("T-UAS-047", "T-UAS-053")
def test_zero_kept_missing_and_invalid_omitted_nothing_fabricated() -> None:
    assert legacy_telemetry(freeze([_result(numTurns=0, usage={"output_tokens": 0})])) == {
        "type": "result", "num_turns": 0, "usage": {"output_tokens": 0}}
    assert legacy_telemetry(freeze([_result(numTurns=-3, durationMs=float("nan"), usage={"input_tokens": "9"})])) == {}
    assert legacy_telemetry(freeze([{"type": "assistant.message", "data": {"content": "hi"}}])) == {}


@pytest.mark.uas("T-UAS-046")
def test_bare_legacy_result_is_not_a_source_and_nested_results_excluded() -> None:
    events = freeze([
        {"type": "result", "num_turns": 9, "usage": {"input_tokens": 9}},
        _result(numTurns=4, agentId="child-1"),
        _result(usage={"input_tokens": 5}),
    ])
    assert legacy_telemetry(events) == {"type": "result", "usage": {"input_tokens": 5}}


@pytest.mark.uas("T-UAS-047", "T-UAS-053")
def test_enrichment_appends_standalone_line_and_is_idempotent(tmp_path) -> None:
    events, before = frozen("appendix_a_complete_trace.json")
    path = tmp_path / "telemetry.jsonl"
    path.write_text('{"type":"other","x":1}', encoding="utf-8")  # no trailing newline
    assert enrich_telemetry(path, events).status == "appended"
    lines = path.read_text(encoding="utf-8").split("\n")
    assert json.loads(lines[0]) == {"type": "other", "x": 1}
    assert json.loads(lines[1])["num_turns"] == 2 and lines[2] == ""
    assert enrich_telemetry(path, events).status == "present"
    assert path.read_text(encoding="utf-8").count('"type":"result"') == 1
    assert json.loads(json.dumps(events)) == before


@pytest.mark.uas("T-UAS-047", "T-UAS-053")
def test_enrichment_failure_is_best_effort(tmp_path) -> None:
    events, before = frozen("appendix_a_complete_trace.json")
    target = tmp_path / "is-a-directory"
    target.mkdir()
    outcome = enrich_telemetry(target, events)
    assert outcome.status == "failed" and "IsADirectoryError" in outcome.detail
    assert json.loads(json.dumps(events)) == before
    assert enrich_telemetry(tmp_path / "x.jsonl", freeze([])).status == "nothing"
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.uas("T-UAS-048")
def test_projection_carries_no_success_assertion() -> None:
    record = legacy_telemetry(freeze([_result(numTurns=5, status="success", usage={"output_tokens": 1})]))
    assert set(record) == {"type", "num_turns", "usage"}


@pytest.mark.uas("T-UAS-060", "T-UAS-026", "T-UAS-054")
def test_persisted_agent_session_is_redacted_compact_and_input_untouched(tmp_path) -> None:
    events = [
        {"type": "assistant.message", "id": "ghp_0123456789abcdefghijABCDEFGHIJ0123456789",
         "data": {"content": "line1\nkey MASK-ME-1 end", "nested": [{"k": "MASK-ME-1"}]}},
    ]
    before = copy.deepcopy(events)
    out = tmp_path / "agent-session.jsonl"
    persist_agent_session(freeze(events), out, masks=["MASK-ME-1"])
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n") and text.count("\n") == 1
    record = json.loads(text)
    assert record["id"] == "***"
    assert record["data"] == {"content": "line1\nkey *** end", "nested": [{"k": "***"}]}
    assert events == before
