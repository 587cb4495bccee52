"""Agent session logs as evidence: one canonical event, one ``asserted`` entry.

``bitexact import session`` reads an engine log (any engine
:func:`bitexact.sessions.parse` supports) or a unified ``aw_session.jsonl``
(UAS 3.5: a ``session.format`` header, then events with provenance) and
records it as a BitExact run through the one write path
(:class:`bitexact.recording.RunWriter`), so the capture policy applies to
every event as it does to any other door. This module is a door: it builds
the entries' *data* and calls the write path; it builds no entry itself.

Public API::

    read_session(path, engine=None) -> SessionSource     # bytes -> digest + events
    load_session(data, name, engine=None) -> SessionSource
    kind_for(event_type) -> str                          # the documented mapping
    entry_data(source, item) -> dict                     # what one entry's data holds
    find_earlier_import(store, sha256) -> RunInfo | None
    import_session(recorder, source, run_id=None) -> ImportResult

A run reads: ``run_meta`` (observed: the recorder's record of the import,
with the file's SHA-256), a ``marker`` listing what the reader skipped (when
it skipped anything), one entry per event in source order (``asserted``: the
log is the engine's word, never our observation), and ``run_end`` sealing
it. The mapping and the data layout are documented in
``docs/sessions-evidence.md``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from bitexact.canon import canonicalize, loads
from bitexact.errors import BitExactError, CanonicalizationError, StrictJSONError
from bitexact.evidence.entry import MAX_DATA_DEPTH
from bitexact.recording import Recorder
from bitexact.sessions import parse
from bitexact.sessions.parsers.errors import SessionParseError
from bitexact.sessions.unified_model import FORMAT_VERSION
from bitexact.store import RunInfo, RunNotFoundError, Store

IMPORTER: Final[str] = "bitexact.sessions.evidence/1"
"""Names this importer and the version of its mapping and data layout (recorded in run_meta)."""

UNIFIED: Final[str] = "unified"
"""The ``engine`` value of a unified ``aw_session.jsonl`` (also accepted by ``--engine``)."""

MAX_SAFE_INTEGER: Final[int] = 2**53 - 1

# --------------------------------------------------------------------- mapping

EXACT_KINDS: Final[dict[str, str]] = {
    "session.init": "context",
    "session.result": "model",
    "session.error": "model",
    "subagent.request": "model",
    "usage.report": "model",
    "firewall.token_usage": "model",
    "firewall.model_routing": "model",
    "firewall.upstream_error": "model",
    "guardrail.daily_aic": "model",
    "mcp.tool_call": "tool_call",
    "mcp.rpc.request": "tool_call",
    "mcp.rpc.response": "tool_call",
    "skill.invoked": "context",
    "skill.context_delivered_ref": "context",
}
"""Event types mapped by their exact name (checked before the namespaces)."""

NAMESPACE_KINDS: Final[tuple[tuple[str, str], ...]] = (
    ("tool.", "tool_call"),
    ("subagent.", "tool_call"),
    ("safe_output.", "tool_call"),
    ("user.", "context"),
    ("assistant.", "context"),
    ("prompt.", "context"),
    ("model.", "model"),
    ("model_routing.", "model"),
    ("model_endpoint.", "model"),
    ("turn.", "model"),
)
"""Event type prefixes and their kind, for types no exact name covers."""

FALLBACK_KIND: Final[str] = "marker"
"""Everything else (lifecycle notices, runtime, workflow and unknown native
events) is an annotation of the run: a ``marker``."""

EVENT_PROV: Final[str] = "asserted"


def kind_for(event_type: str) -> str:
    """The entry kind an event of ``event_type`` is recorded as.

    Every result allows ``asserted`` provenance; ``http_call`` (observed
    only) is never produced.
    """
    exact = EXACT_KINDS.get(event_type)
    if exact is not None:
        return exact
    for prefix, kind in NAMESPACE_KINDS:
        if event_type.startswith(prefix):
            return kind
    return FALLBACK_KIND


# ---------------------------------------------------------------------- errors


class SessionImportError(BitExactError):
    """A session cannot be imported; the message says why and what to do."""


class SessionInputError(SessionImportError, ValueError):
    """The input cannot be read as a session (unreadable, not UTF-8, no events, unsupported format)."""


class AlreadyImportedError(SessionImportError):
    """These exact bytes were imported before; ``run_id`` names the earlier run."""

    def __init__(self, message: str, *, run_id: str, sealed: bool) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.sealed = sealed


class RunIdTakenError(SessionImportError):
    """``--run-id`` names a run that already exists."""

    def __init__(self, message: str, *, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id


# ------------------------------------------------------------------- the input


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
    """Read ``path`` and return its events; raises :class:`SessionInputError`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise SessionInputError(f"LOG: {path} is a directory, not a session file") from None
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
        events = tuple(SourceEvent(i, event) for i, event in enumerate(result.events))
        source = SessionSource(name, digest, len(data), result.engine, "log", events, tuple(result.diagnostics))
    if not _has_events(source):
        causes = "; ".join(source.diagnostics[:3]) or "no records"
        if len(source.diagnostics) > 3:
            causes += f"; {len(source.diagnostics) - 3} more"
        raise SessionInputError(
            f"{name}: no recognizable session events ({causes}); name the engine with --engine "
            "if detection picked the wrong one"
        )
    return source


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
    version = header["data"].get("version")
    if type(version) is not int or version < 1:
        raise SessionInputError(f"{name}: the session.format header's data.version must be a positive integer")
    if version != FORMAT_VERSION:
        raise SessionInputError(
            f"{name}: aw_session.jsonl format version {version} is not supported (this reader supports "
            f"{FORMAT_VERSION})"
        )
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


