"""Claude adapter (UAS 7.1, T-UAS-036; 9.3 Claude row)."""

from __future__ import annotations

import json

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import datas, fixture_text, jsonl, types


@pytest.mark.uas("T-UAS-036")
def test_json_array_and_jsonl_forms_give_the_same_trace() -> None:
    array = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude").events
    lines = parse(fixture_text("claude", "jsonl_full_session_with_debug_and_trailing_extension.jsonl"), "claude").events
    assert array == lines


@pytest.mark.uas("T-UAS-036", "T-UAS-033")
def test_result_selection_does_not_depend_on_the_last_element() -> None:
    result = parse(fixture_text("claude", "jsonl_full_session_with_debug_and_trailing_extension.jsonl"), "claude")
    assert types(result.events)[-2:] == ["session.result", "vendor.progress"]
    (accounting,) = datas(result.events, "session.result")
    assert accounting["usage"] == {"input_tokens": 30, "output_tokens": 8, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 6}
    assert result.diagnostics == ["2 non-JSON text line(s) skipped (first at line 4)"]


@pytest.mark.uas("T-UAS-036")
def test_error_subtype_or_is_error_maps_to_error_status() -> None:
    for record in (
        {"type": "result", "subtype": "error_max_turns", "num_turns": 10},
        {"type": "result", "subtype": "success", "is_error": True},
    ):
        (result,) = datas(parse(jsonl(record), "claude").events, "session.result")
        assert result["status"] == "error" and result["sourceType"] == "result"


@pytest.mark.uas("T-UAS-036", "T-UAS-030")
def test_thinking_tokens_map_to_reasoning_output_tokens_in_derived_usage() -> None:
    text = jsonl({"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": "x"}],
                  "usage": {"input_tokens": 1, "output_tokens": 5, "output_tokens_details": {"thinking_tokens": 2}}}})
    (result,) = datas(parse(text, "claude").events, "session.result")
    assert result["usage"] == {"input_tokens": 1, "output_tokens": 5, "reasoning_output_tokens": 2}


@pytest.mark.uas("T-UAS-036")
def test_direct_message_envelopes_use_the_same_block_mappings() -> None:
    text = jsonl(
        {"type": "message", "role": "assistant", "id": "msg-d", "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t", "name": "x", "input": 1}], "usage": {"input_tokens": 4, "output_tokens": 1}},
        {"type": "message", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r", "is_error": False}], "usage": {"input_tokens": 99}},
    )
    events = parse(text, "claude").events
    assert types(events) == ["assistant.message", "tool.execution_start", "tool.execution_complete", "session.result"]
    assert events[0]["data"]["messageId"] == "msg-d"
    assert events[-1]["data"]["usage"] == {"input_tokens": 4, "output_tokens": 1}  # only assistant usage counts


@pytest.mark.uas("T-UAS-036", "T-UAS-035", "T-UAS-015")
def test_retry_api_errors_and_denials_reach_the_result() -> None:
    events = parse(fixture_text("claude", "errors_retry_and_denials_without_result.jsonl"), "claude").events
    (result,) = datas(events, "session.result")
    assert result["errors"][0] == {"attempt": 1, "error_status": 529, "retry_delay_ms": 500}
    assert result["errors"][1] == {"type": "overloaded_error", "message": "Overloaded"}
    assert result["permissionDenials"] == [{"tool_name": "Bash", "tool_use_id": "t-d"}]
    # A permission denial does not become a tool completion.
    assert datas(events, "tool.execution_complete") == []


@pytest.mark.uas("T-UAS-036")
def test_subagent_lifecycle_progress_and_status_notices() -> None:
    events = parse(fixture_text("claude", "subagent_lifecycle_and_status.jsonl"), "claude").events
    assert types(events) == [
        "subagent.started", "tool.execution_start", "tool.execution_start", "tool.execution_complete",
        "tool.execution_update", "tool.execution_complete", "subagent.configured", "subagent.failed",
        "session.info", "session.info",
    ]
    assert datas(events, "subagent.configured") == [{"agentId": "agent-7", "model": "claude-small"}]
    failed = datas(events, "subagent.failed")[0]
    assert failed["cancelled"] is True and failed["usage"] == {"total_tokens": 9}
    update = datas(events, "tool.execution_update")[0]
    assert update["partial"] is True and "success" not in update
    assert datas(events, "session.info")[0] == {"estimatedTokens": 40, "sourceType": "thinking_tokens"}


