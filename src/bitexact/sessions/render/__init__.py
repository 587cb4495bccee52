"""Readers and renderers (conformance class R): truthful, private, bounded views (UAS 8).

``render(events, fmt)`` renders a canonical trace or the records of a
unified file (recognized by its leading ``session.format`` header) as the
Actions Markdown view or the console text view.  ``render_path`` reads a
log or ``aw_session.jsonl`` from disk and returns exactly what
``bitexact sessions render`` prints.  Views never publish user prompts by
default, redact before clipping, escape hostile text, respect a byte
budget with explicit notices, and never modify their input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bitexact.canon import loads
from bitexact.errors import BitExactError, StrictJSONError
from bitexact.sessions.readfile import no_events_message, read_session_file
from bitexact.sessions.render.budget import DEFAULT_BUDGET_BYTES
from bitexact.sessions.render.markdown import conversation_markdown
from bitexact.sessions.render.privacy import Publisher
from bitexact.sessions.render.text import cli_style_summary, plain_text_summary
from bitexact.sessions.render.unified import unified_markdown, unified_text
from bitexact.sessions.unified_model import FormatVersionError, header_version, is_format_header

Format = Literal["markdown", "text"]


class UnifiedFormatError(BitExactError, ValueError):
    """A unified file cannot be read: missing/invalid/unsupported header or malformed record."""


class NoSessionEventsError(BitExactError, ValueError):
    """``render_path``: the log yields no canonical event (empty, not a session log, or not the named engine's)."""


def is_unified(events: Sequence[Mapping[str, Any]]) -> bool:
    """True when ``events`` start with a collector-owned ``session.format`` header."""
    return bool(events) and is_format_header(events[0])


def check_unified(records: Sequence[Mapping[str, Any]]) -> None:
    """Reader checks before rendering (T-UAS-064, T-UAS-065, T-UAS-067)."""
    if not is_unified(records):
        raise UnifiedFormatError("missing file-format header: the first record must be the collector's session.format")
    try:
        header_version(records[0].get("data"))
    except FormatVersionError as exc:
        raise UnifiedFormatError(f"the session.format header: {exc}") from None
    executions = sum(1 for r in records if isinstance(r, Mapping) and r.get("type") == "agent.execution")
    if executions > 1:
        raise UnifiedFormatError(f"{executions} agent.execution records; a unified file has at most one")


def render(
    events: Sequence[Mapping[str, Any]],
    fmt: Format = "markdown",
    *,
    budget_bytes: int | None = None,
    show_prompts: bool = False,
    masks: Iterable[str] = (),
) -> str:
    """Render a canonical trace or unified records (``markdown`` or ``text``).

    ``budget_bytes`` defaults to 1000 KiB; ``show_prompts`` is the explicit
    diagnostic view that also shows (redacted) user prompts; ``masks`` are
    registered secret values to redact in addition to known credentials.
    """
    if fmt not in ("markdown", "text"):
        raise ValueError(f"unknown render format {fmt!r}; expected 'markdown' or 'text'")
    budget = DEFAULT_BUDGET_BYTES if budget_bytes is None else budget_bytes
    if budget < 512:
        raise ValueError("budget_bytes must be at least 512 bytes")
    events = list(events)
    if is_unified(events):
        check_unified(events)
        pub = Publisher(show_prompts, masks)
        return unified_markdown(events, pub, budget) if fmt == "markdown" else unified_text(events, pub, budget)
    if fmt == "markdown":
        return conversation_markdown(events, budget_bytes=budget, show_prompts=show_prompts, masks=masks)
    return plain_text_summary(events, budget_bytes=budget, show_prompts=show_prompts, masks=masks)


def read_unified(path: Path, data: bytes | None = None) -> list[dict[str, Any]]:
    """The records of a unified file (``data``: its bytes, already read); any malformed line fails explicitly."""
    records = []
    data = read_session_file(path) if data is None else data
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            record = loads(raw)
        except StrictJSONError as exc:
            raise UnifiedFormatError(f"line {number}: invalid JSON ({exc.message.split(':')[0]})") from None
        if not isinstance(record, dict):
            raise UnifiedFormatError(f"line {number}: not a JSON object")
        records.append(record)
    check_unified(records)
    return records


def _looks_unified(data: bytes) -> bool:
    first = next((line for line in data.split(b"\n") if line.strip()), b"")
    try:
        record = loads(first)
    except StrictJSONError:
        return False
    provenance = record.get("provenance") if isinstance(record, dict) else None
    return isinstance(provenance, dict) and "component" in provenance


def render_path(
    path: Path,
    fmt: Format = "markdown",
    *,
    engine: str | None = None,
    budget_bytes: int | None = None,
    show_prompts: bool = False,
    masks: Iterable[str] = (),
    require_events: bool = False,
) -> str:
    """What ``bitexact sessions render PATH`` prints: a unified file or a parsed agent log.

    A log that yields no event renders as "No supported agent observations" (an empty trace is a valid one,
    T-UAS-004); with ``require_events`` (the CLI) it raises :class:`NoSessionEventsError` instead, saying
    why (the parser's unrecognized-format report) and whether ``engine`` may be the wrong one.
    """
    data = read_session_file(path)  # a regular file, bounded, read once (SessionFileError otherwise)
    if _looks_unified(data):
        records = read_unified(Path(path), data)
        return render(records, fmt, budget_bytes=budget_bytes, show_prompts=show_prompts, masks=masks)
    from bitexact.sessions import parse

    result = parse(data.decode("utf-8", errors="replace"), engine)
    if require_events and not result.events:  # not a session log, or not that engine's
        raise NoSessionEventsError(no_events_message(str(path), result.diagnostics, engine))
    return render(result.events, fmt, budget_bytes=budget_bytes, show_prompts=show_prompts, masks=masks)


STEP_SUMMARY_LIMIT = 1024 * 1024
"""GitHub Actions' hard limit for one step-summary file."""


@dataclass(frozen=True)
class Publication:
    """Outcome of ``publish_step_summary``: what was appended and any warning."""

    appended_bytes: int
    log_text: str
    warning: str = ""


def publish_step_summary(
    summary_path: Path,
    events: Sequence[Mapping[str, Any]],
    *,
    limit: int = STEP_SUMMARY_LIMIT,
    show_prompts: bool = False,
    masks: Iterable[str] = (),
) -> Publication:
    """Append the Markdown view to a step-summary file within its remaining budget (8.5).

    The view's budget is the smaller of the 1000 KiB view budget and what
    the existing file leaves below ``limit``.  With no room left nothing is
    appended and a warning is returned; the log view (``log_text``) is
    always produced in full budget, so logs still receive it.
    """
    path = Path(summary_path)
    used = path.stat().st_size if path.exists() else 0
    room = min(DEFAULT_BUDGET_BYTES, limit - used)
    log_text = render(events, "text", show_prompts=show_prompts, masks=masks)
    if room < 512:
        return Publication(0, log_text, f"step summary has {max(room, 0)} bytes left; view not appended")
    text = render(events, "markdown", budget_bytes=room, show_prompts=show_prompts, masks=masks)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return Publication(len(text.encode("utf-8")), log_text)


__all__ = [
    "DEFAULT_BUDGET_BYTES",
    "Publication",
    "publish_step_summary",
    "UnifiedFormatError",
    "check_unified",
    "cli_style_summary",
    "conversation_markdown",
    "is_unified",
    "plain_text_summary",
    "NoSessionEventsError",
    "read_unified",
    "render",
    "render_path",
]
