"""Deterministic engine detection from supported signatures (UAS 7, T-UAS-017/041).

Every record is classified by the engines' own signature predicates; the
first engine of ``DETECTION_ORDER`` with a supported record wins, so equal
inputs always give the same answer.  Specific envelopes come before shared
ones: Goose and OpenCode before anything else, Pi v3 and Codex lifecycle
records before the flat shapes, Gemini/Pi-flat before Cursor, Cursor's
``tool_call`` records before the Claude-compatible shapes they share, then
native canonical events (Copilot ``events.jsonl``), then the text layouts
(Copilot debug/pretty-print, Codex legacy, then Aider's console startup
block and last Pydantic AI's clai header or start-up banner, so that a log
of another engine that merely ran Aider or clai stays that engine's).
Plain prose, bare parseable JSON and dotted types without a supported
payload are never a signature.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from bitexact.sessions.convert import LegacyConverter, is_native_event
from bitexact.sessions.parsers import aider, codex, copilot, cursor, gemini, goose, opencode, pi, pydantic_ai
from bitexact.sessions.parsers.errors import UnrecognizedFormatError
from bitexact.sessions.records import KIND_OBJECT, frame

DETECTION_ORDER: tuple[str, ...] = ("goose", "opencode", "pi", "codex", "gemini", "cursor", "claude", "copilot")

_PI_FLAT_ONLY = lambda r: r.get("type") == "assistant" and "message" not in r and ("content" in r or "text" in r)  # noqa: E731
_PI_TOOL_FLAT = lambda r: r.get("type") in ("tool_use", "tool_result") and "tool_id" not in r and pi.is_flat_record(r)  # noqa: E731

_GEMINI_SPECIFIC = frozenset({"init", "message", "tool_use", "tool_result", "result"})
# Gemini sends a content-block array only as the snapshot of an identified message (7.4); a message
# envelope of blocks with no message id is Claude's direct envelope (7.1), not a Gemini signature.
_UNIDENTIFIED_BLOCKS = lambda r: (  # noqa: E731
    r.get("type") == "message" and isinstance(r.get("content"), list) and gemini.message_identity(r) is None)

SIGNATURES: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "goose": lambda r: goose.is_goose_message(r) or goose.is_goose_complete(r),
    "opencode": opencode.is_opencode_record,
    "pi": lambda r: pi.is_v3_record(r) or _PI_FLAT_ONLY(r) or _PI_TOOL_FLAT(r),
    "codex": codex.is_codex_record,
    "gemini": lambda r: (gemini.is_gemini_record(r) and r.get("type") in _GEMINI_SPECIFIC
                         and (r.get("type") != "result" or isinstance(r.get("stats"), dict))
                         and not _UNIDENTIFIED_BLOCKS(r)),
    "cursor": cursor.is_cursor_record,
    "claude": lambda r: LegacyConverter.recognizes(r) or (r.get("type") == "stream_event" and isinstance(r.get("event"), dict)),
    "copilot": is_native_event,
}

_DEBUG_DATA = re.compile(r"\[DEBUG\] data:")


def _signed(engine: str, record: Mapping[str, Any]) -> bool:
    """Whether ``record`` bears ``engine``'s signature; a record of an unexpected shape (a list where a
    name belongs, which a set lookup cannot hash) bears none, and never stops detection."""
    try:
        return SIGNATURES[engine](record)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return False


def detect_engine(text: str) -> str:
    """The engine whose supported signature occurs first in ``DETECTION_ORDER``.

    Raises ``UnrecognizedFormatError`` when no supported signature occurs.
    """
    found: set[str] = set()
    for item in frame(text):
        if item.kind != KIND_OBJECT:
            continue
        record = item.value
        for engine in DETECTION_ORDER:
            if engine not in found and _signed(engine, record):
                found.add(engine)
                break
        if "goose" in found:
            return "goose"
    for engine in DETECTION_ORDER:
        if engine in found:
            return engine
    if _DEBUG_DATA.search(text) or copilot.is_cli_output(text):
        return "copilot"
    from bitexact.sessions.parsers.custom import codex_text_recognized

    if codex_text_recognized(text):
        return "codex"
    if aider.is_aider_output(text):
        return "aider"
    if pydantic_ai.is_pydantic_ai_output(text):
        return "pydantic-ai"
    raise UnrecognizedFormatError("unrecognized format: no supported engine signature found in the input")
