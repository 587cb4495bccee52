"""Reading a session file: its digest, its engine or unified header, its events."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from bitexact.canon import loads
from bitexact.errors import StrictJSONError
from bitexact.sessions import parse
from bitexact.sessions.evidence.errors import SessionInputError
from bitexact.sessions.evidence.mapping import IMPORTER, UNIFIED
from bitexact.sessions.parsers.errors import SessionParseError
from bitexact.sessions.readfile import SessionFileError, no_events_message, read_session_file
from bitexact.sessions.unified_model import FormatVersionError, header_version


@dataclass(frozen=True)
class SourceEvent:
    """One canonical event as read from the source, with where it was."""

    index: int
    """Position among the events read (for a unified file the header is 0)."""
    event: dict[str, Any]
    line: int | None = None
    """1-based physical line, when the framing gives one (unified files)."""


@dataclass(frozen=True)
class SessionSource:
    """A session file read for import: the bytes' digest, the framing and the events."""

    name: str
    sha256: str
    size: int
    engine: str
    """The parser engine that read a log, or ``"unified"``."""
    format: Literal["log", "unified"]
    events: tuple[SourceEvent, ...]
    diagnostics: tuple[str, ...] = ()
    """What the reader skipped or could not map, by position and cause."""
    format_version: int | None = None

    def describe(self) -> dict[str, Any]:
        """The ``import`` block of run_meta (no payloads)."""
        block: dict[str, Any] = {
            "source_sha256": self.sha256,
            "source_name": self.name,
            "source_bytes": self.size,
            "format": self.format,
            "engine": self.engine,
            "events": len(self.events),
            "skipped": len(self.diagnostics),
            "importer": IMPORTER,
        }
        if self.format_version is not None:
            block["format_version"] = self.format_version
        return block


def read_session(path: Path | str, *, engine: str | None = None) -> SessionSource:
    """Read ``path`` (a regular file, at most 1 GiB, read as of its size when opened) and return its events;
    raises :class:`SessionInputError`."""
    path = Path(path)
    try:
        data = read_session_file(path)
    except SessionFileError as exc:
        raise SessionInputError(f"LOG: {exc}") from None
    except OSError as exc:
        raise SessionInputError(f"LOG: cannot read {path}: {exc.strerror or exc}") from exc
    return load_session(data, path.name, engine=engine)


def load_session(data: bytes, name: str, *, engine: str | None = None) -> SessionSource:
    """Frame ``data`` as a unified file (leading ``session.format`` header) or parse it as an engine log.

    Raises :class:`SessionInputError` for text that is not UTF-8, a unified
    file of an unsupported version, ``engine`` contradicting the framing, an
    unknown engine, or an input with no recognizable events.
    """
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SessionInputError(f"{name}: not UTF-8 text (invalid byte at offset {exc.start})") from None
    if text.startswith("\ufeff"):  # a byte-order mark is framing, not content
        text = text[1:]
    header = _unified_header(text)
    if header is not None and engine not in (None, UNIFIED):
        raise SessionInputError(
            f"{name}: is a unified aw_session.jsonl (its first record is the session.format header); "
            f"--engine {engine} does not apply - drop --engine"
        )
    if header is None and engine == UNIFIED:
        raise SessionInputError(f"{name}: --engine unified, but the first record is not a session.format header")
    if header is not None:
        events, diagnostics, version = _read_unified(text, header, name)
        source = SessionSource(name, digest, len(data), UNIFIED, "unified", events, diagnostics, version)
    else:
        try:
            result = parse(text, engine)
        except SessionParseError as exc:
            raise SessionInputError(str(exc)) from exc
        # No events: no_events_message says why. "custom" delegates to a detected reader itself (its one
        # diagnostic names which): nothing to contradict.
        if engine is not None and engine != "custom" and result.events and result.diagnostics:
            _refuse_contradicted_engine(text, name, engine, len(result.diagnostics))
        events = tuple(SourceEvent(i, event) for i, event in enumerate(result.events))
        source = SessionSource(name, digest, len(data), result.engine, "log", events, tuple(result.diagnostics))
    if not _has_events(source):
        raise SessionInputError(no_events_message(name, source.diagnostics, engine if engine != UNIFIED else None))
    return source


