"""Tolerant record parsing and recognition (UAS 5.1, T-UAS-016/017, Appendix D)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from bitexact.sessions.records import frame
from uas_parser_helpers import fixture_text, jsonl, types

GOOD_BEFORE = {"type": "message", "role": "user", "content": "  before  "}
GOOD_AFTER = {"type": "message", "role": "assistant", "content": "after\n"}


@pytest.mark.uas("T-UAS-016")
def test_bad_lines_do_not_cost_adjacent_records() -> None:
    text = jsonl(
        "[DEBUG] starting",
        GOOD_BEFORE,
        '{"type":"message","role":"assistant","content":"SECRET-PAYLOAD',
        "null",
        "42",
        "{not json at all}",
        '{"type":"message","role":"assistant","content":NaN}',
        GOOD_AFTER,
    )
    result = parse(text, "gemini")
    assert [e["data"]["content"] for e in result.events] == ["  before  ", "after\n"]
    notes = " | ".join(result.diagnostics)
    assert "line 3: malformed or truncated JSON record skipped" in notes
    assert "line 4: non-object JSON entry skipped" in notes
    assert "line 7: malformed" in notes  # NaN is not JSON
    assert "SECRET-PAYLOAD" not in notes  # diagnostics never quote payloads


@pytest.mark.uas("T-UAS-016")
def test_framing_whitespace_is_trimmed_but_string_values_are_not() -> None:
    text = "   " + jsonl({"type": "message", "role": "assistant", "content": "  padded \t"}).rstrip("\n") + "   \r\n"
    assert parse(text, "gemini").events[0]["data"]["content"] == "  padded \t"


@pytest.mark.uas("T-UAS-016")
def test_json_array_input_with_null_entries() -> None:
    text = '[null, {"type":"assistant","message":{"content":[{"type":"text","text":"x "}]}}, 7]'
    result = parse(text, "claude")
    assert types(result.events) == ["assistant.message"]
    assert result.diagnostics == ["element 0: non-object JSON entry skipped", "element 2: non-object JSON entry skipped"]


@pytest.mark.uas("T-UAS-016")
def test_frame_keeps_items_in_order_with_kinds() -> None:
    items = frame('a\n{"x":1}\n{bad\nnull\n[{"y":2}]\n')
    assert [(i.kind, i.line) for i in items] == [
        ("text", 1), ("object", 2), ("malformed", 3), ("non_object", 4), ("object", 5),
    ]


@pytest.mark.uas("T-UAS-017")
@pytest.mark.parametrize("engine", ["claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor", "aider", "pydantic-ai"])
def test_unknown_only_input_reports_unrecognized_format(engine: str) -> None:
    text = jsonl({"type": "vendor.progress"}, {"unrelated": True}, {"type": "thing", "data": 1})
    result = parse(text, engine)
    assert result.events == []
    assert result.diagnostics[-1] == f"unrecognized format: no supported {engine} records found"
    assert "not recognized" in result.markdown  # the report, never a raw preview
    assert "unrelated" not in result.markdown


@pytest.mark.uas("T-UAS-017")
def test_empty_input_reports_no_content() -> None:
    for text in ("", "  \n\n"):
        result = parse(text, "claude")
        assert result.events == [] and result.diagnostics == ["empty input: no content to parse"]


@pytest.mark.uas("T-UAS-017", "T-UAS-041")
def test_detection_over_unrecognized_input_returns_custom_unrecognized() -> None:
    result = parse(fixture_text("custom", "unrecognized_only.jsonl"))
    assert result.engine == "custom" and result.events == []
    assert result.diagnostics[-1] == "unrecognized format: no supported custom records found"


@pytest.mark.uas("T-UAS-016")
def test_pretty_printed_array_between_debug_lines_is_recovered() -> None:
    import json

    array = json.dumps([
        {"type": "system", "subtype": "init", "session_id": "s"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "  kept  "}]}},
    ], indent=2)
    text = "[DEBUG] launching\n" + array + "\n[DEBUG] done\n" + jsonl({"type": "result", "num_turns": 1})
    result = parse(text, "claude")
    assert types(result.events) == ["session.init", "assistant.message", "session.result"]
    assert result.events[1]["data"]["content"] == "  kept  "
    assert result.diagnostics == ["2 non-JSON text line(s) skipped (first at line 1)"]