# ---------------------------------------------------------------- entry data

_SPLIT: Final[frozenset[str]] = frozenset({"type", "data"})


class _TooDeep(Exception):
    """Internal: a value nests deeper than an entry may hold."""


def _pointer_part(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _fit(value: Any, pointer: str, depth: int, coerced: dict[str, list[str]]) -> Any:
    """``value`` with unsafe numbers written as strings; raises :class:`_TooDeep`.

    Canonical JSON refuses integers past ±(2^53-1) and negative zero (bundle
    spec §1.2); the spec's advice is to record them as strings, and
    ``coerced`` lists where that was done, as JSON Pointers into the event.
    Containers are copied only when something under them changed. ``depth``
    is the level ``value`` sits at inside the entry's data (data itself is
    level 1), which may nest at most 125 levels (bundle spec §1.1).
    """
    if isinstance(value, dict):
        if depth > MAX_DATA_DEPTH:
            raise _TooDeep
        out = None
        for key, item in value.items():
            fitted = _fit(item, f"{pointer}/{_pointer_part(key)}", depth + 1, coerced)
            if fitted is not item:
                out = dict(value) if out is None else out
                out[key] = fitted
        return value if out is None else out
    if isinstance(value, list):
        if depth > MAX_DATA_DEPTH:
            raise _TooDeep
        items = None
        for index, item in enumerate(value):
            fitted = _fit(item, f"{pointer}/{index}", depth + 1, coerced)
            if fitted is not item:
                items = list(value) if items is None else items
                items[index] = fitted
        return value if items is None else items
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        coerced.setdefault("unsafe_integer", []).append(pointer)
        return str(value)
    if isinstance(value, float):
        if value == 0.0 and math.copysign(1.0, value) < 0:
            coerced.setdefault("negative_zero", []).append(pointer)
            return "-0.0"
        if value != value or value in (float("inf"), float("-inf")):
            coerced.setdefault("non_finite", []).append(pointer)
            return str(value)
        return value
    return value


def _as_text(value: Any) -> tuple[str, str]:
    """``value`` as canonical JSON text, else (numbers or depth canon refuses) compact sorted JSON."""
    try:
        return canonicalize(value).decode("utf-8"), "canonical-json"
    except CanonicalizationError:
        pass
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False), "json"
    except (RecursionError, ValueError, TypeError) as exc:
        raise SessionInputError(f"an event cannot be written even as JSON text: {exc}") from exc


