"""Export a run as a signed bundle: ``json``, streaming ``jsonl`` or ``dsse`` (bundle spec §3, §10).

The exporter reads entries through a callable so JSONL can stream a run of
any size twice (once for the head and the redaction markers the signature
binds, once to write) in constant memory.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from bitexact.canon import canonicalize
from bitexact.crypto import SigningKey
from bitexact.errors import EvidenceError
from bitexact.evidence.entry import MAX_DATA_DEPTH, deeper_than
from bitexact.evidence.paths import parse_field
from bitexact.evidence.redaction import check_redactable, redact_entry, redactions_map
from bitexact.evidence.signature import sign_container
from bitexact.evidence.vocabulary import (
    DSSE_PAYLOAD_TYPE,
    FORMAT_JSON,
    FORMAT_JSONL,
    RUN_PREDICATE,
    STATEMENT_TYPE,
)


BundleFormat = Literal["json", "jsonl", "dsse"]
FORMATS: Final[tuple[str, ...]] = ("json", "jsonl", "dsse")


class RunReader(Protocol):
    """The read side of a store, as the exporter uses it."""

    def run(self, run_id: str) -> Any: ...
    def head(self, run_id: str) -> tuple[int, str]: ...
    def entries(self, run_id: str, start: int = 0, stop: int | None = None) -> Iterable[dict[str, Any]]: ...
    def checkpoints(self, run_id: str) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class RunSource:
    """Everything an export reads about one run."""

    run_id: str
    entries: Callable[[], Iterable[dict[str, Any]]]
    checkpoints: list[dict[str, Any]]
    anchors: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_store(cls, store: RunReader, run_id: str) -> RunSource:
        """``run_id`` as it stands now in a store (raises the store's RunNotFoundError).

        The run's length is fixed here: every read of the entries (a JSONL
        export reads them twice) stops at it, and checkpoints past it are left
        out, so a run still being recorded exports as the prefix it was.
        """
        store.run(run_id)
        steps, _ = store.head(run_id)
        checkpoints = [cp for cp in store.checkpoints(run_id) if cp.get("steps", 0) <= steps]
        return cls(run_id, lambda: store.entries(run_id, 0, steps), checkpoints)


@dataclass(frozen=True)
class ExportResult:
    path: Path
    format: str
    run_id: str
    steps: int
    head_hash: str
    redacted_fields: int
    bytes_written: int


def redaction_plan(fields: Iterable[str]) -> dict[int, list[str]]:
    """Parse ``STEP:PATH`` export redactions into step -> paths."""
    plan: dict[int, list[str]] = {}
    for token in fields:
        step, path = parse_field(token)
        paths = plan.setdefault(step, [])
        if path not in paths:
            paths.append(path)
    return plan


def _exported(source: RunSource, plan: dict[int, list[str]]) -> Iterator[dict[str, Any]]:
    seen: set[int] = set()
    for entry in source.entries():
        step = entry["step"]
        paths = plan.get(step)
        if paths:
            seen.add(step)
            pending = [p for p in paths if p not in entry.get("redacted", [])]
            for path in pending:
                check_redactable(entry, path)
            entry = redact_entry(entry, pending) if pending else entry
        yield entry
    missing = sorted(set(plan) - seen)
    if missing:
        raise EvidenceError(f"--redact names step {missing[0]}, but run {source.run_id} has no such step")


def _summary(source: RunSource, plan: dict[int, list[str]]) -> tuple[int, str, dict[str, list[str]]]:
    steps, head, markers = 0, "", {}
    for entry in _exported(source, plan):
        steps += 1
        head = entry["hash"]
        if entry.get("redacted"):
            markers[entry["step"]] = list(entry["redacted"])
    if steps == 0:
        raise EvidenceError(f"run {source.run_id} has no entries: an empty chain is not evidence of a run")
    return steps, head, redactions_map(markers)


def _container(fmt: str, source: RunSource, head: str) -> dict[str, Any]:
    container: dict[str, Any] = {"format": fmt, "run_id": source.run_id, "chain": {"head_hash": head}}
    container["checkpoints"] = list(source.checkpoints)
    if source.anchors:
        container["anchors"] = list(source.anchors)
    return container


def bundle_document(source: RunSource, key: SigningKey, plan: dict[int, list[str]] | None = None) -> dict[str, Any]:
    """The complete, signed JSON-form bundle."""
    plan = plan or {}
    entries = list(_exported(source, plan))
    if not entries:
        raise EvidenceError(f"run {source.run_id} has no entries: an empty chain is not evidence of a run")
    markers = {e["step"]: e["redacted"] for e in entries if e.get("redacted")}
    bundle = _container(FORMAT_JSON, source, entries[-1]["hash"])
    bundle["entries"] = entries
    bundle["signature"] = sign_container(bundle, redactions_map(markers), key)
    return bundle


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE pre-authentication encoding."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def dsse_envelope(bundle: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """Wrap a signed JSON-form bundle as an in-toto statement in a DSSE envelope."""
    for entry in bundle["entries"]:
        if deeper_than(entry.get("data", {}), MAX_DATA_DEPTH - 1):
            raise EvidenceError(
                f"step {entry['step']}: data nests deeper than {MAX_DATA_DEPTH - 1} levels,"
                " too deep to wrap in DSSE (export it as json or jsonl instead)"
            )
    statement = {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": bundle["run_id"], "digest": {"head": bundle["chain"]["head_hash"]}}],
        "predicateType": RUN_PREDICATE,
        "predicate": bundle,
    }
    payload = canonicalize(statement)
    signature = key.sign(pae(DSSE_PAYLOAD_TYPE, payload))
    return {
        "payloadType": DSSE_PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [
            {"keyid": key.key_id, "public_key": key.public_hex, "sig": base64.b64encode(signature).decode("ascii")}
        ],
    }


def _atomic_write(path: Path, chunks: Iterable[bytes]) -> int:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    written = 0
    try:
        with open(tmp, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
                written += len(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return written


def _jsonl_lines(
    source: RunSource,
    key: SigningKey,
    plan: dict[int, list[str]],
    head: str,
    redactions: dict[str, list[str]],
) -> Iterator[bytes]:
    header = _container(FORMAT_JSONL, source, head)
    header["signature"] = sign_container(header, redactions, key)
    yield canonicalize(header) + b"\n"
    for entry in _exported(source, plan):
        yield canonicalize(entry) + b"\n"


def export_run(
    source: RunSource,
    path: Path,
    key: SigningKey,
    *,
    fmt: str = "json",
    redact: Iterable[str] = (),
) -> ExportResult:
    """Write ``source`` as a signed bundle at ``path`` (atomically)."""
    if fmt not in FORMATS:
        raise EvidenceError(f"unknown bundle format {fmt!r}: choose one of {', '.join(FORMATS)}")
    plan = redaction_plan(redact)
    if fmt == "jsonl":
        steps, head, redactions = _summary(source, plan)
        written = _atomic_write(path, _jsonl_lines(source, key, plan, head, redactions))
        count = sum(len(paths) for paths in redactions.values())
    else:
        bundle = bundle_document(source, key, plan)
        steps, head = len(bundle["entries"]), bundle["chain"]["head_hash"]
        count = sum(len(e.get("redacted", [])) for e in bundle["entries"])
        document = dsse_envelope(bundle, key) if fmt == "dsse" else bundle
        written = _atomic_write(path, [canonicalize(document)])
    return ExportResult(path, fmt, source.run_id, steps, head, count, written)
