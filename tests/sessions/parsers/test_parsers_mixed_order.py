"""Mixed inputs and observation order (UAS 5.2, T-UAS-018/019, Appendix B)."""

from __future__ import annotations

import pytest

from bitexact.sessions import convert_legacy_entries_to_events, parse
from uas_parser_helpers import deep_freeze, fixture_text, jsonl, types

APPENDIX_B_INPUT = [
    {"type": "assistant.message", "id": "native-a", "data": {"content": "A "}},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": " B\n"}]}},
    {"type": "vendor.notice", "data": {"count": 0}},
    {"type": "result", "num_turns": 1, "usage": {"input_tokens": 0, "output_tokens": 2}},
]


@pytest.mark.uas("T-UAS-018", "T-UAS-019")
def test_appendix_b_per_record_conversion() -> None:
    events = convert_legacy_entries_to_events(deep_freeze(APPENDIX_B_INPUT))
    assert [(e["type"], e["data"].get("content")) for e in events] == [
        ("assistant.message", "A "),
        ("assistant.message", " B\n"),
        ("vendor.notice", None),
        ("session.result", None),
    ]
    assert events[0] == APPENDIX_B_INPUT[0]
    assert events[2] == APPENDIX_B_INPUT[2]
    assert events[3]["data"]["numTurns"] == 1
    assert events[3]["data"]["usage"] == {"input_tokens": 0, "output_tokens": 2}


@pytest.mark.uas("T-UAS-018")
@pytest.mark.parametrize("engine", ["claude", "copilot", "custom"])
def test_mixed_stream_keeps_both_sides_for_claude_compatible_engines(engine: str) -> None:
    events = parse(fixture_text("claude", "mixed_native_legacy_extension_result.jsonl"), engine).events
    assert types(events) == ["assistant.message", "assistant.message", "vendor.notice", "session.result"]


@pytest.mark.uas("T-UAS-019")
def test_source_order_is_kept_even_when_timestamps_disagree() -> None:
    text = jsonl(
        {"type": "tool_result", "timestamp": "2026-10-02T00:00:05Z", "tool_id": "a", "status": "success", "output": "late"},
        {"type": "message", "timestamp": "2026-10-02T00:00:01Z", "role": "assistant", "content": "early"},
        {"type": "tool_use", "timestamp": "2026-10-02T00:00:00Z", "tool_name": "x", "tool_id": "a", "parameters": {}},
    )
    events = parse(text, "gemini").events
    assert types(events) == ["tool.execution_complete", "assistant.message", "tool.execution_start"]
    assert [e["timestamp"] for e in events] == ["2026-10-02T00:00:05Z", "2026-10-02T00:00:01Z", "2026-10-02T00:00:00Z"]


@pytest.mark.uas("T-UAS-019")
def test_completed_item_expands_at_its_own_position() -> None:
    events = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    item2 = [i for i, e in enumerate(events) if e["data"].get("toolCallId") == "item_2"]
    assert [events[i]["type"] for i in item2] == ["tool.execution_start", "tool.execution_complete"]
    assert item2[1] == item2[0] + 1
    # The derived result comes after everything it accounts for.
    assert events[-1]["type"] == "session.result"
