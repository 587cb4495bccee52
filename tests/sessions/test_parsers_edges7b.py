"""Regression tests of the seventh review, second parser pass (OpenCode, Goose, Cursor, Gemini, Codex,
Copilot, detection): each test names the bug it pins."""

from __future__ import annotations

import json
from typing import Any

from bitexact.sessions import parse


def _jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


# -- Copilot debug blocks (7.2) ---------------------------------------------------------------------


def test_copilot_debug_block_with_unprefixed_continuation_lines_is_read() -> None:
    """7.2 framed `[DEBUG] data:` responses: the CLI logs `data:` and then `JSON.stringify(data, null, 2)`
    as one message, its `<timestamp> [DEBUG] ` prefix on the first line only (@github/copilot 0.0.340's
    file logger); such a block was cut at its first unprefixed line, so a real debug log yielded nothing."""
    response = {"id": "r1", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call-1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]}}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 2}}
    pretty = json.dumps(response, indent=2).split("\n")
    text = "".join(line + "\n" for line in (
        "2026-01-01T00:00:00.000Z [INFO] Starting Copilot CLI",
        "2026-01-01T00:00:01.000Z [DEBUG] response (Request-ID abc):",
        "2026-01-01T00:00:01.000Z [DEBUG] data:",
        "2026-01-01T00:00:01.000Z [DEBUG] " + pretty[0],
        *pretty[1:],
        "2026-01-01T00:00:02.000Z [DEBUG] data:",
        "2026-01-01T00:00:02.000Z [DEBUG] {",
        '  "choices": [',
        "2026-01-01T00:00:03.000Z [INFO] cut off",
        '{"type": "session.info", "data": {"x": 1}}',
    ))
    result = parse(text)
    assert result.engine == "copilot"
    assert [e["type"] for e in result.events] == [
        "assistant.message", "tool.execution_start", "session.info", "session.result"]
    assert result.events[0]["data"]["content"] == "Let me look."
    assert result.events[1]["data"]["toolCallId"] == "call-1" and result.events[1]["data"]["input"] == {"command": "ls"}
    assert result.events[-1]["data"]["usage"] == {"input_tokens": 7, "output_tokens": 2}
    second_block = text.split("\n").index("2026-01-01T00:00:02.000Z [DEBUG] data:") + 1
    assert f"line {second_block}: truncated debug response block skipped" in result.diagnostics


# -- Codex (7.3) ------------------------------------------------------------------------------------


def test_codex_unfinished_message_stays_where_it_was_observed() -> None:
    """T-UAS-019 (source order) and 5.3 (observed text of incomplete deltas stays available): the text of
    an agent message item that never completed was appended at the very end of the trace, after the
    command and the turn that followed it, as if the agent had said it last."""
    text = _jsonl(
        {"type": "thread.started", "thread_id": "t1"},
        {"type": "item.updated", "item": {"id": "m1", "type": "agent_message", "text": "Listing files."}},
        {"type": "item.completed", "item": {"id": "c1", "type": "command_execution", "command": "ls",
                                            "aggregated_output": "a\n", "exit_code": 0, "status": "completed"}},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 3}},
    )
    events = parse(text, "codex").events
    assert [e["type"] for e in events] == [
        "session.init", "assistant.message_update", "assistant.message", "tool.execution_start",
        "tool.execution_complete", "turn.completed", "session.result"]
    assert events[2]["data"] == {"content": "Listing files.", "itemId": "m1", "partial": True}


def _codex_run(thread: str, command: str) -> list[dict[str, Any]]:
    item = {"id": "item_0", "type": "command_execution", "command": command, "aggregated_output": "", "status": "in_progress"}
    done = {**item, "aggregated_output": "ok\n", "exit_code": 0, "status": "completed"}
    return [{"type": "thread.started", "thread_id": thread}, {"type": "item.started", "item": item},
            {"type": "item.completed", "item": done}, {"type": "turn.completed", "usage": {"input_tokens": 1}}]


def test_codex_second_run_in_one_log_keeps_its_tool_executions() -> None:
    """T-UAS-022 (pairing by the exact ID, never across scopes) and 7.3 ("observed thread identity scopes
    ... tools"): item IDs restart with each run (`item_0`, ...), and a later run's items were correlated
    with the earlier run's, so its executed command became a mere partial update."""
    events = parse(_jsonl(*_codex_run("t1", "ls"), *_codex_run("t2", "pwd")), "codex").events
    completions = [e["data"] for e in events if e["type"] == "tool.execution_complete"]
    assert [(c["command"], c["success"]) for c in completions] == [("ls", True), ("pwd", True)]
    assert [e["data"]["command"] for e in events if e["type"] == "tool.execution_start"] == ["ls", "pwd"]
    assert not any(e["type"] == "tool.execution_update" for e in events)


