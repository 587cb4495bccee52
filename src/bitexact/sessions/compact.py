"""Compact unified session, profile version 1 (UAS 3.8, T-UAS-076..078).

A deterministic, bounded, intentionally lossy JSONL projection of an
already-redacted unified session for metadata consumers.  It is *not* the
full session: it keeps only the allowlisted event kinds and scalar fields,
at most 128 records and 16,384 UTF-8 bytes, and says what it dropped.

Full-session resolution (T-UAS-079): ``transport_envelope`` describes a
compact stream for a transport (profile, version, loss metadata, canonical
usage artifact IDs) and ``resolve_full_session`` retrieves the full file from
a local artifact directory, bound to a ``RunBinding``; downloading and
authenticating artifacts is the caller's transport.

``compact_events(events)`` projects decoded events in memory;
``compact(path)`` reads ``aw_session.jsonl`` with bounded framing: the file
size is snapshotted, at most 64 MiB of it is inspected, no line longer than
16 KiB is retained (an oversized line is skipped through its LF without
being decoded), and a final unterminated record is decoded only when it
ends at the snapshotted end.  Invalid retained records, I/O errors, missing,
empty, symlinked and non-regular files fail with ``CompactSourceError``, and
so does a file whose first record is not the collector's ``session.format``
header (T-UAS-064: a reader of the unified file inspects it first and reports
a missing header rather than assume the format).  Inputs are never modified.
"""

from __future__ import annotations

import json

import math
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bitexact.canon import loads
from bitexact.errors import BitExactError, StrictJSONError
from bitexact.sessions.unified_model import (
    FormatVersionError,
    header_version,
    is_format_header,
    supported_header,
)
from bitexact.sessions.unify.write import record_line

COMPACT_VERSION = 1
MAX_RECORDS = 128
MAX_BYTES = 16_384
MAX_SCAN_BYTES = 67_108_864
MAX_LINE_BYTES = 16_384
MAX_STRING_BYTES = 256
_CHUNK = 65_536

_ACCOUNTING = ("stepIndex", "provider", "model", "purpose", "status", "aic", "totalAic", "premiumRequests",
               "durationMs", "sessionId", "agentId")
FIELDS: dict[str, tuple[str, ...]] = {
    "session.format": ("version",),
    "workflow.info": ("engineId", "agentVersion", "cliVersion", "awfVersion", "mcpgVersion", "model",
                      "requestedModel", "triggerType", "dryRun", "workflowId", "workflowCallId", "repository",
                      "runId", "runAttempt", "ref", "sha"),
    "session.result": ("sourceEngine", "numTurns", "durationMs", "totalCostUsd", "status", "sourceType",
                       "sessionId", "agentId"),
    "usage.report": _ACCOUNTING,
    "firewall.token_usage": _ACCOUNTING,
    "guardrail.admission": ("status", "maxAiCredits", "threatDetectionMaxAiCredits", "evalsMaxAiCredits"),
    "guardrail.daily_aic": ("status", "exceeded", "total", "estimated", "threshold"),
    "workflow.job_result": ("jobId", "result", "durationMs"),
    "execution.result": ("outcome", "conclusion", "exitCode", "durationMs", "startedAt", "finishedAt"),
    "grader.result": ("id", "status", "value", "score", "unit", "passed", "direction", "threshold", "enabled",
                      "min", "max", "version"),
}
"""T-UAS-076: the only event kinds and scalar ``data`` keys that survive."""

USAGE_FIELDS = ("totalTokens", "inputTokens", "outputTokens", "reasoningOutputTokens", "cacheReadInputTokens",
                "cacheCreationInputTokens", "inputTokensIncludeCache")
RUN_FIELDS = ("id", "attempt", "graderCount", "passed", "failed", "errors")
PROVENANCE_FIELDS = ("component", "phase", "path", "index")
_WITH_USAGE = frozenset({"session.result", "usage.report", "firewall.token_usage"})


class CompactSourceError(BitExactError, ValueError):
    """The session file cannot be compacted; the message names the cause and position."""


