"""Gemini and Pi adapters (UAS 7.4/7.5, T-UAS-039/040; 9.3 Gemini and Pi rows)."""

from __future__ import annotations

import json

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import datas, fixture_text, jsonl, types


@pytest.mark.uas("T-UAS-039")
def test_gemini_flat_session() -> None:
    result = parse(fixture_text("gemini", "stream_json_session_with_deltas_and_stats.jsonl"), "gemini")
    events = result.events
    assert datas(events, "session.init") == [{"sourceEngine": "gemini", "sessionId": "gem-1", "model": "gemini-example"}]
    assert datas(events, "user.message") == [{"content": "Check it.\n"}]
    assert [d["content"] for d in datas(events, "assistant.message")] == ["hello world\n", "Different envelope"]
    starts = datas(events, "tool.execution_start")
    assert starts[0] == {"toolCallId": "read_file-1", "toolName": "read_file", "input": {"path": "a"}}
    assert result.diagnostics == ["line 14: malformed or truncated JSON record skipped", "1 non-JSON text line(s) skipped (first at line 5)"]


@pytest.mark.uas("T-UAS-039", "T-UAS-035")
def test_gemini_warning_is_not_a_session_failure() -> None:
    events = parse(fixture_text("gemini", "stream_json_session_with_deltas_and_stats.jsonl"), "gemini").events
    assert [d["severity"] for d in datas(events, "session.error")] == ["warning", "error"]
    assert datas(events, "session.result")[0]["errors"] == [{"severity": "error", "message": "quota exceeded"}]


@pytest.mark.uas("T-UAS-039")
def test_gemini_failed_status_without_error_payload_is_kept_as_diagnostic() -> None:
    (result,) = datas(parse(jsonl({"type": "result", "status": "error", "stats": {"input_tokens": 0, "output_tokens": 0, "duration_ms": 12}}), "gemini").events, "session.result")
    assert result["status"] == "error" and result["errors"] == [{"status": "error"}]
    assert result["usage"]["input_tokens"] == 0 and result["durationMs"] == 12


@pytest.mark.uas("T-UAS-040")
def test_pi_v3_stream() -> None:
    events = parse(fixture_text("pi", "v3_stream_two_turns_partial_and_errors.jsonl"), "pi").events
    assert events[0] == {"type": "session.init", "data": {"sourceEngine": "pi", "sessionId": "pi-sess-1", "version": 3, "cwd": "/workspace/x"}, "timestamp": "2026-10-02T00:00:00.000Z"}
    assert types(events)[1:12] == [
        "session.agent_start", "session.turn_start", "user.message", "assistant.reasoning", "assistant.message",
        "tool.execution_start", "tool.execution_update", "tool.execution_complete", "session.turn_end",
        "tool.execution_complete", "session.turn_start",
    ]
    (start,) = [d for d in datas(events, "tool.execution_start") if d["toolCallId"] == "pi-call-1"]
    assert start["input"] == {"command": "ls"}  # one start despite the block and tool_execution_start


@pytest.mark.uas("T-UAS-040", "T-UAS-032", "T-UAS-034")
def test_pi_accounting_and_errors() -> None:
    events = parse(fixture_text("pi", "v3_stream_two_turns_partial_and_errors.jsonl"), "pi").events
    errors = datas(events, "session.error")
    assert len(errors) == 1 and errors[0]["message"] == "provider overloaded"  # repeated snapshot, one diagnostic
    result = datas(events, "session.result")[-1]
    assert result["numTurns"] == 2
    assert result["usage"]["input_tokens"] == 30 and result["usage"]["cache_creation_input_tokens"] == 1
    assert "durationMs" not in result and "totalCostUsd" not in result
    assert result["errors"] == [errors[0]]
    assert "result" not in types(events)


@pytest.mark.uas("T-UAS-040")
def test_pi_flat_jsonl() -> None:
    events = parse(fixture_text("pi", "flat_jsonl_session.jsonl"), "pi").events
    assert types(events) == ["session.init", "assistant.message", "tool.execution_start", "tool.execution_complete", "session.result"]
    assert events[1]["data"] == {"content": "hello world\n", "delta": True}
    result = events[-1]["data"]
    assert result["numTurns"] == 1 and result["durationMs"] == 900
    assert result["usage"] == {"input_tokens": 12, "output_tokens": 4}
    assert result["stats"]["models"] == {"pi-model": 1}


@pytest.mark.uas("T-UAS-040")
def test_pi_historical_observations_are_normalized_without_replaying_usage() -> None:
    events = parse(fixture_text("pi", "historical_pi_observations.jsonl"), "pi").events
    assert types(events) == [
        "session.info", "tool.execution_update", "assistant.message_update", "tool.execution_update",
        "session.error", "session.agent_start", "pi.unknown_future",
    ]
    assert events[0]["data"] == {"sourceType": "message_snapshot", "role": "assistant", "model": "pi-model", "usageSnapshot": {"input": 1, "output": 1}}
    assert [e["id"] for e in events] == ["h1", "h2", "h3", "h4", "h5", "h6", "h7"]
    assert datas(events, "session.result") == []


