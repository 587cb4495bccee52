"""Public API: typed errors, engines, canonical JSON (brief; T-UAS-003/008/017/025)."""

from __future__ import annotations

import json

import pytest

from bitexact.errors import BitExactError
from bitexact.sessions import (
    ENGINES,
    InvalidSessionInputError,
    ParseResult,
    UnknownEngineError,
    canonical_json,
    detect_engine,
    parse,
)
from uas_parser_helpers import fixture_text


@pytest.mark.uas("T-UAS-008")
def test_parse_result_shape() -> None:
    result = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex")
    assert isinstance(result, ParseResult) and result.engine == "codex"
    assert isinstance(result.events, list) and isinstance(result.markdown, str)
    assert result.mcp_failures == [] and result.max_turns_hit is False
    with pytest.raises(AttributeError):
        result.engine = "x"  # type: ignore[misc]


@pytest.mark.uas("T-UAS-017")
def test_bad_arguments_raise_typed_errors_naming_the_field() -> None:
    with pytest.raises(UnknownEngineError, match="^engine: 'nope'"):
        parse("{}", "nope")
    with pytest.raises(InvalidSessionInputError, match="^text: expected str, got bytes"):
        parse(b"{}")  # type: ignore[arg-type]
    assert issubclass(UnknownEngineError, BitExactError) and issubclass(InvalidSessionInputError, TypeError)
    assert ENGINES == ("claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor", "aider", "pydantic-ai")


@pytest.mark.uas("T-UAS-003", "T-UAS-025")
def test_canonical_json_is_a_deterministic_array() -> None:
    events = parse(fixture_text("goose", "stream_json_session.jsonl"), "goose").events
    text = canonical_json(events)
    assert text == canonical_json(parse(fixture_text("goose", "stream_json_session.jsonl"), "goose").events)
    assert text.startswith("[\n{") and text.endswith("\n]\n")
    assert json.loads(text) == events
    assert canonical_json([]) == "[]\n"
    assert "✓" in canonical_json([{"type": "a.b", "data": {"s": "✓"}}])  # UTF-8, not \\u escapes


@pytest.mark.uas("T-UAS-025")
def test_detect_engine_is_exported_and_deterministic() -> None:
    text = fixture_text("opencode", "run_format_json_session.jsonl")
    assert {detect_engine(text) for _ in range(3)} == {"opencode"}
