"""Tool payloads, outcomes and correlation (UAS 4.4, 4.5, 5.4; T-UAS-012..014, 022..024, 044)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from bitexact.sessions.correlate import pair_tools, split_mcp_name
from uas_parser_helpers import datas, fixture_text, jsonl


@pytest.mark.uas("T-UAS-012")
def test_start_payloads_keep_types_command_and_mcp_server() -> None:
    events = parse(fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl"), "copilot").events
    starts = datas(events, "tool.execution_start")
    assert starts[0] == {"toolCallId": "call-1", "toolName": "bash", "command": "ls -la", "input": {}}
    assert starts[1]["input"] == ["a", 1] and starts[1]["mcpServerName"] == ""
    legacy = parse(fixture_text("copilot", "legacy_claude_compatible_entries.json"), "copilot").events
    assert datas(legacy, "tool.execution_start")[0]["input"] == "README.md"  # primitive input not replaced by {}


@pytest.mark.uas("T-UAS-012")
def test_mcp_names_split_and_original_name_kept() -> None:
    events = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude").events
    start = datas(events, "tool.execution_start")[0]
    assert (start["mcpServerName"], start["toolName"], start["nativeToolName"]) == ("catalog", "lookup", "mcp__catalog__lookup")
    assert split_mcp_name("mcp__a__b__c") == ("a", "b__c")
    assert split_mcp_name("mcp__only") is None and split_mcp_name("Bash") is None


@pytest.mark.uas("T-UAS-013")
def test_completion_outputs_stay_structured_and_falsy() -> None:
    gem = parse(fixture_text("gemini", "stream_json_session_with_deltas_and_stats.jsonl"), "gemini").events
    outputs = [d["output"] for d in datas(gem, "tool.execution_complete")]
    assert outputs == [False, 0, {"items": []}]
    native = parse(fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl"), "copilot").events
    assert datas(native, "tool.execution_complete")[0]["result"] == {"content": [{"type": "json", "json": {"count": 0}}]}


@pytest.mark.uas("T-UAS-014")
def test_explicit_failures_are_failures() -> None:
    codex = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    by_id = {d["toolCallId"]: d for d in datas(codex, "tool.execution_complete")}
    assert by_id["item_1"]["success"] is False and by_id["item_1"]["exitCode"] == 2
    assert by_id["item_2"]["success"] is False and by_id["item_2"]["error"] == {"message": "rate limited"}
    assert by_id["item_8"]["success"] is False and by_id["item_8"]["exitCode"] is None  # declined
    claude = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude").events
    assert [d.get("success") for d in datas(claude, "tool.execution_complete")] == [True, False]


@pytest.mark.uas("T-UAS-014")
def test_nonzero_exit_wins_over_completed_status() -> None:
    text = jsonl({"type": "item.completed", "item": {"id": "c", "type": "command_execution", "command": "x", "exit_code": 3, "status": "completed"}})
    (done,) = datas(parse(text, "codex").events, "tool.execution_complete")
    assert done["success"] is False and done["status"] == "completed"


@pytest.mark.uas("T-UAS-014")
def test_absent_error_is_not_success() -> None:
    text = jsonl({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}})
    (done,) = datas(parse(text, "claude").events, "tool.execution_complete")
    assert "success" not in done


@pytest.mark.uas("T-UAS-022")
def test_concurrent_same_name_calls_pair_by_exact_id() -> None:
    text = jsonl(
        {"type": "tool_use", "tool_name": "read", "tool_id": "r1", "parameters": {"p": 1}},
        {"type": "tool_use", "tool_name": "read", "tool_id": "r2", "parameters": {"p": 2}},
        {"type": "tool_result", "tool_id": "r2", "status": "success", "output": "two"},
        {"type": "tool_result", "tool_id": "r1", "status": "error", "output": "one"},
    )
    events = parse(text, "gemini").events
    pairing = pair_tools(events)
    assert pairing.pairs == [(1, 2), (0, 3)]
    assert [d["toolCallId"] for d in datas(events, "tool.execution_complete")] == ["r2", "r1"]


@pytest.mark.uas("T-UAS-022")
def test_name_recovery_only_from_an_exact_id_in_the_same_scope() -> None:
    events = parse(fixture_text("claude", "subagent_lifecycle_and_status.jsonl"), "claude").events
    # toolu-c1 was started in two scopes with different names; the child result gets the child's name.
    (child_done,) = [e for e in events if e["type"] == "tool.execution_complete" and e["data"]["toolCallId"] == "toolu-c1"]
    assert child_done["data"]["toolName"] == "Read" and child_done["parent_tool_use_id"] == "toolu-task"


@pytest.mark.uas("T-UAS-023", "T-UAS-044")
def test_dangling_starts_stay_dangling_without_invented_outcomes() -> None:
    for engine, name, dangling in [
        ("copilot", "debug_responses_with_incomplete_tool_calls.log", {"dbg-call-1", "dbg-call-2"}),
        ("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl", {"item_4"}),
        ("pi", "v3_stream_two_turns_partial_and_errors.jsonl", {"pi-dangling"}),
        ("opencode", "run_format_json_session.jsonl", {"call_3"}),
        ("cursor", "stream_json_session.jsonl", {"cur-call-3"}),
    ]:
        events = parse(fixture_text(engine, name), engine).events
        pairing = pair_tools(events)
        assert {events[i]["data"]["toolCallId"] for i in pairing.dangling} == dangling, engine
        completed = {d.get("toolCallId") for d in datas(events, "tool.execution_complete")}
        assert not (completed & dangling), engine


@pytest.mark.uas("T-UAS-024")
def test_orphan_completions_keep_id_outcome_and_output() -> None:
    gem = parse(fixture_text("gemini", "stream_json_session_with_deltas_and_stats.jsonl"), "gemini").events
    orphan = [d for d in datas(gem, "tool.execution_complete") if d["toolCallId"] == "shell-9"]
    assert orphan == [{"toolCallId": "shell-9", "success": True, "output": {"items": []}, "status": "success"}]
    pi = parse(fixture_text("pi", "v3_stream_two_turns_partial_and_errors.jsonl"), "pi").events
    assert [e for e in pi if e["type"] == "tool.execution_start" and e["data"]["toolCallId"] == "pi-orphan"] == []
    goose = parse(fixture_text("goose", "stream_json_session.jsonl"), "goose").events
    g = [d for d in datas(goose, "tool.execution_complete") if d["toolCallId"] == "g-orphan"]
    assert g and g[0]["success"] is False and "toolName" not in g[0]
    pairing = pair_tools(goose)
    assert any(goose[i]["data"]["toolCallId"] == "g-orphan" for i in pairing.orphans)


@pytest.mark.uas("T-UAS-022", "T-UAS-024")
def test_summary_only_file_change_is_an_orphan_completion() -> None:
    events = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    patch = [e for e in events if e["data"].get("toolCallId") == "item_3"]
    assert [e["type"] for e in patch] == ["tool.execution_complete"]
    assert patch[0]["data"]["toolName"] == "apply_patch" and "input" not in patch[0]["data"]


@pytest.mark.uas("T-UAS-022")
def test_no_ids_are_invented_for_sources_without_ids() -> None:
    for engine, name in [("codex", "legacy_text_layout.log"), ("copilot", "pretty_print_tools_and_footer.log")]:
        events = parse(fixture_text(engine, name), engine).events
        tools = [e for e in events if e["type"].startswith("tool.")]
        assert tools and all("toolCallId" not in e["data"] for e in tools), engine
