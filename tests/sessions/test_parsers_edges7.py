"""The session log parsers: regression tests of review 7, each for a bug it found.

Contract: the Unified Agent Session Specification (sections 5, 6, 7) and
docs/sessions-parsers.md.
"""

from __future__ import annotations

import json
from typing import Any

from bitexact.sessions import convert_events_to_legacy, convert_legacy_entries_to_events, parse


def _jsonl(*records: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


PI_SESSION = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z"}


# -- Pi (7.5) ---------------------------------------------------------------------------------------


def test_pi_tool_execution_update_and_end_keep_their_source_metadata() -> None:
    """T-UAS-007/027: a v3 tool_execution_update/_end record's timestamp and native fields were dropped
    (only the start kept them)."""
    log = _jsonl(
        PI_SESSION,
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {"cmd": "ls"}, "timestamp": "T1"},
        {"type": "tool_execution_update", "toolCallId": "c1", "toolName": "bash", "partialResult": {"x": 1},
         "timestamp": "T2", "seq": 7},
        {"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash", "result": {"content": []},
         "isError": False, "timestamp": "T3", "seq": 8},
    )
    events = parse(log, "pi").events
    update = next(e for e in events if e["type"] == "tool.execution_update")
    end = next(e for e in events if e["type"] == "tool.execution_complete")
    assert update.get("timestamp") == "T2" and update.get("seq") == 7, update
    assert end.get("timestamp") == "T3" and end.get("seq") == 8, end
    assert end["data"]["success"] is True and end["data"]["result"] == {"content": []}



def test_pi_flat_tool_result_with_output_and_content_keeps_both() -> None:
    """T-UAS-013/027: a flat Pi tool_result supplying both `output` and `content` lost its `output`
    (`content` was written over it)."""
    log = _jsonl({"type": "init", "model": "m", "session_id": "s"},
                 {"type": "tool_use", "id": "c1", "name": "bash", "input": {"cmd": "ls"}},
                 {"type": "tool_result", "id": "c1", "output": "a.txt", "content": [{"type": "text", "text": "a.txt"}],
                  "is_error": False})
    done = next(e["data"] for e in parse(log, "pi").events if e["type"] == "tool.execution_complete")
    assert done["output"] == "a.txt" and done["content"] == [{"type": "text", "text": "a.txt"}], done

# -- Reversible legacy interchange (T-UAS-029) -----------------------------------------------------


def test_round_trip_of_a_status_only_result_gains_no_subtype() -> None:
    """docs/sessions-parsers.md: 'a status-only result gains no `subtype`' in the round trip; it came back
    with `subtype` equal to its status (the legacy result's subtype was also copied as a native field)."""
    events = [{"type": "session.result",
               "data": {"numTurns": 2, "status": "completed", "sourceType": "turn.completed"}}]
    back = convert_legacy_entries_to_events(convert_events_to_legacy(events), "codex")
    assert back == events


def test_round_trip_of_a_derived_result_gains_no_source_type() -> None:
    """4.6/T-UAS-028/029: a derived partial result (observed usage, no terminal record) has no `sourceType`;
    the round trip gave it `sourceType: "result"`, as if a terminal result record had been observed."""
    log = _jsonl({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}],
                                                   "usage": {"input_tokens": 5, "output_tokens": 1}}})
    events = parse(log, "claude").events
    assert events[-1] == {"type": "session.result", "data": {"usage": {"input_tokens": 5, "output_tokens": 1}}}
    back = convert_legacy_entries_to_events(convert_events_to_legacy(events), "claude")
    assert back == events


# -- Copilot (7.2) ----------------------------------------------------------------------------------


def test_truncated_copilot_debug_block_does_not_swallow_the_records_after_it() -> None:
    """T-UAS-016: a debug block cut off mid-record (no closing brace) took every following line into
    its body up to the end of the log, losing the native events after it; its lines carry the
    `<timestamp> [DEBUG] ` prefix (docs/sessions-parsers.md), an unprefixed line is not part of it."""
    text = "".join(line + "\n" for line in (
        '2026-01-01T00:00:00Z [DEBUG] data: {"choices": [{"message": {"content": "first"}}]}',
        '2026-01-01T00:00:01Z [DEBUG] data: {"choices": [{"message": {"content": "trunc',
        '{"type": "session.info", "data": {"x": 1}}',
        '{"type": "assistant.message", "data": {"content": "after"}}',
    ))
    result = parse(text, "copilot")
    assert [e["type"] for e in result.events] == ["assistant.message", "session.info", "assistant.message"]
    assert result.events[-1]["data"] == {"content": "after"}
    assert "line 2: truncated debug response block skipped" in result.diagnostics


# -- Claude SDK partial messages (7.1, 5.3) ---------------------------------------------------------


def _claude_stream(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stream_event", "event": event, "session_id": "s", "parent_tool_use_id": None}


def test_claude_single_block_snapshot_does_not_discard_the_other_streamed_blocks() -> None:
    """7.1: 'SDK assistant snapshots can contain a single finalized block'; T-UAS-021: observed deltas
    stay available without a final snapshot. The snapshot of the text block marked the whole message
    finalized, so the tool call streamed after it (log cut off before its own snapshot) was lost."""
    log = _jsonl(
        {"type": "system", "subtype": "init", "session_id": "s", "model": "m"},
        _claude_stream({"type": "message_start", "message": {"id": "msg1", "model": "m", "role": "assistant", "content": []}}),
        _claude_stream({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        _claude_stream({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me look."}}),
        _claude_stream({"type": "content_block_stop", "index": 0}),
        {"type": "assistant", "message": {"id": "msg1", "model": "m", "role": "assistant",
                                          "content": [{"type": "text", "text": "Let me look."}]},
         "session_id": "s", "parent_tool_use_id": None},
        _claude_stream({"type": "content_block_start", "index": 1,
                        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}}),
        _claude_stream({"type": "content_block_delta", "index": 1,
                        "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ls\"}"}}),
    )
    events = parse(log, "claude").events
    messages = [e["data"]["content"] for e in events if e["type"] == "assistant.message"]
    assert messages == ["Let me look."]  # the snapshot's text, once
    starts = [e["data"] for e in events if e["type"] == "tool.execution_start"]
    assert len(starts) == 1, events
    assert starts[0]["toolCallId"] == "toolu_1" and starts[0]["input"] == {"command": "ls"}
    assert starts[0]["partial"] is True


# -- Tool outcomes (T-UAS-013/014) ------------------------------------------------------------------


def test_gemini_and_codex_empty_or_false_error_value_is_not_a_tool_failure() -> None:
    """T-UAS-013: false, 0, null and "" MUST NOT become an inferred error; T-UAS-014 names the explicit
    failure signals. A successful Gemini tool_result / completed Codex item with `error: ""` or
    `error: false` was mapped to `success: false`."""
    for value in ("", False):
        gemini = parse(_jsonl({"type": "tool_use", "tool_name": "ls", "tool_id": "t1", "parameters": {}},
                              {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "ok",
                               "error": value}), "gemini").events
        done = next(e["data"] for e in gemini if e["type"] == "tool.execution_complete")
        assert done["success"] is True and done["error"] == value, done
        codex = parse(_jsonl({"type": "item.completed", "item": {"id": "i1", "type": "mcp_tool_call", "server": "s",
                                                                 "tool": "t", "arguments": {}, "result": {"x": 1},
                                                                 "error": value, "status": "completed"}}),
                      "codex").events
        done = next(e["data"] for e in codex if e["type"] == "tool.execution_complete")
        assert done["success"] is True and done["error"] == value, done
