"""OpenCode, Goose and Cursor sample adapters (UAS 7.7-7.9, T-UAS-068; 9.3 rows)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from bitexact.sessions.parsers.goose import iso_from_seconds
from uas_parser_helpers import datas, fixture_text, jsonl, types


@pytest.mark.uas("T-UAS-019", "T-UAS-007")
def test_opencode_session() -> None:
    result = parse(fixture_text("opencode", "run_format_json_session.jsonl"), "opencode")
    events = result.events
    init = events[0]
    assert init == {"type": "session.init", "data": {"sourceEngine": "opencode", "sessionId": "ses_1"}, "timestamp": 1759363200000, "sessionID": "ses_1"}
    assert datas(events, "assistant.message")[0]["content"] == "  Hello\n"
    call1 = [e for e in events if e["data"].get("toolCallId") == "call_1"]
    assert types(call1) == ["tool.execution_start", "tool.execution_complete"]  # duplicate part suppressed
    assert all(e["timestamp"] == 1759363200200 for e in call1)  # ms timestamps unchanged on both
    assert call1[1]["data"]["durationMs"] == 50 and call1[1]["data"]["success"] is True
    call2 = [e["data"] for e in events if e["type"] == "tool.execution_complete" and e["data"]["toolCallId"] == "call_2"][0]
    assert call2["success"] is False and call2["error"] == "denied" and "durationMs" not in call2
    assert result.diagnostics == ["line 15: unrecognized record (type 'text') skipped"]


@pytest.mark.uas("T-UAS-032", "T-UAS-034")
def test_opencode_accounting_once() -> None:
    result = parse(fixture_text("opencode", "run_format_json_session.jsonl"), "opencode")
    final = datas(result.events, "session.result")[-1]
    assert final["numTurns"] == 2 and final["totalCostUsd"] == 0.5
    assert final["usage"] == {"input_tokens": 10, "output_tokens": 7, "reasoning_output_tokens": 1,
                              "cache_creation_input_tokens": 1, "cache_read_input_tokens": 4, "total_tokens": 20,
                              "input_tokens_include_cache": False}
    assert final["errors"] == [{"name": "APIError", "data": {"message": "bad gateway"}}]
    assert result.max_turns_hit is True and result.mcp_failures == ["github", "docs"]


@pytest.mark.uas("T-UAS-068")
def test_goose_stream() -> None:
    result = parse(fixture_text("goose", "stream_json_session.jsonl"), "goose")
    events = result.events
    assert types(events) == [
        "mcp.event", "session.init", "user.message", "assistant.reasoning", "assistant.message",
        "tool.execution_start", "tool.execution_complete", "tool.execution_complete", "assistant.message", "session.result",
    ]
    assert datas(events, "mcp.event") == [{"event": "extension_start_failure", "serverName": "github", "status": "error"}]
    assert result.mcp_failures == ["github"]
    assert datas(events, "session.init") == [{"sourceEngine": "goose", "model": "goose-model"}]
    text = datas(events, "assistant.message")[0]
    # The message envelope the mapping does not read survives in the data (UAS 7.8).
    assert text == {"content": "hello world\n", "messageId": "a-1", "created": 1759363201,
                    "metadata": {"model": "goose-model"}}
    assert events[4]["timestamp"] == "2025-10-02T00:00:01Z"


@pytest.mark.uas("T-UAS-068", "T-UAS-033", "T-UAS-031")
def test_goose_completion_snapshot_and_warnings() -> None:
    result = parse(fixture_text("goose", "stream_json_session.jsonl"), "goose")
    final = result.events[-1]["data"]
    assert final["numTurns"] == 2 and final["totalCostUsd"] == 0
    assert final["usage"] == {"input_tokens": 30, "output_tokens": 0, "total_tokens": 30, "cache_read_input_tokens": 6, "input_tokens_include_cache": True}
    assert "goose complete: invalid cache_write_tokens value omitted" in result.diagnostics
    assert "goose toolRequest without a string id and successful toolCall: no execution recorded" in result.diagnostics
    assert not any(d.get("toolCallId") == "g-bad" for d in datas(result.events, "tool.execution_start"))


@pytest.mark.uas("T-UAS-068")
def test_goose_error_only_session_and_max_turns() -> None:
    result = parse(fixture_text("goose", "error_only_max_turns.jsonl"), "goose")
    assert result.max_turns_hit is True
    assert result.events == [
        {"type": "session.error", "data": {"message": "Reached maximum turns limit (10)", "code": "max_turns"}},
        {"type": "session.result", "data": {"errors": ["Reached maximum turns limit (10)"]}},
    ]


@pytest.mark.uas("T-UAS-068", "T-UAS-005")
def test_goose_partial_stream_invents_no_result_and_invalid_seconds_no_timestamp() -> None:
    text = jsonl({"type": "message", "message": {"id": "m", "role": "assistant", "created": "soon", "content": [{"type": "text", "text": "x"}]}})
    events = parse(text, "goose").events
    assert types(events) == ["session.init", "assistant.message"]
    assert all("timestamp" not in e for e in events)
    assert iso_from_seconds(-5) is None and iso_from_seconds(True) is None and iso_from_seconds(0) == "1970-01-01T00:00:00Z"


@pytest.mark.uas("T-UAS-014", "T-UAS-021")
def test_cursor_stream_json() -> None:
    events = parse(fixture_text("cursor", "stream_json_session.jsonl"), "cursor").events
    assert types(events) == [
        "session.init", "user.message", "assistant.reasoning", "assistant.message",
        "tool.execution_start", "tool.execution_complete", "tool.execution_update",
        "tool.execution_start", "tool.execution_complete", "tool.execution_start", "session.result",
    ]
    assert datas(events, "assistant.reasoning") == [{"content": "plan it"}]
    done = datas(events, "tool.execution_complete")
    assert done[0]["success"] is True and done[0]["output"] == {"content": "", "isEmpty": True, "totalLines": 0}
    assert done[1]["success"] is False and done[1]["error"] == {"message": "read-only"}
    assert datas(events, "session.result")[0]["durationMs"] == 0


@pytest.mark.uas("T-UAS-020", "T-UAS-005")
def test_cursor_historical_text_is_only_the_exact_final_answer() -> None:
    result = parse(fixture_text("cursor", "historical_text_final_answer.txt"), "cursor")
    assert result.events == [{"type": "assistant.message", "data": {"content": "Final answer line one.\n\n  Indented line two.\n\n"}}]
    assert parse("cursor-agent version 1\n\n", "cursor").events == []


@pytest.mark.uas("T-UAS-069", "T-UAS-011")
def test_cursor_structured_refusal_is_not_an_answer() -> None:
    text = jsonl({"type": "assistant", "message": {"id": "r", "role": "assistant", "content": [{"type": "text", "text": "I can't."}], "stop_reason": "refusal"}, "session_id": "c"})
    events = parse(text, "cursor").events
    assert types(events) == ["assistant.refusal"]
    assert events[0]["data"]["content"] == "I can't."