def test_codex_legacy_tool_lines_with_second_and_minute_durations_are_completions() -> None:
    """7.3 legacy "recognized tool/exec call and outcome lines": Codex prints durations of a second or more
    as `1.21s` or `1m 05s` (captured from codex-cli 0.20.0 `exec` against a local stub model), and only the
    `12ms` form was read, so every command or MCP call that took a second lost its completion and output."""
    text = "".join(line + "\n" for line in (
        "[2026-11-30T13:41:21] OpenAI Codex v0.20.0 (research preview)",
        "--------",
        "workdir: /work",
        "model: gpt-4o",
        "--------",
        "[2026-11-30T13:41:21] exec bash -lc 'sleep 1.2; echo hi' in /work",
        "[2026-11-30T13:41:22] bash -lc 'sleep 1.2; echo hi' succeeded in 1.21s:",
        "hi",
        "[2026-11-30T13:41:22] exec bash -lc 'make' in /work",
        "[2026-11-30T13:42:27] bash -lc 'make' exited 2 in 1m 05s:",
        "make: *** No targets.  Stop.",
        "[2026-11-30T13:42:28] tool github.search_issues({\"query\":\"bug\"})",
        "[2026-11-30T13:42:30] github.search_issues({\"query\":\"bug\"}) success in 2.50s:",
        "{\"total_count\": 0}",
        "[2026-11-30T13:42:31] codex",
        "All done.",
    ))
    completions = [e["data"] for e in parse(text).events if e["type"] == "tool.execution_complete"]
    assert [(c["toolName"], c["success"], c["durationMs"], c["output"]) for c in completions] == [
        ("exec", True, 1210, "hi"), ("exec", False, 65000, "make: *** No targets.  Stop."),
        ("search_issues", True, 2500, "{\"total_count\": 0}")]


# -- Goose (7.8) ------------------------------------------------------------------------------------


def _goose_message(created: int, metadata: dict[str, Any], text: str) -> dict[str, Any]:
    return {"type": "message", "message": {"id": "a1", "role": "assistant", "created": created,
                                           "content": [{"type": "text", "text": text}], "metadata": metadata}}


def test_goose_chunks_with_different_envelopes_are_not_joined_into_the_first() -> None:
    """docs ("joined ... while adjacent and within one envelope"), T-UAS-021 (joining retains all supplied
    metadata), 7.8 (the parser retains the original envelope): adjacent chunks of one message were joined
    whatever their envelope, so a later chunk's `created` seconds, derived timestamp and metadata were lost."""
    text = _jsonl(
        _goose_message(1735689600, {"userVisible": True, "agentVisible": True}, "seen "),
        _goose_message(1735689601, {"userVisible": True, "agentVisible": False}, "hidden"),
        _goose_message(1735689601, {"userVisible": True, "agentVisible": False}, " too"),
    )
    messages = [e for e in parse(text, "goose").events if e["type"] == "assistant.message"]
    assert [(m["data"]["content"], m["data"]["created"], m["timestamp"], m["data"]["metadata"]["agentVisible"])
            for m in messages] == [("seen ", 1735689600, "2025-01-01T00:00:00Z", True),
                                   ("hidden too", 1735689601, "2025-01-01T00:00:01Z", False)]


def test_goose_content_block_fields_survive() -> None:
    """T-UAS-027 and docs ("payload fields the mapping does not know stay in data as native additions"): a
    Goose thinking block's `signature` and a text block's `annotations` were dropped."""
    text = _jsonl({"type": "message", "message": {"id": "a1", "role": "assistant", "created": 1735689600, "content": [
        {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
        {"type": "text", "text": "done", "annotations": {"audience": ["user"]}}]}})
    events = parse(text, "goose").events
    assert events[1]["type"] == "assistant.reasoning" and events[1]["data"]["signature"] == "sig-1"
    assert events[2]["type"] == "assistant.message" and events[2]["data"]["annotations"] == {"audience": ["user"]}


# -- OpenCode (7.7) ---------------------------------------------------------------------------------


def test_opencode_part_fields_the_mapping_does_not_read_survive() -> None:
    """T-UAS-027 and docs ("payload fields the mapping does not know stay in data as native additions"):
    an OpenCode part's other fields were dropped, e.g. `synthetic` (text OpenCode wrote itself, not the
    model), the part's `time`, a tool state's native start/end `time` and a step's `snapshot`."""
    text = _jsonl(
        {"type": "text", "timestamp": 1, "sessionID": "s", "part": {
            "id": "p1", "messageID": "m", "sessionID": "s", "type": "text", "text": "note", "synthetic": True,
            "time": {"start": 1, "end": 2}}},
        {"type": "tool_use", "timestamp": 2, "sessionID": "s", "part": {
            "id": "p2", "messageID": "m", "sessionID": "s", "type": "tool", "callID": "c", "tool": "bash",
            "metadata": {"k": 1}, "state": {"status": "completed", "input": {}, "output": "o", "title": "t",
                                            "time": {"start": 5, "end": 9}}}},
        {"type": "step_start", "timestamp": 3, "sessionID": "s", "part": {
            "id": "p3", "messageID": "m", "sessionID": "s", "type": "step-start", "snapshot": "abc"}},
    )
    events = parse(text, "opencode").events
    assert events[1]["data"] == {"content": "note", "partId": "p1", "messageId": "m", "synthetic": True,
                                 "time": {"start": 1, "end": 2}}
    assert events[2]["data"]["metadata"] == {"k": 1}
    assert events[3]["data"]["time"] == {"start": 5, "end": 9} and events[3]["data"]["durationMs"] == 4
    assert events[4]["data"] == {"sourceType": "step_start", "partId": "p3", "messageId": "m", "snapshot": "abc"}
