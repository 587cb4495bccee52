"""Authoritative sources, partial collection, symlinks and failures (T-UAS-058, T-UAS-059)."""

from __future__ import annotations

import json
import os

import pytest
from uas_unify_helpers import ALL, FIXTURES, coverage, of_type, run, warnings, write_tree

from bitexact.sessions.unify import CollectionIOError, SymlinkRefusedError, UnifyError, unify

CLAUDE_STDIO = "\n".join(json.dumps(r) for r in [
    {"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-x"},
    {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "from stdio"}]}},
]) + "\n"


@pytest.mark.uas("T-UAS-058")
def test_canonical_stream_wins_over_raw_logs_and_is_not_combined(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    texts = [r["data"].get("content") for r in of_type(records, "assistant.message")]
    assert texts == ["Done.\n"]  # the stdio conversation is not added as a second observation
    assert {r["provenance"]["path"] for r in records if r["provenance"]["component"] == "agent"} == {
        "agent-session.jsonl", "aw-prompts/system.txt", "aw-prompts/user.txt"}


@pytest.mark.uas("T-UAS-058")
def test_stdio_parsed_when_no_canonical_stream_and_native_copilot_unusable(tmp_path) -> None:
    records, _r, _d = run(FIXTURES / "stdio_fallback_when_native_copilot_unparseable", tmp_path)
    message = of_type(records, "assistant.message")[0]
    assert message["data"]["content"] == "from stdio" and message["provenance"]["path"] == "agent-stdio.log"
    codes = [w["code"] for w in warnings(records)]
    assert "no_structured_events" in codes  # the fallback does not claim the native file parsed


@pytest.mark.uas("T-UAS-058")
def test_native_copilot_sessions_are_separate_sources(tmp_path) -> None:
    events = lambda text: "\n".join(json.dumps(e) for e in [
        {"type": "assistant.message", "data": {"content": text}, "id": "same-id"}]) + "\n"
    root = write_tree(tmp_path / "r", {
        "copilot-session-state/attempt-1/events.jsonl": events("first attempt"),
        "copilot-session-state/attempt-2/events.jsonl": events("retry"),
        "agent-stdio.log": CLAUDE_STDIO,
    })
    records, _r, _d = run(root, tmp_path)
    messages = of_type(records, "assistant.message")
    assert [m["provenance"]["path"] for m in messages] == [
        "copilot-session-state/attempt-1/events.jsonl", "copilot-session-state/attempt-2/events.jsonl"]
    assert [m["id"] for m in messages] == ["same-id", "same-id"]


@pytest.mark.uas("T-UAS-058")
def test_firewall_logs_before_audit_and_empty_authoritative_suppresses_copy(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    hosts = [r["data"].get("host") for r in of_type(records, "firewall.http_access")]
    assert "replica.example" not in hosts
    records, _r, _d = run(FIXTURES / "firewall_empty_authoritative_suppresses_replica", tmp_path)
    assert not of_type(records, "firewall.http_access")
    (source,) = [s for s in coverage(records)["sources"] if s["source"] == "firewall.access"]
    assert source["empty"] is True and source["path"] == "sandbox/firewall/logs/audit.jsonl"


@pytest.mark.uas("T-UAS-058")
def test_otel_primary_mirror_wins_even_when_empty(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    assert all(r["data"].get("name") != "mirror must not be used" for r in of_type(records, "otel.span"))
    root = write_tree(tmp_path / "r", {"otel.jsonl": "", "usage/otel.jsonl": [
        {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "mirror"}]}]}]}]})
    records, _r, _d = run(root, tmp_path)
    assert not of_type(records, "otel.span")


