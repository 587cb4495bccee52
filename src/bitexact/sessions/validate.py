"""Validation of canonical traces and unified session files (UAS 3.6, T-UAS-064, T-UAS-067).

``validate("agent", path)`` checks a canonical trace (``agent-session.jsonl``
or a JSON array) against the generated canonical schema.
``validate("unified", path)`` checks ``aw_session.jsonl``: compact JSONL
framing, the leading version-1 header, every record against the generated
unified schema, provenance paths, source-local order and timestamp
interleaving, and the single ``agent.execution`` aggregate.

Validation never repairs, redacts or drops records, and diagnostics carry
positions and causes only - never payload text (3.6).  Records are checked
one at a time as they are read.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bitexact.canon import loads
from bitexact.errors import BitExactError, StrictJSONError
from bitexact.sessions.draft7 import Check, compile_schema
from bitexact.sessions.readfile import read_session_file
from bitexact.sessions.render.escape import shown as _shown
from bitexact.sessions.schema import CANONICAL_SCHEMA_FILE, UNIFIED_SCHEMA_FILE, load_schema
from bitexact.sessions.unified_model import (
    UNIFIED_PATH,
    FormatVersionError,
    header_version,
    is_format_header,
    whole_number,
)

Kind = Literal["agent", "unified"]
MAX_DIAGNOSTICS = 200
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')



class ValidationInputError(BitExactError, ValueError):
    """The validator was asked for an unknown kind or format."""


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of one validation: counts for stdout, diagnostics for stderr."""

    kind: str
    path: str
    records: int
    counts: dict[str, int]
    diagnostics: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when no diagnostic was raised."""
        return not self.diagnostics

    @property
    def exit_code(self) -> int:
        """0 on success, 1 on any diagnostic."""
        return 0 if self.ok else 1

    def stdout(self) -> str:
        """Record counts (what ``bitexact sessions validate`` prints on stdout)."""
        # Record types and object keys come from the file (shown escaped, see _shown).
        lines = [f"{self.kind} {_shown(self.path)}: {self.records} records, "
                 f"{'valid' if self.ok else 'INVALID'}"]
        lines.extend(f"  {_shown(kind)}: {n}" for kind, n in sorted(self.counts.items()))
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        """The outcome as one JSON document (``--json``): counts and diagnostics, still no payload."""
        return {"kind": self.kind, "path": self.path, "records": self.records, "valid": self.ok,
                "counts": dict(sorted(self.counts.items())), "diagnostics": list(self.diagnostics)}

    def stderr(self) -> str:
        """Structural diagnostics (what the command prints on stderr); no payloads."""
        return "".join(f"{d}\n" for d in self.diagnostics)


class _Diagnostics:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.dropped = 0

    def add(self, message: str) -> None:
        if len(self.items) < MAX_DIAGNOSTICS:
            self.items.append(_shown(message))  # a JSON pointer quotes the file's keys
        else:
            self.dropped += 1

    def final(self) -> tuple[str, ...]:
        extra = [f"... {self.dropped} further diagnostics not shown"] if self.dropped else []
        return tuple(self.items + extra)


def _record_checks(kind: Kind) -> tuple[Check, Check]:
    """``(first-record check, other-record check)`` from the shipped schema."""
    if kind == "agent":
        schema = load_schema(CANONICAL_SCHEMA_FILE)
        event = compile_schema(schema, schema["definitions"]["CanonicalEvent"])
        return event, event
    schema = load_schema(UNIFIED_SCHEMA_FILE)
    return (compile_schema(schema, schema["definitions"]["FormatHeader"]),
            compile_schema(schema, schema["definitions"]["UnifiedEvent"]))


def _frame_jsonl(data: bytes, diagnostics: _Diagnostics, *, compact: bool) -> Iterator[tuple[str, Any]]:
    """``(position, record)`` per line; framing faults become diagnostics."""
    if compact and data and not data.endswith(b"\n"):
        diagnostics.add("file: missing trailing newline after the final record")
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        where = f"line {number}"
        if not raw.strip():
            if compact:
                diagnostics.add(f"{where}: blank line (compact JSONL has none)")
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            diagnostics.add(f"{where}: invalid UTF-8 at byte {exc.start}")
            continue
        if compact and re.search(r"[ \t\r\n]", _STRINGS.sub("", text)):
            diagnostics.add(f"{where}: whitespace outside strings (not compact JSONL)")
        try:
            record = loads(text)
        except StrictJSONError as exc:
            diagnostics.add(f"{where}: invalid JSON ({exc.message.split(':')[0]})")
            continue
        yield where, record


def _frame_array(data: bytes, diagnostics: _Diagnostics) -> Iterator[tuple[str, Any]]:
    try:
        document = loads(data)
    except StrictJSONError as exc:
        diagnostics.add(f"file: invalid JSON ({exc.message.split(':')[0]})")
        return
    if not isinstance(document, list):
        diagnostics.add("file: a JSON session must be an array of records")
        return
    for index, record in enumerate(document):
        yield f"record {index}", record


class _UnifiedRules:
    """Header, singleton, provenance order and interleaving rules of the unified file."""

    def __init__(self, diagnostics: _Diagnostics) -> None:
        self.d = diagnostics
        self.count = 0
        self.executions = 0
        self.collections = 0
        self.last_index: dict[tuple[Any, Any, Any], int] = {}
        self.observed: list[tuple[str, tuple[Any, Any, Any], int | None]] = []

    def header(self, where: str, record: Any) -> bool:
        """Check the leading record; True when it is a file-format header."""
        if not is_format_header(record):
            self.d.add(f"{where}: missing file-format header (the first record must be the collector's "
                       "session.format)")
            return False
        try:
            header_version(record.get("data"))
        except FormatVersionError as exc:
            self.d.add(f"{where}: {exc}")
        return True

    def record(self, where: str, record: Any) -> None:
        self.count += 1
        if not isinstance(record, dict):
            return
        kind = record.get("type")
        provenance = record.get("provenance")
        if not isinstance(provenance, dict):
            return
        collector = provenance.get("component") == "collector"
        if self.count > 1 and kind == "session.format" and collector:
            self.d.add(f"{where}: second collector file-format header")
        if kind == "agent.execution":
            self.executions += 1
            if self.executions == 2:
                self.d.add(f"{where}: more than one agent.execution aggregate")
        if kind == "session.collection" and collector:
            self.collections += 1
            if self.collections == 2:
                self.d.add(f"{where}: more than one session.collection record")
        source = (provenance.get("component"), provenance.get("phase"), provenance.get("path"))
        wrong = next((name for name, value in zip(("component", "phase", "path"), source)
                      if value is not None and not isinstance(value, str)), None)
        if wrong is not None:  # a list or object cannot name a source (nor key one): reported, left out of ordering
            self.d.add(f"{where}: provenance.{wrong} must be a string, not {type(provenance.get(wrong)).__name__}")
            return
        index = whole_number(provenance.get("index"))
        # OTLP batches are unordered: their records follow their own clocks.
        if index is not None and source[0] != "otel":
            last = self.last_index.get(source)
            if last is not None and index <= last:
                self.d.add(f"{where}: provenance index {index} does not follow {last} "
                           f"of the same source (source-local order)")
            self.last_index[source] = index
        if collector or self.count == 1:
            return
        self.observed.append((where, source, whole_number(provenance.get("timestampMs"))))

    def _anchors(self) -> list[int | None]:
        # The merge-only anchors of T-UAS-056 at millisecond precision: OTLP
        # records by their own clock; sequential sources by the first
        # timestamp (for the untimed prefix), then the running maximum.
        first: dict[tuple[Any, Any, Any], int] = {}
        for _where, source, stamp in self.observed:
            if stamp is not None and source not in first:
                first[source] = stamp
        latest: dict[tuple[Any, Any, Any], int] = {}
        anchors: list[int | None] = []
        for _where, source, stamp in self.observed:
            if source[0] == "otel":
                anchors.append(stamp)
                continue
            current = latest.get(source, first.get(source))
            if stamp is not None and (current is None or stamp > current):
                current = stamp
            if current is not None:
                latest[source] = current
            anchors.append(current)
        return anchors

    def finish(self) -> None:
        if self.count == 0:
            self.d.add("file: empty (the version header is required)")
            return
        previous: int | None = None
        tail: str | None = None
        for (where, _source, _stamp), anchor in zip(self.observed, self._anchors()):
            if anchor is None:
                tail = tail or where
                continue
            if tail is not None:
                self.d.add(f"{where}: timed record after the untimed tail starting at {tail}")
            elif previous is not None and anchor < previous:
                self.d.add(f"{where}: timestamp order regresses across sources (interleaving)")
            previous = anchor if previous is None else max(previous, anchor)


def validate_records(kind: Kind, records: Iterable[tuple[str, Any]],
                     diagnostics: _Diagnostics | None = None) -> tuple[int, Counter[str], _Diagnostics]:
    """Check ``(position, record)`` pairs; returns (count, per-type counts, diagnostics)."""
    if kind not in ("agent", "unified"):
        raise ValidationInputError(f"unknown session kind {kind!r}; expected 'agent' or 'unified'")
    d = diagnostics or _Diagnostics()
    first_check, check = _record_checks(kind)
    rules = _UnifiedRules(d) if kind == "unified" else None
    counts: Counter[str] = Counter()
    total = 0
    for where, record in records:
        if isinstance(record, dict) and isinstance(record.get("type"), str):
            counts[record["type"]] += 1
        errors: list[str] = []
        if rules is not None and total == 0 and rules.header(where, record):
            first_check(record, "", errors)
        else:
            check(record, "", errors)
        for error in errors:
            d.add(f"{where}: {error}")
        if rules is not None:
            rules.record(where, record)
        total += 1
    if rules is not None:
        rules.finish()
    return total, counts, d


def validate(kind: Kind, path: Path, *, fmt: Literal["json", "jsonl"] | None = None) -> ValidationReport:
    """Validate the file at ``path`` as an ``agent`` trace or a ``unified`` session.

    ``fmt`` selects JSON-array or JSONL input; by default a ``.json`` name
    means an array and anything else JSONL.
    """
    if kind not in ("agent", "unified"):
        raise ValidationInputError(f"unknown session kind {kind!r}; expected 'agent' or 'unified'")
    path = Path(path)
    fmt = fmt or ("json" if path.suffix == ".json" else "jsonl")
    if fmt not in ("json", "jsonl"):
        raise ValidationInputError(f"unknown format {fmt!r}; expected 'json' or 'jsonl'")
    diagnostics = _Diagnostics()
    try:
        data = read_session_file(path)  # a device or a FIFO never ends: SessionFileError, which the CLI exits 2 on
    except OSError as exc:
        diagnostics.add(f"file: cannot read ({exc.strerror})")
        return ValidationReport(kind, str(path), 0, {}, diagnostics.final())
    if fmt == "json":
        framed = _frame_array(data, diagnostics)
    else:
        framed = _frame_jsonl(data, diagnostics, compact=kind == "unified")
    total, counts, diagnostics = validate_records(kind, framed, diagnostics)
    return ValidationReport(kind, str(path), total, dict(counts), diagnostics.final())


__all__ = ["ValidationInputError", "ValidationReport", "validate", "validate_records", "UNIFIED_PATH"]
