"""The single agent.execution aggregate (T-UAS-067)."""

from __future__ import annotations


import pytest
from uas_unify_helpers import ALL, of_type, run, write_tree

from bitexact.sessions.unify.execution import ExecutionEvidence, add_diagnostic, normalize_code


def _execution(tmp_path, files, **kw):
    records = run(write_tree(tmp_path / "r", files), tmp_path, **kw)[0]
    found = of_type(records, "agent.execution")
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.uas("T-UAS-067")
def test_single_aggregate_with_precedence_dedupe_and_guardrail(tmp_path) -> None:
    records = run(ALL, tmp_path)[0]
    (execution,) = of_type(records, "agent.execution")
    assert execution["data"] == {"categories": ["invocation_cap_exceeded"], "errorCodes": [1000, 429],
                                 "errorTypes": ["overloaded_error", "rate_limit_error"], "exitCode": 0}
    assert execution["provenance"] == {"component": "execution", "phase": "agent",
                                       "path": "agent/agent_execution_exit_code.txt", "index": 0}
    assert "timestamp" not in execution
    # The original error evidence stays in the trace.
    assert of_type(records, "session.result")[0]["data"]["errors"] == [{"type": "overloaded_error", "message": "Overloaded"}]


@pytest.mark.uas("T-UAS-067")
def test_no_evidence_no_aggregate(tmp_path) -> None:
    assert _execution(tmp_path, {"agent-session.jsonl": [{"type": "assistant.message", "data": {"content": "ok"}}]}) is None


@pytest.mark.uas("T-UAS-067")
def test_exit_code_precedence_file_snapshot_diagnostic_harness(tmp_path) -> None:
    base = {
        "agent-session.jsonl": [{"type": "agent.execution", "data": {"categories": [], "errorCodes": [],
                                                                      "errorTypes": [], "exitCode": 2}}],
        "agent/agent-errors.jsonl": [{"exitCode": 4}],
        "agent-stdio.log": "[harness] done: exitCode=1\nnoise\n[harness] done: exitCode=5\n",
    }
    assert _execution(tmp_path / "a", {**base, "agent/agent_execution_exit_code.txt": "7\n"})["data"]["exitCode"] == 7
    assert _execution(tmp_path / "b", base)["data"]["exitCode"] == 2
    del base["agent-session.jsonl"]
    assert _execution(tmp_path / "c", base)["data"]["exitCode"] == 4
    del base["agent/agent-errors.jsonl"]
    execution = _execution(tmp_path / "d", base)
    assert execution["data"]["exitCode"] == 5 and execution["provenance"]["path"] == "agent-stdio.log"


@pytest.mark.uas("T-UAS-067")
def test_final_zero_retained_after_failed_attempts_and_missing_exit_omitted(tmp_path) -> None:
    files = {"agent/agent-errors.jsonl": [{"category": "capi_server_error", "errorCode": 500}],
             "agent-stdio.log": "[harness] done: exitCode=1\n[harness] done: exitCode=0\n"}
    execution = _execution(tmp_path / "a", files)
    assert execution["data"]["exitCode"] == 0 and execution["data"]["categories"] == ["capi_server_error"]
    execution = _execution(tmp_path / "b", {"agent/agent-errors.jsonl": [{"errorType": "timeout"}]})
    assert "exitCode" not in execution["data"]


@pytest.mark.uas("T-UAS-067")
def test_codes_numeric_spellings_dedupe_and_sort() -> None:
    evidence = ExecutionEvidence()
    for code in (1000, 1e3, 1000.0, "1000", 0, "0", -0.0, "abc", 2.5, True, "", 2**60):
        evidence.code(code, "p")
    data, _ = evidence.aggregate()
    assert data["errorCodes"] == [0, "0", 1000, "1000", "abc"]
    assert [type(c) for c in data["errorCodes"]] == [int, str, int, str, str]
    assert normalize_code(-0.0) == 0 and normalize_code(2.5) is None


@pytest.mark.uas("T-UAS-067")
def test_child_context_tool_failures_and_quoted_errors_excluded(tmp_path) -> None:
    files = {
        "agent-session.jsonl": [
            {"type": "session.error", "data": {"errorType": "child_err", "agentId": "sub-1"}},
            {"type": "session.error", "data": {"errorType": "nested", "parentToolCallId": "t1"}},
            {"type": "tool.execution_complete", "data": {"toolCallId": "t", "success": False, "error": {"code": "E_TOOL", "type": "tool_err"}}},
            {"type": "assistant.message", "data": {"content": "Error: model x is not supported"}},
            {"type": "session.error", "data": {"errorType": "main_err", "statusCode": 503}},
        ],
        "agent-stdio.log": "```\nError: model foo is not supported\n[harness] done: exitCode=9\n```\n",
    }
    execution = _execution(tmp_path, files)
    assert execution["data"] == {"categories": [], "errorCodes": [503], "errorTypes": ["main_err"]}


@pytest.mark.uas("T-UAS-067")
def test_anchored_startup_signature_outside_fences_classifies(tmp_path) -> None:
    execution = _execution(tmp_path, {"agent-stdio.log": "starting\nError: model gpt-9 is not supported\n"})
    assert execution["data"]["categories"] == ["model_not_supported_error"]
    evidence = ExecutionEvidence()
    add_diagnostic(evidence, {"category": "mcp_policy_error", "agent_id": "child"}, "p")
    assert evidence.aggregate() is None


@pytest.mark.uas("T-UAS-067")
def test_repeated_collection_of_execution_is_byte_stable(tmp_path) -> None:
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    assert run(ALL, tmp_path / "a")[2] == run(ALL, tmp_path / "b")[2]