def _source_block(source: SessionSource, item: SourceEvent) -> dict[str, Any]:
    block: dict[str, Any] = {"sha256": source.sha256, "name": source.name, "engine": source.engine,
                             "format": source.format}
    if item.line is not None:
        block["line"] = item.line
    return block


_PHASES: Final[dict[str, str]] = {"tool.execution_start": "started", "tool.execution_update": "update"}


def _display_keys(kind: str, event_type: str, data: Any) -> dict[str, Any]:
    """The bundle spec's guidance keys for the kind, derived from the event (for ``bitexact show``)."""
    if kind == "tool_call":
        keys: dict[str, Any] = {}
        if isinstance(data, dict) and isinstance(data.get("toolName"), str):
            keys["tool"] = data["toolName"]
        if event_type == "tool.execution_complete" and isinstance(data, dict):
            success = data.get("success")  # absent means unknown, never ok (T-UAS-014)
            keys["status"] = "ok" if success is True else "failed" if success is False else "unknown"
        else:
            keys["status"] = _PHASES.get(event_type, event_type.rsplit(".", 1)[-1])
        return keys
    if kind == "context":
        return {"name": event_type}
    if kind == "marker":
        return {"note": f"engine event {event_type}"}
    return {}


def entry_data(source: SessionSource, item: SourceEvent, *, as_text: bool = False) -> dict[str, Any]:
    """The data of the entry recording ``item``: ``{type, data, meta, index, source}`` and guidance keys.

    ``meta`` holds every top-level field of the event other than ``type`` and
    ``data`` (id, parentId, timestamp, provenance, ...), unchanged, so
    ``{"type": type, "data": data, **meta}`` is the event as read. A part
    nesting deeper than an entry may hold, or ``as_text``, is kept as JSON
    text under ``data_json`` / ``meta_json`` and named in ``as_text``.
    """
    event = item.event
    event_type = event["type"]
    kind = kind_for(event_type)
    parts = {"data": event["data"], "meta": {k: v for k, v in event.items() if k not in _SPLIT}}
    body: dict[str, Any] = {"type": event_type}
    coerced: dict[str, list[str]] = {}
    encoded: dict[str, str] = {}
    for part, value in parts.items():
        if not as_text:
            found: dict[str, list[str]] = {}
            try:
                body[part] = _fit(value, "/data" if part == "data" else "", 2, found)
            except _TooDeep:
                pass
            else:
                for cause, pointers in found.items():
                    coerced.setdefault(cause, []).extend(pointers)
                continue
        body[f"{part}_json"], encoded[part] = _as_text(value)
    body["index"] = item.index
    body["source"] = _source_block(source, item)
    if coerced:
        body["coerced"] = coerced
    if encoded:
        body["as_text"] = encoded
    for key, value in _display_keys(kind, event_type, event["data"]).items():
        body.setdefault(key, value)
    return body


# ----------------------------------------------------------------- re-imports

_NAME_DIGEST: Final = re.compile(r" sha256:([0-9a-f]{64})$")


def run_name(source: SessionSource) -> str:
    """The run's store name; it carries the digest so re-imports are found without reading entries."""
    return f"session import {source.name} sha256:{source.sha256}"


def find_earlier_import(store: Store, sha256: str) -> RunInfo | None:
    """The run that imported bytes with this SHA-256, or None.

    Scans the runs' store metadata (O(runs), no entry reads) for the digest
    in the name :func:`run_name` gives, then confirms it in the candidate's
    ``run_meta`` (the chain, not the free-text name, is authoritative). A run
    whose import stopped before its run_meta recorded nothing and is ignored.
    """
    for info in store.runs():
        name = info.meta.get("name") if isinstance(info.meta, dict) else None
        match = _NAME_DIGEST.search(name) if isinstance(name, str) else None
        if match is None or match.group(1) != sha256 or info.steps == 0:
            continue
        try:
            meta = store.entry(info.run_id, 0)
        except BitExactError:
            continue
        block = meta.get("data", {}).get("import")
        if meta.get("kind") == "run_meta" and isinstance(block, dict) and block.get("source_sha256") == sha256:
            return info
    return None