def eligible(value: Any) -> bool:
    """A scalar that survives projection: finite number, boolean, or short valid string."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        try:
            return len(value.encode("utf-8")) <= MAX_STRING_BYTES  # lone surrogates fail here
        except UnicodeEncodeError:
            return False
    return False


def _scalars(source: Any, keys: Iterable[str]) -> dict[str, Any]:
    if not isinstance(source, Mapping):
        return {}
    return {k: source[k] for k in keys if k in source and eligible(source[k])}


def project(event: Any) -> dict[str, Any] | None:
    """The compact form of one decoded event, or ``None`` when its kind is dropped."""
    if not isinstance(event, Mapping):
        return None
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in FIELDS:
        return None
    data = _scalars(event.get("data"), FIELDS[kind])
    raw = event.get("data")
    source: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if kind in _WITH_USAGE and isinstance(source.get("usage"), Mapping):
        usage = _scalars(source["usage"], USAGE_FIELDS)
        if usage:
            data["usage"] = usage
    if kind == "grader.result" and isinstance(source.get("run"), Mapping):
        run = _scalars(source["run"], RUN_FIELDS)
        if run:
            data["run"] = run
    out: dict[str, Any] = {"type": kind, "data": data}
    if "timestamp" in event and eligible(event["timestamp"]) and not isinstance(event["timestamp"], bool):
        out["timestamp"] = event["timestamp"]
    provenance = _scalars(event.get("provenance"), PROVENANCE_FIELDS)
    if provenance:
        out["provenance"] = provenance
    return out


_EXPECTED_HEADER = ("the first record of a unified session must be the collector's session.format header,"
                    ' e.g. {"type":"session.format","data":{"version":1},"provenance":{"component":"collector",'
                    '"phase":"conclusion","path":"usage/aw_session.jsonl","index":0}}')
"""What a file without the header is told was expected (T-UAS-064's header line)."""


def _found(event: Any) -> str:
    """What stands where the header was expected, by its type only: a record's values are never quoted."""
    kind = event.get("type") if isinstance(event, Mapping) else None
    if kind == "session.format":
        return "a session.format record without the collector's provenance (a source's own, not the header)"
    if isinstance(kind, str) and 0 < len(kind) <= 64 and kind.isprintable():
        return f"a {kind!r} record"
    return "a record with no usable type" if isinstance(event, Mapping) else f"a JSON {type(event).__name__}"


def _missing_header(where: str, found: str) -> CompactSourceError:
    return CompactSourceError(f"{where}: missing file-format header: {_EXPECTED_HEADER}; found {found}")


def _check_header(event: Any, where: str, *, required: bool = False) -> None:
    """Refuse a first record that is the file-format header with a version no reader accepts (T-UAS-064),
    and, when ``required`` (a file), a first record that is not the header at all."""
    if required and not is_format_header(event):
        raise _missing_header(where, _found(event))
    if is_format_header(event):
        try:
            header_version(event.get("data"))
        except FormatVersionError as exc:
            raise CompactSourceError(f"{where}: the session.format header: {exc}") from None


class _Budget:
    def __init__(self, *, header_required: bool = False) -> None:
        self.lines: list[bytes] = []
        self.used = 0
        self.omitted = 0
        self.budget_hit = False
        self.first = True
        self.header_required = header_required

    def offer(self, event: Any, where: str = "record 1") -> None:
        """Project ``event`` and keep it if it fits; the first one offered is checked first: a header's
        version always, and that it is the header at all when ``header_required``."""
        if self.first:
            self.first = False
            _check_header(event, where, required=self.header_required)
        projected = project(event)
        if projected is None:
            self.omitted += 1
            return
        line = record_line(projected) + b"\n"
        if len(self.lines) + 1 > MAX_RECORDS or self.used + len(line) > MAX_BYTES:
            self.omitted += 1  # omitted whole; a later smaller record may still fit
            self.budget_hit = True
            return
        self.lines.append(line)
        self.used += len(line)

    def result(self, *, oversized: int, scan_truncated: bool, omitted_extra: int = 0) -> dict[str, Any]:
        return {
            "version": COMPACT_VERSION,
            "session": b"".join(self.lines).decode("utf-8"),
            "includedEvents": len(self.lines),
            "omittedEvents": self.omitted + omitted_extra,
            "oversizedLines": oversized,
            "scanTruncated": scan_truncated,
            "truncated": self.budget_hit or oversized > 0 or scan_truncated,
        }


def compact_events(events: Iterable[Any]) -> dict[str, Any]:
    """The in-memory producer: project decoded ``events`` (not modified) within the budgets."""
    budget = _Budget()
    for event in events:
        budget.offer(event)
    return budget.result(oversized=0, scan_truncated=False)


_UNPRINTED = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters JSON may carry raw that a terminal would act on (C1 controls, line separators,
bidirectional overrides)."""


def format_result(result: dict[str, Any]) -> str:
    """What ``bitexact sessions compact`` prints: the result object as one JSON line.

    Recorded strings may hold C1 controls and bidirectional overrides: they
    are written as JSON escapes, so the line decodes to the same result but
    cannot drive or reorder the terminal it is printed on.
    """
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    return _UNPRINTED.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n"


def _decode(line: bytes, number: int) -> Any:
    try:
        return loads(line)
    except StrictJSONError as exc:
        if exc.message != _OVERFLOW:
            raise CompactSourceError(f"line {number}: invalid record ({exc.message.split(':')[0]})") from None
    # A number literal too large for a double (1e400) is valid JSON that reads as infinite: the record
    # stands, and the non-finite value is omitted by the projection (T-UAS-076), never the whole file.
    # Read again as strictly in every other way (no NaN or Infinity, no repeated key).
    try:
        return _OVERFLOW_DECODER.decode(line.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise CompactSourceError(f"line {number}: invalid record ({exc})") from None


_OVERFLOW = "non-finite number is not allowed"
"""What the strict reader says of a number literal that overflows a double, and of nothing else."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


_OVERFLOW_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_unique)