@pytest.mark.uas("T-UAS-040")
def test_pi_orphan_argument_delta_is_a_partial_update() -> None:
    message = {"role": "assistant", "content": [], "timestamp": 9}
    text = jsonl({"type": "message_update", "message": message, "assistantMessageEvent": {"type": "toolcall_delta", "contentIndex": 0, "delta": "{\"a\":"}})
    events = parse(text, "pi").events
    assert types(events) == ["tool.execution_update"]
    assert events[0]["data"]["argumentsText"] == "{\"a\":" and events[0]["data"]["partial"] is True


@pytest.mark.uas("T-UAS-040", "T-UAS-035")
def test_pi_error_without_header_or_content() -> None:
    text = jsonl({"type": "message_end", "message": {"role": "assistant", "content": [], "timestamp": 1, "errorMessage": "401 unauthorized"}})
    events = parse(text, "pi").events
    assert types(events) == ["session.error", "session.result"]
    assert events[-1]["data"]["errors"][0]["message"] == "401 unauthorized"


@pytest.mark.uas("T-UAS-039", "T-UAS-021")
def test_gemini_legacy_message_id_snapshot_and_anonymous_repeats() -> None:
    text = jsonl(
        {"type": "message", "role": "assistant", "content": "Hi", "delta": True, "message": {"id": "L1"}},
        {"type": "message", "role": "assistant", "content": "Hi!", "message": {"id": "L1"}},
        {"type": "message", "role": "assistant", "content": "same", "id": "ev-1"},
        {"type": "message", "role": "assistant", "content": "same", "id": "ev-1"},
    )
    contents = [d["content"] for d in datas(parse(text, "gemini").events, "assistant.message")]
    # legacy message.id snapshot adds only its suffix; a repeated event id is not snapshot coverage
    assert contents == ["Hi", "!", "same", "same"]


@pytest.mark.uas("T-UAS-039", "T-UAS-021")
def test_gemini_legacy_content_array_snapshots() -> None:
    def snap(*blocks: dict) -> dict:
        return {"type": "message", "role": "assistant", "message_id": "A", "content": list(blocks)}

    think = {"type": "thinking", "thinking": "plan"}
    text = jsonl(
        snap(think, {"type": "text", "text": "Hel"}),
        snap(think, {"type": "text", "text": "Hel"}),                       # unchanged
        snap(think, {"type": "text", "text": "Hello"}, {"type": "text", "text": "!"}),  # append-only
        {"type": "tool_use", "tool_name": "ls", "tool_id": "t", "parameters": {}},
        snap({"type": "text", "text": "Rewritten"}, think),                 # reorder + rewrite
    )
    events = parse(text, "gemini").events
    assert [(e["type"], e["data"].get("content")) for e in events] == [
        ("tool.execution_start", None),
        ("assistant.message", "Rewritten"),
        ("assistant.reasoning", "plan"),
    ]
    assert len(events[1]["data"]["observations"]) == 3
    before_rewrite = parse(jsonl(*[json.loads(line) for line in text.splitlines()[:3]]), "gemini").events
    assert [(e["type"], e["data"]["content"]) for e in before_rewrite] == [
        ("assistant.reasoning", "plan"), ("assistant.message", "Hel"), ("assistant.message", "lo"), ("assistant.message", "!"),
    ]
    emptied = parse(jsonl(snap({"type": "text", "text": "x"}), snap()), "gemini").events
    assert [e["data"]["content"] for e in emptied] == [[]]


@pytest.mark.uas("T-UAS-040", "T-UAS-032")
def test_pi_auxiliary_inference_usage_counts_once_and_is_totalled_separately() -> None:
    events = parse(fixture_text("pi", "v3_auxiliary_compaction_usage.jsonl"), "pi").events
    result = [e["data"] for e in events if e["type"] == "session.result"]
    assert len(result) == 1
    # The repeated compaction report (same id) counts once; reported zeros stay zero.
    assert result[0]["auxiliaryUsage"] == {
        "input_tokens": 40, "output_tokens": 6, "reasoning_output_tokens": 0,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
    }
    # The session total is the finalized turn plus the auxiliary call once.
    assert result[0]["usage"] == {
        "input_tokens": 50, "output_tokens": 9, "reasoning_output_tokens": 0,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2,
    }
    assert result[0]["numTurns"] == 1
    # The lifecycle observation keeps its supplied payload.
    assert [e["data"]["usage"]["input"] for e in events if e["type"] == "session.auto_compaction_end"] == [40, 40]