# ---------------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportResult:
    """What one import recorded."""

    run_id: str
    steps: int
    head_hash: str
    events: int
    kinds: dict[str, int] = field(default_factory=dict)
    """Entries per kind (run_meta, run_end, policy gap markers included)."""
    diagnostics: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "steps": self.steps, "head_hash": self.head_hash, "events": self.events,
                "kinds": dict(self.kinds), "diagnostics": list(self.diagnostics)}


_POSITION: Final = re.compile(r"\b(?:line|element) (\d+)")
_QUOTED: Final = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def diagnostics_marker(source: SessionSource) -> dict[str, Any]:
    """The ``marker`` data declaring what the reader skipped: count, positions and causes, never payloads.

    Parser diagnostics name positions and causes only; quoted literals (a
    skipped record's type, say) are still elided so nothing of the record
    reaches the chain.
    """
    positions = sorted({int(m) for d in source.diagnostics for m in _POSITION.findall(d)})
    causes = [_QUOTED.sub("'…'", d) for d in source.diagnostics]
    shown = "; ".join(causes[:3]) + ("; …" if len(causes) > 3 else "")
    return {
        "note": f"gap: the reader skipped or could not map part of {source.name}: {shown}",
        "count": len(source.diagnostics),
        "positions": positions,
        "diagnostics": causes,
        "source": {"sha256": source.sha256, "name": source.name, "engine": source.engine},
    }


def import_session(recorder: Recorder, source: SessionSource, *, run_id: str | None = None) -> ImportResult:
    """Record ``source`` as a sealed run; refuses bytes imported before and a taken ``run_id``.

    Raises :class:`AlreadyImportedError` (naming the earlier run) or
    :class:`RunIdTakenError`. Entries go through ``RunWriter.append``, so the
    capture policy in force applies to each event.
    """
    store = recorder.store
    earlier = find_earlier_import(store, source.sha256)
    if earlier is not None:
        state = "" if earlier.sealed else " (unsealed: that import was interrupted)"
        raise AlreadyImportedError(
            f"{source.name} (sha256 {source.sha256[:16]}…) was already imported as run {earlier.run_id}{state}; "
            f"inspect it with `bitexact show {earlier.run_id}`",
            run_id=earlier.run_id, sealed=earlier.sealed,
        )
    if run_id is not None:
        try:
            store.run(run_id)
        except RunNotFoundError:
            pass
        else:
            raise RunIdTakenError(f"--run-id: run {run_id!r} already exists; pick another id or omit --run-id",
                                  run_id=run_id)
    # Every entry's data is made before the run is created, so an event that
    # cannot be recorded refuses the import instead of leaving half a run.
    planned = [(item, kind_for(item.event["type"]), entry_data(source, item)) for item in source.events]
    writer = recorder.start(run_id=run_id, name=run_name(source), meta={"import": source.describe()})
    if source.diagnostics:
        writer.append("marker", diagnostics_marker(source), prov=EVENT_PROV)
    for item, kind, data in planned:
        try:
            writer.append(kind, data, prov=EVENT_PROV)
        except CanonicalizationError:
            # A value canonical JSON refuses that the fitting pass does not
            # catch (keys colliding once surrogate pairs fold): keep the
            # event as JSON text rather than dropping it.
            writer.append(kind, entry_data(source, item, as_text=True), prov=EVENT_PROV)
    sealed = writer.seal()
    kinds = Counter(entry["kind"] for entry in store.entries(writer.run_id))
    return ImportResult(writer.run_id, sealed.step + 1, sealed.hash, len(source.events), dict(kinds),
                        source.diagnostics)


__all__ = [
    "EXACT_KINDS",
    "FALLBACK_KIND",
    "IMPORTER",
    "NAMESPACE_KINDS",
    "UNIFIED",
    "AlreadyImportedError",
    "ImportResult",
    "RunIdTakenError",
    "SessionImportError",
    "SessionInputError",
    "SessionSource",
    "SourceEvent",
    "diagnostics_marker",
    "entry_data",
    "find_earlier_import",
    "import_session",
    "kind_for",
    "load_session",
    "read_session",
    "run_name",
]
