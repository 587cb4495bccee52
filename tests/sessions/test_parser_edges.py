"""The session log parsers: regression tests, each for a bug a review found.

Contract: the Unified Agent Session Specification (sections 5, 6, 7),
docs/sessions-parsers.md, docs/sessions-evidence.md and the docstrings of
src/bitexact/sessions and src/bitexact/cli/sessions.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bitexact.cli.sessions import sessions_group
from bitexact.sessions import convert_events_to_legacy, convert_legacy_entries_to_events, parse


def _jsonl(*records: Any) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


CLAUDE_INIT = {"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-x"}
CLAUDE_ASSISTANT = {
    "type": "assistant",
    "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]},
}


# -- 5.1 tolerant framing ---------------------------------------------------------------------------


def test_bom_prefixed_jsonl_keeps_its_first_record() -> None:
    """A UTF-8 BOM before the first line is framing; the record on that line is still a record."""
    result = parse("\ufeff" + _jsonl(CLAUDE_INIT, CLAUDE_ASSISTANT))
    types = [e["type"] for e in result.events]
    assert types == ["session.init", "assistant.message"], result.diagnostics


def test_bom_prefixed_json_array_is_not_lost_entirely() -> None:
    """A whole JSON-array log written with a BOM must not become 'unrecognized format' with no events."""
    result = parse("\ufeff" + json.dumps([CLAUDE_INIT, CLAUDE_ASSISTANT], indent=2))
    types = [e["type"] for e in result.events]
    assert types == ["session.init", "assistant.message"], result.diagnostics


def test_deeply_nested_record_does_not_abort_the_parse() -> None:
    """One pathological (deeply nested) record is a bad record: skipped, the records around it kept."""
    deep = '{"type": "x", "a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    text = _jsonl(CLAUDE_INIT, deep, CLAUDE_ASSISTANT)
    result = parse(text, "claude")
    assert [e["type"] for e in result.events] == ["session.init", "assistant.message"]


def test_custom_detection_survives_a_record_whose_type_is_a_list() -> None:
    """A valid-JSON record of an unexpected shape must not crash custom delegation (docs: 'never stops
    engine detection, the parse or an import')."""
    text = _jsonl({"type": ["text"], "sessionID": "s1"}, CLAUDE_INIT)
    result = parse(text, "custom")
    assert [e["type"] for e in result.events] == ["session.init"]


@pytest.mark.parametrize(
    "text",
    [
        # a good debug response, then a streamed chunk whose tool_calls is not a list
        "t [DEBUG] data: " + json.dumps({"id": "r1", "choices": [{"index": 0, "message": {"role": "assistant",
                                                                                           "content": "Good answer"}}]})
        + "\nt [DEBUG] data: " + json.dumps({"id": "c2", "choices": [{"index": 0, "delta": {"tool_calls": 5}}]}) + "\n",
        # a native event, then a Claude-compatible refusal whose message id is an object
        _jsonl({"type": "assistant.message", "data": {"content": "Good answer"}},
               {"type": "assistant", "message": {"id": {"x": 1}, "role": "assistant", "stop_reason": "refusal",
                                                 "content": [{"type": "text", "text": "no"}]}}),
    ],
    ids=["debug-chunk-tool_calls-int", "legacy-refusal-id-object"],
)
def test_copilot_record_of_unexpected_shape_is_skipped_not_fatal(text: str) -> None:
    result = parse(text, "copilot")
    assert any(e["type"] == "assistant.message" and e["data"].get("content") == "Good answer" for e in result.events)


# -- 7 engine detection ------------------------------------------------------------------------------


def test_claude_log_with_direct_message_envelopes_is_detected_as_claude() -> None:
    """7.1 supports direct `type: "message", role: "assistant"/"user"` envelopes; with a Claude
    `system/init` in the log, detection must not pick Gemini (which drops the init and the tools)."""
    text = _jsonl(
        {"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-x", "tools": []},
        {"type": "message", "role": "assistant", "id": "msg_1", "model": "claude-x",
         "content": [{"type": "text", "text": "hi"},
                     {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
         "usage": {"input_tokens": 5, "output_tokens": 3}},
        {"type": "message", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    )
    result = parse(text)
    types = [e["type"] for e in result.events]
    assert result.engine == "claude"
    assert "session.init" in types
    assert "tool.execution_start" in types and "tool.execution_complete" in types


# -- 5.3 streaming -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "interleaved",
    [
        {"type": "queue_update", "steering": ["stop"], "followUp": []},  # a recognized Pi lifecycle record
        {"type": "response", "command": "steer", "success": True},  # an RPC acknowledgement (unrecognized)
    ],
    ids=["queue_update", "rpc-response"],
)
def test_pi_record_between_stream_updates_does_not_lose_the_final_message(interleaved: dict[str, Any]) -> None:
    """A record arriving mid-stream must not make the finalized message_end content disappear (5.3)."""
    msg = {"role": "assistant", "content": [], "timestamp": 2000, "model": "pi-model"}

    def update(delta: str) -> dict[str, Any]:
        return {"type": "message_update", "message": msg,
                "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": delta}}

    text = _jsonl(
        {"type": "session", "version": 3, "id": "p1", "timestamp": "2026-01-01T00:00:00Z"},
        {"type": "message_start", "message": msg},
        update("Hel"),
        interleaved,
        update("lo"),
        {"type": "message_end", "message": {**msg, "content": [{"type": "text", "text": "Hello"}],
                                            "usage": {"input": 1, "output": 2}}},
    )
    result = parse(text, "pi")
    answers = "".join(e["data"]["content"] for e in result.events if e["type"] == "assistant.message")
    assert answers == "Hello"


def test_surrogate_pair_split_across_gemini_deltas_joins_to_the_character() -> None:
    """A UTF-16 surrogate pair split across two deltas (JSON escapes, as a Node engine writes them)
    must reconcile to the exact character, not two lone surrogates (T-UAS-020/021)."""
    text = (
        '{"type":"init","session_id":"g1","model":"gemini-2.5"}\n'
        '{"type":"message","role":"assistant","content":"hi \\ud83d","delta":true}\n'
        '{"type":"message","role":"assistant","content":"\\ude00 there","delta":true}\n'
    )
    result = parse(text, "gemini")
    messages = [e["data"]["content"] for e in result.events if e["type"] == "assistant.message"]
    assert messages == ["hi \U0001F600 there"]


def test_cli_json_output_with_lone_surrogate_escape_is_valid_json_not_a_traceback(tmp_path: Path) -> None:
    log = tmp_path / "lone.jsonl"
    log.write_text(
        '{"type":"init","session_id":"g1","model":"gemini-2.5"}\n'
        '{"type":"message","role":"assistant","content":"bad \\ud83d end"}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(sessions_group, ["parse", str(log), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2)
    if result.exit_code == 0:
        json.loads(result.stdout)


# -- 6 usage -----------------------------------------------------------------------------------------


def test_streamed_chat_completion_usage_counts_once_per_response() -> None:
    """Two chunks of one streamed response (same id) each carrying the response's usage are one
    response: 7.2 'aggregate distinct response contributions'; 6.2 duplicates must not count twice."""
    def debug(obj: dict[str, Any]) -> str:
        return "2025-01-01T00:00:00.000Z [DEBUG] data: " + json.dumps(obj)

    c1 = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt",
          "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}],
          "usage": {"prompt_tokens": 10, "completion_tokens": 1}}
    c2 = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt",
          "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}],
          "usage": {"prompt_tokens": 10, "completion_tokens": 2}}
    result = parse(debug(c1) + "\n" + debug(c2) + "\n", "copilot")
    usage = [e["data"]["usage"] for e in result.events if e["type"] == "session.result" and "usage" in e["data"]]
    assert usage and usage[-1]["input_tokens"] == 10


# -- 5.5 / T-UAS-029 legacy interchange round trip ----------------------------------------------------


def _round_trip(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    back = convert_legacy_entries_to_events(convert_events_to_legacy(events))
    for event in back:
        event["data"].pop("contentIndex", None)  # positional, excluded from the promise (docs)
    return back


def test_round_trip_keeps_an_explicitly_empty_mcp_server_name() -> None:
    """4.4: `mcpServerName` 'an explicitly empty string is preserved'; T-UAS-029 round trip."""
    events = [{"type": "tool.execution_start",
               "data": {"toolCallId": "t1", "toolName": "read", "mcpServerName": "", "input": {}}}]
    back = _round_trip(events)
    assert back[0]["data"].get("toolName") == "read"
    assert back[0]["data"].get("mcpServerName") == ""


def test_round_trip_keeps_session_result_source_type() -> None:
    """4.6 `sourceType` (e.g. Codex `turn.completed`) is a supported field; the round trip rewrites it."""
    events = [{"type": "session.result",
               "data": {"numTurns": 2, "status": "completed", "sourceType": "turn.completed"}}]
    back = _round_trip(events)
    assert back[0]["data"].get("sourceType") == "turn.completed"


def test_round_trip_keeps_structured_message_content() -> None:
    """4.3: structured content stays structured; one event must not come back as two string events."""
    events = [{"type": "assistant.message",
               "data": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}}]
    back = _round_trip(events)
    assert back == events


# -- CLI exit codes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "just some prose\n"], ids=["empty", "unrecognized"])
def test_cli_parse_exits_2_when_the_log_has_no_recognizable_events(tmp_path: Path, content: str) -> None:
    """cli/sessions.py: 'Exit codes: ... 2 the input cannot be read (missing, not UTF-8, no
    recognizable events, ...)' for `sessions parse` and `import session` alike."""
    log = tmp_path / "log.jsonl"
    log.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(sessions_group, ["parse", str(log), "--json"])
    assert result.exit_code == 2