@pytest.mark.uas("T-UAS-058")
def test_detection_conclusion_result_preferred_once_without_free_form_reasons(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    (detection,) = of_type(records, "detection.result")
    assert detection["provenance"]["path"] == "usage/detection/detection_result.json"
    assert detection["data"] == {"jobResult": "success", "conclusion": "warning", "reason": "threat_detected",
                                 "promptInjection": False, "secretLeak": True}
    root = write_tree(tmp_path / "r", {"threat-detection/detection_result.json": {"secret_leak": False}})
    records, _r, _d = run(root, tmp_path)
    (detection,) = of_type(records, "detection.result")
    assert detection["data"] == {"secretLeak": False}  # skipped flags stay absent, false is kept


@pytest.mark.uas("T-UAS-059")
def test_missing_sources_reported_not_fabricated(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    records, _r, _d = run(tmp_path / "empty", tmp_path)
    cov = coverage(records)
    assert cov["sources"] == [] and cov["eventCount"] == 0
    assert "agent" in cov["absentComponents"] and "workflow" in cov["absentComponents"]
    assert not of_type(records, "grader.result") and not of_type(records, "session.result")
    assert "workflow_metadata_absent" in [w["code"] for w in warnings(records)]


@pytest.mark.uas("T-UAS-059", "T-UAS-016")
def test_malformed_lines_warn_with_original_line_numbers_and_keep_neighbours(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {"mcp-logs/rpc-messages.jsonl":
        '{"type":"REQUEST","id":1,"method":"a"}\n\n{"type":"REQUEST", secret-payload-text\n[1,2]\n{"type":"REQUEST","id":2,"method":"b"}\n'})
    records, _r, _d = run(root, tmp_path)
    assert [r["data"]["rpcId"] for r in of_type(records, "mcp.rpc.request")] == [1, 2]
    found = [(w["code"], w.get("line")) for w in warnings(records) if w["source"] == "mcp.rpc"]
    assert found == [("malformed_jsonl", 3), ("malformed_jsonl", 4)]
    assert all("secret-payload-text" not in json.dumps(w) for w in warnings(records))


@pytest.mark.uas("T-UAS-059")
def test_symlinked_sources_are_not_followed(tmp_path) -> None:
    outside = write_tree(tmp_path / "outside", {"agent-session.jsonl": [
        {"type": "assistant.message", "data": {"content": "LINKED SECRET"}}], "logs/audit.jsonl": [{"host": "linked"}]})
    root = write_tree(tmp_path / "r", {"mcp-logs/rpc-messages.jsonl": [{"type": "REQUEST", "id": 1}]})
    os.symlink(outside / "agent-session.jsonl", root / "agent-session.jsonl")
    (root / "sandbox/firewall").mkdir(parents=True)
    os.symlink(outside / "logs", root / "sandbox/firewall/logs")
    records, _r, data = run(root, tmp_path)
    assert b"LINKED SECRET" not in data and b"linked" not in data
    codes = [(w["code"], w.get("path")) for w in warnings(records)]
    assert ("symlink_refused", "agent-session.jsonl") in codes
    assert ("symlink_refused", "sandbox/firewall/logs/audit.jsonl") in codes
    assert of_type(records, "mcp.rpc.request")  # adjacent sources still collected


@pytest.mark.uas("T-UAS-059")
def test_write_failure_surfaces_and_symlinked_output_refused(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    blocked = tmp_path / "out-is-a-directory"
    blocked.mkdir()
    with pytest.raises(CollectionIOError, match="cannot write"):
        unify(tmp_path / "empty", blocked, env={})
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary left
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("keep")
    link = tmp_path / "aw_session.jsonl"
    os.symlink(target, link)
    with pytest.raises(SymlinkRefusedError):
        unify(tmp_path / "empty", link, env={})
    assert target.read_text() == "keep"


@pytest.mark.uas("T-UAS-059")
def test_failed_collection_removes_stale_output(tmp_path) -> None:
    out = tmp_path / "aw_session.jsonl"
    out.write_text('{"stale":true}\n')
    with pytest.raises(UnifyError, match="artifact directory not found"):
        unify(tmp_path / "missing-root", out, env={})
    assert not out.exists()


@pytest.mark.uas("T-UAS-059", "T-UAS-062")
def test_grader_and_eval_results_only_from_current_run(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    graders = of_type(records, "grader.result")
    assert [(g["data"]["value"], g["provenance"]["index"]) for g in graders] == [(3, 0)]
    assert "script" not in json.dumps(graders)
    evals = of_type(records, "eval.result")
    assert [e["data"]["id"] for e in evals] == ["e1"] and "question" not in evals[0]["data"]
    assert "SECRET QUESTION" not in json.dumps(records)
    unattributed = [w for w in warnings(records) if w["code"] == "unattributed_result"]
    assert [w["line"] for w in unattributed] == [5]  # the original line, blank line counted


@pytest.mark.uas("T-UAS-059")
def test_run_identity_from_explicit_environment_only_when_aw_info_lacks_it(tmp_path, monkeypatch) -> None:
    files = {"evals/evals.jsonl": [{"id": "x", "answer": "YES", "run_id": "77"}]}
    root = write_tree(tmp_path / "r", files)
    monkeypatch.setenv("GITHUB_RUN_ID", "77")
    records, _r, _d = run(root, tmp_path, env={})  # an explicit snapshot never reads os.environ
    assert not of_type(records, "eval.result")
    assert "no_current_run" in [w["code"] for w in warnings(records)]
    records, _r, _d = run(root, tmp_path, env={"GITHUB_RUN_ID": "77"})
    assert [e["data"]["id"] for e in of_type(records, "eval.result")] == ["x"]


@pytest.mark.uas("T-UAS-059")
def test_traversal_limit_produces_a_coverage_warning(tmp_path) -> None:
    from bitexact.sessions.unify.sources import SESSION_DIR_LIMIT

    files = {f"copilot-session-state/s{i:03d}/events.jsonl":
             json.dumps({"type": "assistant.message", "data": {"content": f"m{i}"}}) + "\n"
             for i in range(SESSION_DIR_LIMIT + 2)}
    records = run(write_tree(tmp_path / "r", files), tmp_path)[0]
    assert len(of_type(records, "assistant.message")) == SESSION_DIR_LIMIT
    assert "traversal_limit" in [w["code"] for w in warnings(records)]
