"""Publication boundary and collection coverage (T-UAS-060, T-UAS-063, T-UAS-062)."""

from __future__ import annotations

import json

import pytest
from uas_unify_helpers import ALL, coverage, of_type, run, warnings, write_tree

from bitexact.sessions.unify.redact import Redactor, masks_from_log

GH_TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"


@pytest.mark.uas("T-UAS-060")
def test_stdio_masks_apply_even_when_canonical_stream_preferred(tmp_path) -> None:
    records, _r, data = run(ALL, tmp_path)
    assert b"STDIO-MASK-1" not in data
    prompt = of_type(records, "user.message")[0]
    assert prompt["data"]["content"] == "PRIVATE-PROMPT-unify-1 uses ***"
    assert GH_TOKEN.encode() not in data  # credential in a rate-limit record's unknown field / anywhere


@pytest.mark.uas("T-UAS-060")
def test_redaction_of_decoded_escaped_strings_ids_keys_and_nested_values(tmp_path) -> None:
    escaped = '{"type":"vendor.x","id":"MASK\\u002dONE","data":{"MASK-ONE":{"deep":["a MASK-ONE b"]},"u":"\\u0067hp_0123456789abcdefghijABCDEFGHIJ0123456789"}}\n'
    root = write_tree(tmp_path / "r", {"agent-session.jsonl": escaped,
                                       "sandbox/firewall/logs/events.jsonl": [{"event": "x", "message": "MASK-ONE"}]})
    records, _r, data = run(root, tmp_path, masks=["MASK-ONE"])
    assert b"MASK-ONE" not in data and b"ghp_" not in data and b"\\u0067hp" not in data
    (event,) = of_type(records, "vendor.x")
    assert event["id"] == "***" and event["data"] == {"***": {"deep": ["a *** b"]}, "u": "***"}
    assert of_type(records, "firewall.event")[0]["data"]["message"] == "***"


@pytest.mark.uas("T-UAS-060", "T-UAS-026")
def test_redactor_returns_copies_and_never_mutates() -> None:
    value = {"a": ["x SECRET y", {"SECRET": 1}], "b": 2}
    before = json.loads(json.dumps(value))
    redacted = Redactor(["SECRET"]).value(value)
    assert value == before
    assert redacted == {"a": ["x *** y", {"***": 1}], "b": 2}
    untouched = {"a": ["nothing"]}
    assert Redactor(["SECRET"]).value(untouched) is untouched


@pytest.mark.uas("T-UAS-060")
def test_add_mask_values_are_collected_and_raw_values_not_persisted() -> None:
    assert masks_from_log("x\n::add-mask::abc123\r\n::add-mask::  \n::add-mask::two words\n") == ["abc123", "two words"]


@pytest.mark.uas("T-UAS-063")
def test_collection_record_counts_sources_warnings_untimed_and_absences(tmp_path) -> None:
    records, report, _d = run(ALL, tmp_path)
    cov = coverage(records)
    body = [r for r in records[1:] if r["provenance"]["component"] != "collector"]
    assert cov["eventCount"] == len(body)
    assert cov["untimedEventCount"] == sum(1 for r in body if "timestampMs" not in r["provenance"])
    assert cov["warningCount"] == len(of_type(records, "session.collection_warning")) == len(report.warnings)
    paths = {s["path"] for s in cov["sources"]}
    assert {"agent-session.jsonl", "mcp-logs/rpc-messages.jsonl", "otel.jsonl"} <= paths
    absent = {a["source"] for a in cov["absentSources"]}
    assert "guardrail.admission" in absent and "mcp.rpc" not in absent
    assert records[-1]["type"] == "session.collection"
    assert "timestamp" not in records[-1]


@pytest.mark.uas("T-UAS-063")
def test_absent_and_present_empty_sources_are_distinguishable(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {"mcp-logs/rpc-messages.jsonl": ""})
    cov = coverage(run(root, tmp_path)[0])
    (rpc,) = [s for s in cov["sources"] if s["source"] == "mcp.rpc"]
    assert rpc["empty"] is True and rpc["events"] == 0
    assert "mcp.gateway" in {a["source"] for a in cov["absentSources"]}
    assert "mcp.rpc" not in {a["source"] for a in cov["absentSources"]}


@pytest.mark.uas("T-UAS-063")
def test_warnings_name_source_and_cause_without_payloads(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {"sandbox/firewall/logs/token-usage.jsonl":
                                       '{"ts": 1, "model": "m", "steering": {"type": "x"}, "password": "hunter2"}\n{"broken": hunter2\n'})
    records, _r, _d = run(root, tmp_path)
    ws = [w for w in warnings(records) if w["source"] == "firewall.token_usage"]
    assert {w["code"] for w in ws} == {"malformed_jsonl", "invalid_field"}
    assert all(w["path"] == "sandbox/firewall/logs/token-usage.jsonl" for w in ws)
    assert "hunter2" not in json.dumps(records)


@pytest.mark.uas("T-UAS-062")
def test_overlapping_accounting_is_never_summed_into_a_new_total(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    results = of_type(records, "session.result")
    assert len(results) == 1 and results[0]["data"]["usage"]["inputTokens"] == 30
    # firewall, usage.report and agent accounting for req-1 all stay separate observations.
    assert len(of_type(records, "firewall.token_usage")) == 3 and len(of_type(records, "usage.report")) == 1
    kinds = {r["type"] for r in records}
    assert not {k for k in kinds if "total" in k}


@pytest.mark.uas("T-UAS-062")
def test_historical_experiment_state_is_not_a_current_assignment(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    (assignment,) = of_type(records, "experiment.assignment")
    assert assignment["data"]["assignments"] == {"assignments": "B", "prompt_style": "concise"}
    states = of_type(records, "experiment.state")
    assert [s["data"]["runId"] for s in states] == [1, 4242]
