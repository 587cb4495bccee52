"""Codex adapter (UAS 7.3, T-UAS-038; 9.3 Codex row)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import datas, fixture_text, jsonl, types


@pytest.mark.uas("T-UAS-038")
def test_jsonl_lifecycle_in_observation_order() -> None:
    events = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    assert datas(events, "session.init") == [{"sourceEngine": "codex", "sessionId": "thread-1"}]
    item1 = [e["type"] for e in events if e["data"].get("toolCallId") == "item_1"]
    assert item1 == ["tool.execution_start", "tool.execution_update", "tool.execution_complete"]
    update = [e for e in events if e["type"] == "tool.execution_update"][0]["data"]
    assert update["output"] == "a\n" and update["partial"] is True and "success" not in update


@pytest.mark.uas("T-UAS-038")
def test_item_ids_speaker_and_message_channels() -> None:
    events = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    assert datas(events, "assistant.message_update")[0] == {"itemId": "item_0", "itemType": "agent_message", "sourceType": "item.started"}
    assert datas(events, "assistant.reasoning") == [{"content": "**Plan** it ", "itemId": "item_0"}]
    assert datas(events, "assistant.message") == [{"content": "Done with turn one.\n", "itemId": "item_6"}]
    assert datas(events, "session.info")[0] == {"sourceType": "todo_list", "content": [{"text": "step", "completed": False}], "itemId": "item_5"}


@pytest.mark.uas("T-UAS-038", "T-UAS-035")
def test_session_errors_are_separate_from_tool_failures() -> None:
    events = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    result = datas(events, "session.result")[-1]
    assert result["errors"] == ["stream disconnected; retrying", "reconnecting 1/5", {"message": "usage limit reached"}]
    assert result["status"] == "failed" and result["sourceType"] == "turn.failed"
    assert not any("rate limited" in str(e) for e in result["errors"])  # the MCP tool failure stays on the tool


@pytest.mark.uas("T-UAS-038", "T-UAS-023")
def test_unfinished_message_item_keeps_partial_text() -> None:
    text = jsonl({"type": "item.updated", "item": {"id": "m", "type": "agent_message", "text": "half"}})
    events = parse(text, "codex").events
    assert types(events) == ["assistant.message_update", "assistant.message"]
    assert events[-1]["data"] == {"content": "half", "itemId": "m", "partial": True}


@pytest.mark.uas("T-UAS-038")
def test_repeated_completion_snapshot_is_an_update() -> None:
    item = {"id": "x", "type": "mcp_tool_call", "server": "s", "tool": "t", "arguments": {}, "result": {"ok": True}, "status": "completed"}
    events = parse(jsonl({"type": "item.completed", "item": item}, {"type": "item.completed", "item": item}), "codex").events
    assert types(events) == ["tool.execution_start", "tool.execution_complete", "tool.execution_update"]
    assert events[1]["data"]["success"] is True and events[1]["data"]["output"] == {"ok": True}


@pytest.mark.uas("T-UAS-038")
def test_unknown_items_remain_extensions() -> None:
    events = parse(jsonl({"type": "item.completed", "item": {"id": "z", "type": "future_thing", "v": 0}}), "codex").events
    assert events == [{"type": "item.completed", "data": {"item": {"id": "z", "type": "future_thing", "v": 0}}}]


@pytest.mark.uas("T-UAS-038", "T-UAS-020")
def test_legacy_text_layout() -> None:
    events = parse(fixture_text("codex", "legacy_text_layout.log"), "codex").events
    assert types(events) == [
        "session.init", "assistant.reasoning",
        "tool.execution_start", "tool.execution_complete", "tool.execution_start", "tool.execution_complete",
        "tool.execution_start", "tool.execution_complete", "tool.execution_start",
        "session.error", "assistant.message", "session.result",
    ]
    assert datas(events, "session.init")[0] == {"sourceEngine": "codex", "model": "gpt-example", "cwd": "/workspace/x"}
    assert datas(events, "assistant.reasoning")[0]["content"] == "\n  **Planning** the check"
    done = datas(events, "tool.execution_complete")
    assert [(d["success"], d.get("exitCode")) for d in done] == [(True, 0), (False, 1), (True, None)]
    assert done[0]["output"] == "README.md\nsrc" and done[2]["mcpServerName"] == "github"
    assert datas(events, "assistant.message")[0]["content"] == "The answer.  "
    result = datas(events, "session.result")[0]
    assert result["usage"] == {"total_tokens": 1234} and "numTurns" not in result
    assert result["errors"] == ["stream error: connection reset; retrying 1/5"]


@pytest.mark.uas("T-UAS-038", "T-UAS-017")
def test_arbitrary_text_does_not_establish_a_codex_session() -> None:
    result = parse("model: gpt-x\nworkdir: /tmp\nsome prose\n", "codex")
    assert result.events == [] and result.diagnostics[-1].startswith("unrecognized format")


@pytest.mark.uas("T-UAS-038", "T-UAS-022")
def test_collaboration_items_are_standard_tool_observations_with_thread_identities() -> None:
    events = parse(fixture_text("codex", "jsonl_collab_tool_calls.jsonl"), "codex").events
    tools = [e["data"] for e in events if e["type"].startswith("tool.")]
    assert [(e["type"], e["data"]["toolName"]) for e in events if e["type"].startswith("tool.")] == [
        ("tool.execution_start", "spawn_agent"), ("tool.execution_complete", "spawn_agent"),
        ("tool.execution_start", "wait"), ("tool.execution_complete", "wait"),
    ]
    # The native collaboration tool names the call; the prompt is its input.
    assert tools[0] == {"toolCallId": "item_1", "toolName": "spawn_agent", "itemType": "collab_tool_call",
                        "input": {"prompt": "Review the docs"}, "senderThreadId": "th-main", "receiverThreadIds": []}
    # The completion carries the receiver learned late and the agent states as output.
    assert tools[1]["receiverThreadIds"] == ["th-child"]
    assert tools[1]["output"] == {"th-child": {"status": "running", "message": None}}
    assert tools[1]["success"] is True
    # A failed collaboration call is an explicit failure; a supplied null prompt stays null.
    assert tools[2]["input"] == {"prompt": None}
    assert tools[3]["success"] is False and tools[3]["status"] == "failed"
    assert not any(e["type"] == "item.completed" for e in events)