def compact(path: Path) -> dict[str, Any]:
    """The file producer (T-UAS-078): bounded framing over a snapshotted regular file."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise CompactSourceError(f"{path}: no such file") from None
    except OSError as exc:
        raise CompactSourceError(f"{path}: cannot inspect ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        raise CompactSourceError(f"{path}: symbolic links are refused")
    if not stat.S_ISREG(st.st_mode):
        raise CompactSourceError(f"{path}: not a regular file")
    snapshot = st.st_size
    if snapshot == 0:
        raise CompactSourceError(f"{path}: empty file")
    limit = min(snapshot, MAX_SCAN_BYTES)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        raise CompactSourceError(f"{path}: cannot open ({exc.strerror})") from None
    budget = _Budget(header_required=True)
    oversized = 0
    number = 0
    line = bytearray()
    skipping = False
    consumed = 0
    try:
        while consumed < limit:
            chunk = os.read(fd, min(_CHUNK, limit - consumed))
            if not chunk:
                break  # the file shrank: stop at what exists
            consumed += len(chunk)
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if not skipping:
                    if len(line) + len(piece) > MAX_LINE_BYTES:
                        skipping, line = True, bytearray()  # never retain an oversized line
                    else:
                        line += piece
                if end < 0:
                    break
                number += 1
                if skipping:
                    if budget.first:  # the header is one short line: a longer first one is not it
                        raise _missing_header(f"line {number}", f"a line over {MAX_LINE_BYTES} bytes")
                    oversized += 1
                    skipping = False
                elif line.strip():
                    budget.offer(_decode(bytes(line), number), f"line {number}")
                line = bytearray()
                start = end + 1
    except OSError as exc:
        raise CompactSourceError(f"{path}: read failed ({exc.strerror})") from None
    finally:
        os.close(fd)
    scan_truncated = snapshot > MAX_SCAN_BYTES
    if not skipping and line.strip() and consumed == snapshot:
        # A final unterminated record counts only when it reaches the snapshotted end.
        budget.offer(_decode(bytes(line), number + 1), f"line {number + 1}")
    if budget.first:  # no record at all: blank lines, or one first line too long to be the header
        found = f"a line over {MAX_LINE_BYTES} bytes" if skipping else "no record, only blank lines"
        raise _missing_header(f"line {number + 1}" if skipping else "line 1", found)
    if skipping and consumed == snapshot:
        # The same record, too long to keep: a completed oversized line, lost and reported as such
        # (one cut off by the scan limit is not complete, and counts under scanTruncated instead).
        oversized += 1
    return budget.result(oversized=oversized, scan_truncated=scan_truncated, omitted_extra=oversized)


# ----------------------------------------------------------------- full-session resolution (T-UAS-079)
#
# What is local to this library: the transport descriptor of a compact
# stream (profile, loss metadata, usage artifact IDs) and retrieval of the
# full aw_session.jsonl from a local directory of downloaded artifacts, bound
# to the caller's run identity.  Downloading artifacts and authenticating the
# repository are the caller's transport (GitHub API), not implemented here.

_ARTIFACT_ID = re.compile(r"[1-9][0-9]{0,19}\Z")
ARTIFACT_METADATA = "artifact.json"
"""Per-artifact metadata file of a local artifact directory (this library's layout)."""
FULL_SESSION_FILE = "aw_session.jsonl"
_LOSS_FIELDS = ("includedEvents", "omittedEvents", "oversizedLines", "scanTruncated", "truncated")


class CompactTransportError(BitExactError, ValueError):
    """A transport descriptor or artifact binding input is invalid (the message names the field)."""


def artifact_id(value: Any, field: str = "artifactId") -> str:
    """A usage artifact ID as its canonical positive-decimal string.

    Accepts a positive integer or a canonical decimal string; refuses
    floats (even integral ones), booleans, zero, signs, leading zeros and
    exponents - an ID is never a floating-point number.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return str(value)
    if isinstance(value, str) and _ARTIFACT_ID.match(value):
        return value
    raise CompactTransportError(f"{field}: not a positive decimal artifact ID ({type(value).__name__})")


def transport_envelope(result: Mapping[str, Any], artifact_ids: Iterable[Any] = ()) -> dict[str, Any]:
    """The descriptor a transport sends with a compact stream.

    It names the compact profile and version, carries the loss/coverage
    metadata of ``result`` unchanged, and lists the usage artifact IDs of
    the uploaded full session (``fullSession.available`` is false when none
    were uploaded).  It never claims to be, or to contain, the full session.
    """
    if result.get("version") != COMPACT_VERSION:
        raise CompactTransportError(f"version: not compact profile version {COMPACT_VERSION}")
    if not isinstance(result.get("session"), str):
        raise CompactTransportError("session: compact JSONL text is required")
    missing = [name for name in _LOSS_FIELDS if name not in result]
    if missing:
        raise CompactTransportError(f"{missing[0]}: loss metadata is required")
    ids: list[str] = []
    for position, value in enumerate(artifact_ids):
        canonical = artifact_id(value, f"artifactIds[{position}]")
        if canonical not in ids:
            ids.append(canonical)
    envelope: dict[str, Any] = {"profile": "compact", "version": COMPACT_VERSION, "session": result["session"]}
    envelope.update({name: result[name] for name in _LOSS_FIELDS})
    envelope["fullSession"] = {"available": bool(ids), "artifactIds": ids}
    return envelope


@dataclass(frozen=True)
class RunBinding:
    """The authenticated run an artifact must belong to before it is consumed."""

    repository: str
    run_id: str
    run_attempt: str
    workflow: str
    """The executing workflow invocation (for example its workflow ref)."""


@dataclass(frozen=True)
class FullSession:
    """The outcome of resolving a compact stream's full session."""

    available: bool
    artifact_id: str | None = None
    path: Path | None = None
    reasons: tuple[str, ...] = ()
    """Why each candidate was not used (never payload text)."""


def _metadata(directory: Path, candidate: str) -> dict[str, Any] | str:
    meta_path = directory / candidate / ARTIFACT_METADATA
    if meta_path.is_symlink() or not meta_path.is_file():
        return "absent"
    try:
        meta = loads(meta_path.read_bytes(), max_bytes=65_536)
    except (OSError, StrictJSONError):
        return "unreadable metadata"
    return meta if isinstance(meta, dict) else "unreadable metadata"


def _binding_mismatch(meta: Mapping[str, Any], candidate: str, binding: RunBinding) -> str | None:
    expected = {"id": candidate, "repository": binding.repository, "runId": binding.run_id,
                "runAttempt": binding.run_attempt, "workflow": binding.workflow}
    for name, value in expected.items():
        recorded = meta.get(name)
        if isinstance(recorded, int) and not isinstance(recorded, bool):
            recorded = str(recorded)
        if recorded != value:
            return f"{name} does not match the current run"
    return None


def _full_session_file(directory: Path, candidate: str) -> Path | str:
    path = directory / candidate / FULL_SESSION_FILE
    if path.is_symlink():
        return "aw_session.jsonl is a symbolic link"
    if not path.is_file() or path.stat().st_size == 0:
        return "aw_session.jsonl absent or empty"
    with path.open("rb") as handle:
        first = handle.readline(MAX_LINE_BYTES + 1)
    try:
        header = loads(first)
    except StrictJSONError:
        return "aw_session.jsonl has no valid format header"
    if not supported_header(header):
        return "aw_session.jsonl has no version-1 format header"
    return path


def resolve_full_session(directory: Path, artifact_ids: Iterable[Any], binding: RunBinding) -> FullSession:
    """Find the full ``aw_session.jsonl`` of a compact stream in a local artifact directory.

    ``directory/<id>/artifact.json`` records the artifact's ``id``,
    ``repository``, ``runId``, ``runAttempt``, ``workflow`` and optional
    ``expired``; ``directory/<id>/aw_session.jsonl`` is the full session.
    Candidates are tried in the given order (initial upload, then retries);
    the first that is bound to ``binding`` in every field, not expired, and
    whose file carries the version-1 header is returned.  Otherwise the
    result is explicitly unavailable with one reason per candidate - the
    compact stream is never substituted for it.
    """
    directory = Path(directory)
    reasons: list[str] = []
    for position, value in enumerate(artifact_ids):
        candidate = artifact_id(value, f"artifactIds[{position}]")
        meta = _metadata(directory, candidate)
        if isinstance(meta, str):
            reasons.append(f"{candidate}: {meta}")
            continue
        mismatch = _binding_mismatch(meta, candidate, binding)
        if mismatch is not None:
            reasons.append(f"{candidate}: {mismatch}")
            continue
        if meta.get("expired") is not False and "expired" in meta:
            reasons.append(f"{candidate}: expired")
            continue
        found = _full_session_file(directory, candidate)
        if isinstance(found, str):
            reasons.append(f"{candidate}: {found}")
            continue
        return FullSession(True, candidate, found, tuple(reasons))
    if not reasons:
        reasons.append("no usage artifact ID was provided")
    return FullSession(False, None, None, tuple(reasons))
