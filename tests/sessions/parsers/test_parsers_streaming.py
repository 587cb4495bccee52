"""Exact text and streaming reconciliation (UAS 5.3, T-UAS-020/021)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from bitexact.sessions.streaming import reconcile_native_deltas
from uas_parser_helpers import datas, fixture_text, jsonl

CHUNKS = ["hello", " ", "world", "\n"]


def _gemini(chunks: list[str]) -> str:
    return jsonl(*({"type": "message", "role": "assistant", "content": c, "delta": True} for c in chunks))


def _goose(chunks: list[str]) -> str:
    return jsonl(*({"type": "message", "message": {"id": "m", "role": "assistant", "created": 1, "content": [{"type": "text", "text": c}]}} for c in chunks))


def _cursor(chunks: list[str]) -> str:
    return jsonl(*({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": c}]}} for c in chunks))


def _pi_flat(chunks: list[str]) -> str:
    return jsonl(*({"type": "assistant", "content": c, "delta": True} for c in chunks))


def _pi_v3(chunks: list[str]) -> str:
    message = {"role": "assistant", "content": [], "timestamp": 5}
    updates = [{"type": "message_update", "message": message, "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": c}} for c in chunks]
    return jsonl({"type": "message_start", "message": message}, *updates)


def _copilot(chunks: list[str]) -> str:
    return jsonl(*({"type": "assistant.message_delta", "data": {"messageId": "m", "deltaContent": c}} for c in chunks))


@pytest.mark.uas("T-UAS-020", "T-UAS-021")
@pytest.mark.parametrize(
    "engine,build",
    [("gemini", _gemini), ("goose", _goose), ("cursor", _cursor), ("pi", _pi_flat), ("pi", _pi_v3), ("copilot", _copilot)],
)
def test_hello_world_deltas_give_exactly_one_message(engine: str, build) -> None:
    events = parse(build(CHUNKS), engine).events
    contents = [d["content"] for d in datas(events, "assistant.message")]
    assert contents == ["hello world\n"]


@pytest.mark.uas("T-UAS-021")
def test_final_snapshot_does_not_duplicate_streamed_text() -> None:
    events = parse(fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl"), "copilot").events
    m1 = [d for d in datas(events, "assistant.message") if d.get("messageId") == "m1"]
    assert m1 == [{"messageId": "m1", "content": "hello world\n"}]
    cursor = parse(fixture_text("cursor", "stream_json_session.jsonl"), "cursor").events
    assert [d["content"] for d in datas(cursor, "assistant.message")] == ["hello world\n"]
    pi = parse(fixture_text("pi", "v3_stream_two_turns_partial_and_errors.jsonl"), "pi").events
    assert [d["content"] for d in datas(pi, "assistant.message")].count("hello world") == 1


@pytest.mark.uas("T-UAS-021")
def test_interrupted_stream_keeps_observed_text() -> None:
    events = parse(fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl"), "copilot").events
    m2 = [d for d in datas(events, "assistant.message") if d.get("messageId") == "m2"]
    assert m2 == [{"content": "interrupted text", "messageId": "m2", "partial": True}]
    # The delta extension events themselves are retained too.
    assert [e["data"]["deltaContent"] for e in events if e["type"] == "assistant.message_delta"][-2:] == ["interrupted ", "text"]
    pi = parse(fixture_text("pi", "v3_stream_two_turns_partial_and_errors.jsonl"), "pi").events
    assert {"content": "streaming only partial", "partial": True}.items() <= datas(pi, "assistant.message")[-1].items()


@pytest.mark.uas("T-UAS-021")
def test_deltas_do_not_merge_across_an_event_boundary_or_a_different_envelope() -> None:
    text = jsonl(
        {"type": "message", "role": "assistant", "content": "a", "delta": True},
        {"type": "tool_use", "tool_name": "x", "tool_id": "t", "parameters": {}},
        {"type": "message", "role": "assistant", "content": "b", "delta": True},
        {"type": "message", "role": "assistant", "content": "c", "delta": True, "timestamp": "2026-10-02T00:00:00Z"},
        {"type": "message", "role": "user", "content": "d", "delta": True},
        {"type": "thinking", "content": "e"},
    )
    events = parse(text, "gemini").events
    assert [(e["type"], e["data"]["content"]) for e in events if "content" in e["data"]] == [
        ("assistant.message", "a"),
        ("assistant.message", "b"),
        ("assistant.message", "c"),
        ("user.message", "d"),
        ("assistant.reasoning", "e"),
    ]


@pytest.mark.uas("T-UAS-020")
def test_exact_text_edge_cases_survive() -> None:
    samples = ["", " ", "\n\n", "a\r\nb", "tab\there", "ünïcödé ✓ 😀", "literal \\n and \\u0041", "```fence```", "  trailing  "]
    text = jsonl(*({"type": "message", "role": "assistant", "content": s} for s in samples))
    events = parse(text, "gemini").events
    assert [d["content"] for d in datas(events, "assistant.message")] == samples


@pytest.mark.uas("T-UAS-020")
def test_exact_command_and_argument_text() -> None:
    events = parse(fixture_text("copilot", "debug_responses_with_incomplete_tool_calls.log"), "copilot").events
    starts = datas(events, "tool.execution_start")
    assert starts[0]["input"] == {"command": "ls"}
    assert starts[1]["input"] == "{not json"  # argument text kept exactly when not valid JSON
    assert datas(events, "assistant.reasoning")[0]["content"] == "  think  "


@pytest.mark.uas("T-UAS-021")
def test_explicit_identity_snapshots_reconcile() -> None:
    events = parse(fixture_text("gemini", "message_id_snapshots.jsonl"), "gemini").events
    # Rewritten final snapshot retires earlier fragments and keeps their envelopes.
    assert [e["type"] for e in events] == ["tool.execution_start", "assistant.message"]
    final = events[-1]["data"]
    assert final["content"] == "Goodbye"
    assert [o["content"] for o in final["observations"]] == ["Hel", "lo", "Hello there"]


@pytest.mark.uas("T-UAS-021")
def test_append_only_and_unchanged_snapshots() -> None:
    text = jsonl(
        {"type": "message", "role": "assistant", "content": "Hel", "delta": True, "message_id": "x"},
        {"type": "message", "role": "assistant", "content": "Hel", "message_id": "x"},
        {"type": "message", "role": "assistant", "content": "Hello", "message_id": "x"},
    )
    events = parse(text, "gemini").events
    assert "".join(d["content"] for d in datas(events, "assistant.message")) == "Hello"
    assert len(events) == 2


@pytest.mark.uas("T-UAS-021", "T-UAS-025")
def test_native_delta_reconciliation_is_idempotent() -> None:
    events = [{"type": "assistant.message_delta", "data": {"messageId": "q", "deltaContent": c}} for c in CHUNKS]
    once = reconcile_native_deltas(events)
    assert once[-1] == {"type": "assistant.message", "data": {"content": "hello world\n", "messageId": "q", "partial": True}}
    assert reconcile_native_deltas(once) == once
