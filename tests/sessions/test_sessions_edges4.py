"""Session importer edges (the fourth review): each test is a bug it found, fixed.

Inputs are hand-made logs in each engine's documented shape (the parser
docstrings, docs/sessions-parsers.md and the UAS seed, section 7).
"""

from __future__ import annotations

import json
from typing import Any

from bitexact.recording import Recorder
from bitexact.sessions import parse
from bitexact.sessions.evidence import import_session, load_session


def _jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# -- Copilot: a native record whose payload quotes a debug line ---------------------------------

_COPILOT_NATIVE = [
    {"type": "session.start", "data": {"sessionId": "s1", "selectedModel": "gpt-5"}, "id": "e1",
     "timestamp": "2025-01-01T00:00:00Z"},
    {"type": "tool.execution_start", "data": {"toolCallId": "c1", "toolName": "bash",
                                             "arguments": {"command": "grep DEBUG copilot.log"}},
     "id": "e2", "timestamp": "2025-01-01T00:00:01Z"},
    # The tool's output quotes a line of a Copilot debug log (the agent grepped one).
    {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True,
                                                "result": {"content": "2025-01-01T00:00:00Z [DEBUG] data: {{{{"}},
     "id": "e3", "timestamp": "2025-01-01T00:00:02Z"},
    {"type": "assistant.message", "data": {"messageId": "m1", "content": "Found it."}, "id": "e4",
     "timestamp": "2025-01-01T00:00:03Z"},
    {"type": "session.shutdown", "data": {"shutdownType": "routine"}, "id": "e5",
     "timestamp": "2025-01-01T00:00:04Z"},
]


def test_copilot_native_record_quoting_a_debug_marker_is_kept_and_does_not_swallow_later_records() -> None:
    # docs/sessions-parsers.md: "A native canonical event (dotted type + object data) is kept exactly
    # as supplied"; UAS T-UAS-016: recovery MUST continue after a bad record, adjacent records survive.
    result = parse(_jsonl(*_COPILOT_NATIVE), "copilot")
    assert [e.get("id") for e in result.events] == ["e1", "e2", "e3", "e4", "e5"]
    assert result.events[2] == _COPILOT_NATIVE[2]


def test_copilot_detected_log_import_keeps_every_native_record() -> None:
    # The same bytes through `bitexact import session` (engine detected): no record is lost.
    source = load_session(_jsonl(*_COPILOT_NATIVE).encode(), "events.jsonl")
    assert source.engine == "copilot"
    assert [item.event.get("id") for item in source.events] == ["e1", "e2", "e3", "e4", "e5"]


# -- Codex: envelope metadata of error records ---------------------------------------------------

_CODEX = [
    {"type": "thread.started", "thread_id": "th1", "timestamp": "2025-01-01T00:00:00Z"},
    {"type": "turn.started", "timestamp": "2025-01-01T00:00:01Z"},
    {"type": "error", "message": "stream disconnected before completion", "id": "err-1",
     "timestamp": "2025-01-01T00:00:02Z"},
    {"type": "turn.failed", "error": {"message": "boom"}, "timestamp": "2025-01-01T00:00:03Z"},
]


def test_codex_error_records_keep_their_envelope_timestamp_and_id_as_event_metadata() -> None:
    # docs/sessions-parsers.md: "Envelope fields of a source record (uuid, id, timestamp, ...) are
    # copied unchanged onto every event the record expands to"; UAS T-UAS-007. Every other Codex
    # record does so (thread.started, turn.started above); the error records move them into data.
    events = parse(_jsonl(*_CODEX), "codex").events
    errors = [e for e in events if e["type"] == "session.error"]
    assert len(errors) == 2
    assert errors[0].get("timestamp") == "2025-01-01T00:00:02Z"
    assert errors[0].get("id") == "err-1"
    assert errors[1].get("timestamp") == "2025-01-01T00:00:03Z"


def test_codex_error_import_records_the_engine_timestamp_in_meta(recorder: Recorder) -> None:
    # docs/sessions-evidence.md: "Timestamps the engine gives stay the engine's word, in meta.timestamp".
    source = load_session(_jsonl(*_CODEX).encode(), "codex.jsonl", engine="codex")
    result = import_session(recorder, source)
    entries = [e for e in recorder.store.entries(result.run_id) if e["data"].get("type") == "session.error"]
    assert len(entries) == 2
    assert entries[0]["data"]["meta"].get("timestamp") == "2025-01-01T00:00:02Z"


# -- Goose: the message envelope's metadata -------------------------------------------------------

def test_goose_message_metadata_survives() -> None:
    # UAS 7.8: "The parser retains the original envelope"; T-UAS-007: "other supplied metadata MUST
    # survive as compatible extension fields"; docs: "payload fields the mapping does not know stay in
    # data as native additions". Goose's message.metadata (userVisible/agentVisible: whether the
    # model saw the message at all) is dropped.
    log = _jsonl(
        {"type": "message", "message": {"id": "m1", "role": "user", "created": 1735689600,
                                        "content": [{"type": "text", "text": "hi"}],
                                        "metadata": {"userVisible": True, "agentVisible": False}}},
        {"type": "message", "message": {"id": "m2", "role": "assistant", "created": 1735689601,
                                        "content": [{"type": "text", "text": "hello"}],
                                        "metadata": {"userVisible": True, "agentVisible": True}}},
        {"type": "complete", "total_tokens": 10},
    )
    events = parse(log, "goose").events
    user = next(e for e in events if e["type"] == "user.message")
    text = json.dumps(user)
    assert '"agentVisible": false' in text, user


# -- Reversible legacy interchange (T-UAS-029) -----------------------------------------------------

def test_legacy_round_trip_keeps_a_claude_result_subtype() -> None:
    # convert.convert_events_to_legacy: "reversible for 4.1-4.6 fields"; UAS 4.6: "Other native result
    # metadata remains supported"; T-UAS-029: a reversible interchange MUST preserve the supported
    # fields across both directions. A Claude max-turns result keeps its native subtype on parse...
    from bitexact.sessions import convert_events_to_legacy, convert_legacy_entries_to_events

    log = _jsonl({"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 5,
                  "session_id": "s1"})
    events = parse(log, "claude").events
    assert events[0]["data"]["subtype"] == "error_max_turns" and events[0]["data"]["status"] == "error"
    # ... but the down-conversion overwrites it with the canonical status, so converting back says "error".
    back = convert_legacy_entries_to_events(convert_events_to_legacy(events), "claude")
    assert back == events