@pytest.mark.uas("T-UAS-036", "T-UAS-007")
def test_nested_scopes_keep_their_caller_identity() -> None:
    events = parse(fixture_text("claude", "subagent_lifecycle_and_status.jsonl"), "claude").events
    starts = [e for e in events if e["type"] == "tool.execution_start"]
    assert [(s["data"]["toolName"], s.get("parent_tool_use_id")) for s in starts] == [("Read", "toolu-task"), ("Write", None)]


@pytest.mark.uas("T-UAS-036", "T-UAS-028")
def test_child_scope_usage_gets_its_own_partial_result() -> None:
    text = jsonl(
        {"type": "assistant", "message": {"id": "c", "content": [], "usage": {"input_tokens": 7, "output_tokens": 1}}, "parent_tool_use_id": "task-1"},
        {"type": "assistant", "message": {"id": "r", "content": [], "usage": {"input_tokens": 2, "output_tokens": 2}}, "parent_tool_use_id": None},
        {"type": "result", "subtype": "success", "usage": {"input_tokens": 2, "output_tokens": 2}},
    )
    results = [e for e in parse(text, "claude").events if e["type"] == "session.result"]
    assert len(results) == 2
    assert results[0]["data"]["sourceType"] == "result"
    assert results[1] == {"type": "session.result", "data": {"usage": {"input_tokens": 7, "output_tokens": 1}}, "parent_tool_use_id": "task-1"}


@pytest.mark.uas("T-UAS-036", "T-UAS-010")
def test_user_prompt_is_retained_in_the_trace_but_not_in_markdown() -> None:
    result = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude")
    assert any(d["content"] == "  Check the catalog.\n" for d in datas(result.events, "user.message"))
    assert "Check the catalog" not in result.markdown
    assert json.dumps(result.diagnostics).find("Check the catalog") == -1


@pytest.mark.uas("T-UAS-036", "T-UAS-021", "T-UAS-069")
def test_sdk_partial_stream_snapshot_interruption_and_streamed_refusal() -> None:
    events = parse(fixture_text("claude", "sdk_partial_stream_interrupted_and_refusal.jsonl"), "claude").events
    core = [e for e in events if e["type"] != "assistant.message_update"]
    assert types(core) == ["assistant.message", "assistant.refusal", "assistant.reasoning", "tool.execution_start", "session.result"]
    # The finalized snapshot is the one message: streamed text is not repeated.
    assert core[0]["data"] == {"content": "hello world\n", "messageId": "m-full", "model": "claude-example", "contentIndex": 0}
    # The streamed refusal marker emitted one refusal; the snapshot merged onto it.
    assert core[1]["data"] == {"reason": "refusal", "content": "I can't help.", "policyCategory": "cyber", "messageId": "m-refused",
                               "model": "claude-example", "explanation": "Policy."}
    # The interrupted stream keeps its observed thinking and argument text, marked partial.
    assert core[2]["data"]["content"] == "plan " and core[2]["data"]["partial"] is True
    assert core[3]["data"]["toolCallId"] == "toolu-cut" and core[3]["data"]["argumentsText"] == '{"command": "ls'
    assert "input" not in core[3]["data"]
    # They sit right after the last stream record of that message.
    assert events[-2]["type"] == "tool.execution_start" and events[-3]["type"] == "assistant.reasoning"
    updates = [e for e in events if e["type"] == "assistant.message_update"]
    assert len(updates) == 13 and all(u["data"]["sourceType"] for u in updates)


