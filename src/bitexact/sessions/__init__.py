"""Agent session parsing: engine logs -> canonical event traces (UAS class P).

Public API::

    parse(text, engine=None) -> ParseResult   # the canonical trace and flags
    detect_engine(text) -> str                # raises UnrecognizedFormatError
    ENGINES                                   # supported engine names
    canonical_json(events) -> str             # deterministic JSON array text

The canonical trace (``ParseResult.events``) is a list of plain dicts
``{"type": str, "data": dict, ...native metadata}`` (T-UAS-003).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from bitexact.sessions.convert import convert_events_to_legacy, convert_legacy_entries_to_events
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers import ENGINES, parse
from bitexact.sessions.parsers.detect import detect_engine
from bitexact.sessions.parsers.errors import (
    InvalidSessionInputError,
    SessionParseError,
    UnknownEngineError,
    UnrecognizedFormatError,
)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def canonical_json(events: Iterable[dict[str, Any]]) -> str:
    """The canonical array as JSON text: one event per line, byte-identical on repeat.

    Keys keep the parser's deterministic insertion order; non-ASCII text is
    written as UTF-8 characters, and a lone surrogate (a log may escape one)
    as its JSON escape, so the text is UTF-8 any reader takes; the text ends
    with a newline.
    """
    lines = [_SURROGATE.sub(_escaped, json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
             for event in events]
    if not lines:
        return "[]\n"
    return "[\n" + ",\n".join(lines) + "\n]\n"


__all__ = [
    "ENGINES",
    "InvalidSessionInputError",
    "ParseResult",
    "SessionParseError",
    "UnknownEngineError",
    "UnrecognizedFormatError",
    "canonical_json",
    "convert_events_to_legacy",
    "convert_legacy_entries_to_events",
    "detect_engine",
    "parse",
]
