"""Custom engines with deterministic delegate detection (UAS 7.6, T-UAS-041).

The delegate is chosen from *supported signatures* actually present, in a
fixed order: Goose (message/complete records; an error record alone is not
enough), OpenCode (``sessionID`` + object ``part`` or structured ``error``),
native canonical events and Claude-compatible legacy records (per-record
mixed conversion), Codex JSONL lifecycle/items, the Codex legacy text
layout, then Aider's console startup block (banner + model line) and last
Pydantic AI's clai header or start-up banner (so a log of another engine that
merely ran Aider or clai is not taken).  Parseable JSON,
a dotted ``type`` without payload, prose, or a non-empty markdown fallback
never establish detection; with no supported signature the result is the
empty trace and "unrecognized format".

A delegated initialization keeps the delegate's ``sourceEngine`` (``goose``,
``opencode``, ``codex``, ``aider``, ``pydantic-ai``); Claude-compatible records are the
custom engine's own format and map with ``sourceEngine: "custom"``.
"""

from __future__ import annotations

from typing import Any

from bitexact.sessions.convert import LegacyConverter, is_native_event
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers import aider, codex, goose, opencode, pydantic_ai
from bitexact.sessions.parsers.base import SHAPE_ERRORS, Session, map_record
from bitexact.sessions.parsers.claude import ClaudeMapper
from bitexact.sessions.records import KIND_OBJECT, Item, frame

ENGINE = "custom"
DELEGATES: tuple[str, ...] = ("goose", "opencode", "native-or-claude", "codex", "codex-text", "aider",
                             "pydantic-ai")
"""Delegation order (7.6): specific Goose before OpenCode; native/Claude before Codex; Aider, then Pydantic AI text last."""


def detect_delegate(text: str, items: list[Item] | None = None) -> str | None:
    """The first delegate in ``DELEGATES`` order whose signature occurs, or None."""
    items = frame(text) if items is None else items
    found: set[str] = set()
    for item in items:
        if item.kind != KIND_OBJECT:
            continue
        try:
            signature = _signature(item.value)
        except SHAPE_ERRORS:
            continue  # a record of an unexpected shape bears no signature and never stops detection
        if signature == "goose":
            return "goose"
        if signature is not None:
            found.add(signature)
    for delegate in DELEGATES[1:4]:
        if delegate in found:
            return delegate
    if codex_text_recognized(text):
        return "codex-text"
    if aider.is_aider_output(text):
        return "aider"
    if pydantic_ai.is_pydantic_ai_output(text):
        return "pydantic-ai"
    return None


def _signature(record: Any) -> str | None:
    """The delegate whose record signature ``record`` bears, or None."""
    if goose.is_goose_message(record) or goose.is_goose_complete(record):
        return "goose"
    if opencode.is_opencode_record(record):
        return "opencode"
    if is_native_event(record) or LegacyConverter.recognizes(record):
        return "native-or-claude"
    if codex.is_codex_record(record):
        return "codex"
    return None


def codex_text_recognized(text: str) -> bool:
    """True when the Codex legacy text layout yields at least one observation."""
    probe = Session("codex")
    codex.CodexTextMapper(probe).run(text.split("\n"))
    return probe.recognized > 0


def parse(text: str) -> ParseResult:
    """Parse a custom engine log by delegating to the detected supported format."""
    items = frame(text)
    delegate = detect_delegate(text, items)
    if delegate is None:
        session = Session(ENGINE)
        for item in items:
            session.diagnostics.skipped(item)
        return session.result(text)
    if delegate in ("goose", "opencode", "codex", "codex-text", "aider", "pydantic-ai"):
        module: Any = {"goose": goose, "opencode": opencode, "codex": codex, "codex-text": codex, "aider": aider,
                       "pydantic-ai": pydantic_ai}[delegate]
        inner = module.parse(text)
        return ParseResult(
            events=inner.events,
            markdown=inner.markdown,
            mcp_failures=inner.mcp_failures,
            max_turns_hit=inner.max_turns_hit,
            engine=ENGINE,
            diagnostics=[f"custom: delegated to {delegate}"] + inner.diagnostics,
        )
    session = Session(ENGINE)
    mapper = ClaudeMapper(session, ENGINE)
    for item in items:
        if item.kind == KIND_OBJECT and map_record(session, mapper, item):
            session.recognized += 1
        else:
            session.diagnostics.skipped(item)
    mapper.finish()
    session.diagnostics.notes.insert(0, "custom: delegated to native-or-claude")
    return session.result(text)