@pytest.mark.uas("T-UAS-036", "T-UAS-015")
def test_terminal_denial_snapshot_reconciles_with_observed_denials() -> None:
    text = jsonl(
        {"type": "system", "subtype": "permission_denied", "tool_name": "Write", "tool_use_id": "w1"},
        {"type": "system", "subtype": "permission_denied", "tool_name": "Bash", "tool_use_id": "b1"},
        {"type": "result", "subtype": "success", "permission_denials": [{"tool_name": "Write", "tool_use_id": "w1", "tool_input": {}}]},
    )
    (result,) = datas(parse(text, "claude").events, "session.result")
    assert result["permissionDenials"] == [
        {"tool_name": "Write", "tool_use_id": "w1", "tool_input": {}},
        {"tool_name": "Bash", "tool_use_id": "b1"},
    ]


@pytest.mark.uas("T-UAS-036", "T-UAS-041")
def test_stream_only_claude_log_is_detected_as_claude() -> None:
    text = jsonl({"type": "stream_event", "event": {"type": "message_start", "message": {"id": "m"}}})
    from bitexact.sessions import detect_engine

    assert detect_engine(text) == "claude"


@pytest.mark.uas("T-UAS-036")
def test_lifecycle_notification_falls_back_to_launch_context_but_explicit_values_win() -> None:
    text = jsonl(
        {"type": "system", "subtype": "task_started", "task_id": "a1", "task_type": "local_agent", "tool_use_id": "launch-1", "agent_type": "explorer", "parent_tool_use_id": "outer"},
        {"type": "system", "subtype": "task_notification", "task_id": "a1", "status": "completed"},
        {"type": "system", "subtype": "task_started", "task_id": "a2", "task_type": "local_agent", "tool_use_id": "launch-2", "parent_tool_use_id": "outer"},
        {"type": "system", "subtype": "task_notification", "task_id": "a2", "status": "failed", "tool_use_id": None, "parent_tool_use_id": None},
    )
    events = parse(text, "claude").events
    completed = [e for e in events if e["type"] == "subagent.completed"][0]
    assert completed["data"]["tool_use_id"] == "launch-1" and completed["data"]["agent_type"] == "explorer"
    assert completed["parent_tool_use_id"] == "outer"
    failed = [e for e in events if e["type"] == "subagent.failed"][0]
    assert failed["data"]["tool_use_id"] is None and failed["parent_tool_use_id"] is None


@pytest.mark.uas("T-UAS-036", "T-UAS-035")
def test_authentication_status_error_keeps_the_error_mapping() -> None:
    text = jsonl(
        {"type": "auth_status", "isAuthenticating": True, "output": ["Opening browser"]},
        {"type": "auth_status", "isAuthenticating": False, "error": "authentication_failed"},
    )
    events = parse(text, "claude").events
    assert types(events) == ["session.info", "session.error", "session.result"]
    assert events[-1]["data"]["errors"] == [{"isAuthenticating": False, "error": "authentication_failed", "sourceType": "auth_status"}]


@pytest.mark.uas("T-UAS-036")
def test_caller_inferred_from_unambiguous_launcher_and_cleared_by_changed_parent() -> None:
    events = parse(fixture_text("claude", "subagent_caller_inference_and_changed_parent.jsonl"), "claude").events
    lifecycle = [(e["type"], e["data"]["agentId"], e["data"].get("callerAgentId", "-"), e.get("parent_tool_use_id", "-"))
                 for e in events if e["type"].startswith("subagent.")]
    assert lifecycle == [
        # Launched from the root conversation: no caller agent to infer.
        ("subagent.started", "agent-A", "-", "-"),
        # Its launcher tool_use ran inside agent-A: the caller is inferred.
        ("subagent.started", "agent-B", "agent-A", "toolu-L1"),
        # Two launcher observations disagree on the caller: nothing inferred.
        ("subagent.started", "agent-C", "-", "-"),
        # A notification omitting context falls back to the stored caller and parent.
        ("subagent.completed", "agent-B", "agent-A", "toolu-L1"),
        # A changed parent invalidates the stored caller...
        ("subagent.completed", "agent-B", "-", "toolu-OTHER"),
        # ...unless the notification supplies it explicitly.
        ("subagent.completed", "agent-B", "agent-Q", "toolu-OTHER"),
    ]
