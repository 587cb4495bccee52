"""Engine adapters: one module per engine of UAS section 7, and dispatch.

``parse(text, engine)`` runs the named adapter, or detects one
deterministically when ``engine`` is None.  Each adapter returns a
``ParseResult`` whose ``events`` are the canonical trace.
"""

from __future__ import annotations

from typing import Callable

from bitexact.gcpause import gc_paused
from bitexact.sessions.model import ParseResult

ENGINES: tuple[str, ...] = ("claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor", "aider",
                            "pydantic-ai")


def _adapters() -> dict[str, Callable[[str], ParseResult]]:
    from bitexact.sessions.parsers import (
        aider,
        claude,
        codex,
        copilot,
        cursor,
        custom,
        gemini,
        goose,
        opencode,
        pi,
        pydantic_ai,
    )

    return {
        "claude": claude.parse,
        "copilot": copilot.parse,
        "codex": codex.parse,
        "gemini": gemini.parse,
        "pi": pi.parse,
        "custom": custom.parse,
        "opencode": opencode.parse,
        "goose": goose.parse,
        "cursor": cursor.parse,
        "aider": aider.parse,
        "pydantic-ai": pydantic_ai.parse,
    }


def parse(text: str, engine: str | None = None) -> ParseResult:
    """Parse an engine log into a canonical trace.

    ``engine`` None detects the engine from supported signatures; input with
    no supported signature returns an empty trace, ``engine="custom"`` and
    the "unrecognized format" diagnostic (T-UAS-017, 7.6).  Raises
    ``InvalidSessionInputError`` if ``text`` is not a str and
    ``UnknownEngineError`` for an unsupported ``engine`` name.
    """
    from bitexact.sessions.parsers.detect import detect_engine
    from bitexact.sessions.parsers.errors import (
        InvalidSessionInputError,
        UnknownEngineError,
        UnrecognizedFormatError,
    )

    if not isinstance(text, str):
        raise InvalidSessionInputError(f"text: expected str, got {type(text).__name__}; decode the log first")
    adapters = _adapters()
    if engine is not None and (not isinstance(engine, str) or engine not in adapters):
        raise UnknownEngineError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
    # Parsing allocates many small containers that all stay alive until the
    # end; the cyclic collector would rescan them over and over (superlinear
    # time on large logs) while finding nothing to free.
    with gc_paused():
        if engine is None:
            try:
                engine = detect_engine(text)
            except UnrecognizedFormatError:
                return adapters["custom"](text)
        return adapters[engine](text)