def _refuse_contradicted_engine(text: str, name: str, engine: str, skipped: int) -> None:
    """Refuse (:class:`SessionInputError`) a forced ``--engine`` that skipped records the detected engine
    reads: a Claude Code log imported with ``--engine codex`` skipped 6 of its 7 records and was recorded,
    and its bytes, imported once only, could then never be imported right. Only when the forced reader
    skipped something (a log that reads whole under it is taken as the operator says), and only when the
    detected engine skips fewer records: detection that reads no better is no ground to overrule."""
    from bitexact.sessions.parsers.detect import detect_engine
    from bitexact.sessions.parsers.errors import UnrecognizedFormatError

    try:
        detected = detect_engine(text)
        if detected == engine:
            return
        theirs = parse(text, detected)
    except (UnrecognizedFormatError, SessionParseError):
        return
    if not theirs.events or len(theirs.diagnostics) >= skipped:
        return
    raise SessionInputError(
        f"{name}: --engine {engine} skipped or could not map {skipped} record(s), where the engine detected for"
        f" this log, {detected}, skips {len(theirs.diagnostics)}: it looks like a {detected} log. Nothing was"
        f" recorded. Import it with --engine {detected} (or without --engine); the same bytes are imported once"
        f" only, so an import under the wrong engine could not be redone. `bitexact sessions parse LOG"
        f" --engine {engine}` shows what {engine} reads"
    )


def _has_events(source: SessionSource) -> bool:
    return len(source.events) > (1 if source.format == "unified" else 0)


def _first_line(text: str) -> str | None:
    """The first non-blank line, found without splitting the whole (possibly large) text."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end].rstrip("\r")
        if line.strip():
            return line
        start = end + 1
    return None


def _unified_header(text: str) -> dict[str, Any] | None:
    """The leading ``session.format`` record of a unified file, or None (T-UAS-064).

    A collector-owned header carries ``provenance``; a source-native event
    that happens to be named ``session.format`` does not, and stays an
    ordinary event of an engine log.
    """
    first = _first_line(text)
    if first is None:
        return None
    try:
        record = loads(first)
    except StrictJSONError:
        return None
    if (isinstance(record, dict) and record.get("type") == "session.format"
            and isinstance(record.get("data"), dict) and isinstance(record.get("provenance"), dict)):
        return record
    return None


_STRICT_CAUSES: Final[tuple[str, ...]] = ("duplicate key", "invalid UTF-8", "nesting deeper", "non-finite",
                                          "integer")


def _strict_cause(exc: StrictJSONError) -> str:
    # The strict reader's messages can quote keys or digits of the record;
    # keep only the class of fault so no payload reaches a diagnostic.
    for prefix in _STRICT_CAUSES:
        if exc.message.startswith(prefix):
            return prefix
    return "invalid JSON"


def _read_unified(text: str, header: dict[str, Any], name: str) -> tuple[tuple[SourceEvent, ...], tuple[str, ...], int]:
    try:
        version = header_version(header["data"])
    except FormatVersionError as exc:
        raise SessionInputError(f"{name}: the session.format header: {exc}") from None
    events: list[SourceEvent] = []
    diagnostics: list[str] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        try:
            record = loads(line)
        except StrictJSONError as exc:
            diagnostics.append(f"line {number}: {_strict_cause(exc)}; record skipped")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("type"), str) \
                or not isinstance(record.get("data"), dict):
            diagnostics.append(f"line {number}: not an event (a string type and an object data); record skipped")
            continue
        events.append(SourceEvent(len(events), record, number))
    return tuple(events), tuple(diagnostics), version
