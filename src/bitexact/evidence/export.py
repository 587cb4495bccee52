"""Export a run as a signed bundle: ``json``, streaming ``jsonl`` or ``dsse`` (bundle spec §3, §10).

The exporter reads entries and checkpoints through callables so JSONL can
stream a run of any size twice (once for the head and the redaction markers
the signature binds, once to write), entry by entry. The header's
checkpoints are read and canonicalized one at a time, into the signed message
and then into the file, never held as a list: the message (ed25519 signs it
whole) is all an export holds in proportion to the run.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from bitexact.canon import DEFAULT_MAX_BYTES, Streamed, canonical_chunks, canonicalize
from bitexact.crypto import SigningKey
from bitexact.errors import EvidenceError
from bitexact.private_files import is_special, write_whole
from bitexact.evidence.entry import MAX_DATA_DEPTH, deeper_than
from bitexact.evidence.paths import parse_field
from bitexact.evidence.redaction import check_redactable, derived_digests, redact_entry, redactions_map
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
    def iter_checkpoints(self, run_id: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]: ...


@dataclass(frozen=True)
class RunSource:
    """Everything an export reads about one run."""

    run_id: str
    entries: Callable[[], Iterable[dict[str, Any]]]
    checkpoints: Callable[[], Iterable[dict[str, Any]]]
    """The run's checkpoints in ``seq`` order, read afresh at each call (a JSONL export reads them twice)."""
    anchors: list[dict[str, Any]] = field(default_factory=list)
    refresh: Callable[[], RunSource] | None = None
    """The same run fixed again at its head as it stands then (a stored run), for an export that
    raced a store redaction; None for a source that cannot change."""

    @classmethod
    def from_store(cls, store: RunReader, run_id: str) -> RunSource:
        """``run_id`` as it stands now in a store (raises the store's RunNotFoundError).

        The run's length is fixed here: every read of the entries (a JSONL
        export reads them twice) stops at it, and checkpoints past it are left
        out, so a run still being recorded exports as the prefix it was. So is
        the number of checkpoints: every read of them sees the same ones, even
        if one more is stored at the same head meanwhile. Nothing is held: the
        checkpoints are counted here and streamed from the store at each read.
        """
        store.run(run_id)
        steps, _ = store.head(run_id)
        stored = sum(1 for _ in store.iter_checkpoints(run_id))

        def checkpoints() -> Iterator[dict[str, Any]]:
            return (cp for cp in store.iter_checkpoints(run_id, 0, stored) if cp.get("steps", 0) <= steps)

        return cls(run_id, lambda: store.entries(run_id, 0, steps), checkpoints,
                   refresh=lambda: cls.from_store(store, run_id))


EXPORT_ATTEMPTS: Final[int] = 4
"""Exports of one run before one that raced a store redaction is written as it read."""


class _RacedRedaction(Exception):
    """A store redaction landed while the export read the run: a value removed inside the prefix, its
    claim past it (or a marker the JSONL header did not list). Read again at the new head."""


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


class UnappliedClaimError(EvidenceError):
    """A stored run holds a redaction claim whose values are still stored (a redaction cut short, or
    one still running): a bundle would carry what its chain says is destroyed, and fail for it."""


def _exported(
    source: RunSource, plan: dict[int, list[str]], *, checked: bool = False,
    listed: dict[int, list[str]] | None = None, exporting: bool = False,
) -> Iterator[dict[str, Any]]:
    """The entries as exported. ``checked``: raise :class:`_RacedRedaction` at the end when a store
    marker's claim lies past the prefix, or at a claim whose values are still stored (its removal may
    be landing); ``listed``: raise it when an entry's markers are not the ones the JSONL header was
    signed over. ``exporting`` a stored run: a claim not applied raises :class:`UnappliedClaimError`
    when read unchecked (a bundle to hand over must verify; ``verify RUN`` reads without it, so that
    its verdict names the claim)."""
    seen: set[int] = set()
    marked: set[str] = set()
    claimed: set[str] = set()
    stored = exporting and source.refresh is not None
    for entry in source.entries():
        step = entry["step"]
        if checked or stored:
            marked.update(f"{step}:{path}" for path in entry.get("redacted", []))
            if entry.get("kind") == "redaction":
                tokens = [str(token) for token in entry.get("data", {}).get("fields", [])]
                claimed.update(tokens)
                if stored:
                    _refuse_unapplied(source.run_id, step, tokens, marked, checked)
        paths = plan.get(step)
        if paths:
            seen.add(step)
            pending = [p for p in paths if p not in entry.get("redacted", [])]
            pending += derived_digests(entry, pending)
            for path in pending:
                check_redactable(entry, path)
            entry = redact_entry(entry, pending) if pending else entry
        if listed is not None and entry.get("redacted", []) != listed.get(step, []):
            raise _RacedRedaction()
        yield entry
    missing = sorted(set(plan) - seen)
    if missing:
        raise EvidenceError(f"--redact names step {missing[0]}, but run {source.run_id} has no such step")
    if checked and marked - claimed:
        raise _RacedRedaction()


def _refuse_unapplied(run_id: str, step: int, tokens: list[str], marked: set[str], checked: bool) -> None:
    """At a stored run's claim (``step``): every field it names is marked redacted in the entries read
    before it, or the export reads again (``checked``) or is refused."""
    for token in tokens:
        try:
            target, _ = parse_field(token)
        except ValueError:
            continue  # not a field: the verifier names it
        if target < step and token not in marked:
            if checked:
                raise _RacedRedaction()
            raise UnappliedClaimError(
                f"run {run_id}: the redaction claim at step {step} names {token}, whose value is still stored;"
                " a bundle now would carry the claimed value")


def _summary(
    source: RunSource, plan: dict[int, list[str]], *, checked: bool = False, exporting: bool = False
) -> tuple[int, str, dict[int, list[str]]]:
    steps, head, markers = 0, "", {}
    for entry in _exported(source, plan, checked=checked, exporting=exporting):
        steps += 1
        head = entry["hash"]
        if entry.get("redacted"):
            markers[entry["step"]] = list(entry["redacted"])
    if steps == 0:
        raise EvidenceError(f"run {source.run_id} has no entries: an empty chain is not evidence of a run")
    return steps, head, markers


def _container(fmt: str, source: RunSource, head: str, *, streamed: bool = False) -> dict[str, Any]:
    """The bundle without entries; ``streamed``: its checkpoints as a :class:`Streamed` array (JSONL)."""
    container: dict[str, Any] = {"format": fmt, "run_id": source.run_id, "chain": {"head_hash": head}}
    container["checkpoints"] = Streamed(source.checkpoints) if streamed else list(source.checkpoints())
    if source.anchors:
        container["anchors"] = list(source.anchors)
    return container


def bundle_document(
    source: RunSource, key: SigningKey | None, plan: dict[int, list[str]] | None = None, *, checked: bool = False,
    exporting: bool = False,
) -> dict[str, Any]:
    """The complete JSON-form bundle, signed by ``key`` (unsigned when None; ``checked``: see :func:`_exported`)."""
    plan = plan or {}
    entries = list(_exported(source, plan, checked=checked, exporting=exporting))
    if not entries:
        raise EvidenceError(f"run {source.run_id} has no entries: an empty chain is not evidence of a run")
    markers = {e["step"]: e["redacted"] for e in entries if e.get("redacted")}
    bundle = _container(FORMAT_JSON, source, entries[-1]["hash"])
    bundle["entries"] = entries
    if key is not None:
        bundle["signature"] = sign_container(bundle, redactions_map(markers), key)
    return bundle


@dataclass(frozen=True)
class StreamedBundle:
    """A JSON-form bundle with its entries streamed, never held (``bitexact verify RUN``).

    ``header`` is the bundle without ``entries``; reading ``entries`` to the end completes it: its
    ``chain.head_hash`` becomes the last entry's hash and, with a key, it is signed over the markers
    read, as :func:`bundle_document` signs them. Read once: the entries are the store's, page by page.
    """

    header: dict[str, Any]
    entries: Iterator[dict[str, Any]]


class EntriesUnreadError(Exception):
    """The source of a :class:`StreamedBundle` failed to read an entry (a damaged store page, a stored
    entry that no longer parses): ``error`` is what it raised. Told apart from what a verifier raises
    while it checks the entries, which is a verdict."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _read(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``entries``, any error reading them raised as :class:`EntriesUnreadError`."""
    iterator = iter(entries)
    while True:
        try:
            entry = next(iterator)
        except StopIteration:
            return
        except Exception as exc:
            raise EntriesUnreadError(exc) from exc
        yield entry


def streamed_bundle(source: RunSource, key: SigningKey | None) -> StreamedBundle:
    """What :func:`bundle_document` holds whole (no ``plan``, unchecked), as a header and its entries.

    Reading the entries raises :class:`EntriesUnreadError` for an entry the source cannot read.
    """
    header = _container(FORMAT_JSON, source, "")

    def entries() -> Iterator[dict[str, Any]]:
        markers: dict[int, list[str]] = {}
        last: dict[str, Any] | None = None
        for entry in _read(source.entries()):
            # Noted once the consumer asks for the next one: an entry a verifier refuses (no step, no
            # hash) is named by its check, not by a KeyError here.
            yield entry
            if entry.get("redacted"):
                markers[entry["step"]] = entry["redacted"]
            last = entry
        if last is not None:
            header["chain"]["head_hash"] = last.get("hash")
        if key is not None:
            header["signature"] = sign_container(header, redactions_map(markers), key)

    return StreamedBundle(header, entries())


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


def atomic_write(path: Path, chunks: Iterable[bytes]) -> int:
    """Write ``chunks`` whole at ``path`` (:func:`~bitexact.private_files.write_whole`); an error names ``path``.

    The file gets the mode any new file gets (0666 less the umask), as the
    bundle itself. A target that exists and is not a regular file (a device
    such as ``/dev/null``, a named pipe) is refused: the rename would
    replace it. Returns the bytes written.
    """
    if is_special(path):
        raise OSError(f"cannot write {path}: not a regular file (a device or a pipe would be replaced by the"
                      " file); name a file")
    try:
        return write_whole(path, chunks, private=False, strict_directory=False)  # a bundle can be exported again
    except OSError as exc:
        failure = OSError(f"cannot write {path}: {exc.strerror or exc}")
        failure.errno = exc.errno  # kept: a full disk (the write failed) is told from a path that cannot be used
        raise failure from None


def _jsonl_lines(
    source: RunSource,
    key: SigningKey,
    plan: dict[int, list[str]],
    head: str,
    redactions: dict[str, list[str]],
    listed: dict[int, list[str]] | None = None,
) -> Iterator[bytes]:
    header = _container(FORMAT_JSONL, source, head, streamed=True)
    header["signature"] = sign_container(header, redactions, key)
    yield from canonical_chunks(header)  # the checkpoints read from the store again, one at a time
    yield b"\n"
    for entry in _exported(source, plan, listed=listed, exporting=True):
        yield canonicalize(entry) + b"\n"


MAX_DOCUMENT_BYTES: Final[int] = DEFAULT_MAX_BYTES
"""The largest ``json`` or ``dsse`` bundle export writes: what ``bitexact verify`` (the strict reader,
:func:`bitexact.canon.loads`) reads as one JSON document. A ``jsonl`` bundle is verified line by line,
whatever the run's size."""


class BundleTooLargeError(EvidenceError):
    """A ``json`` or ``dsse`` bundle would be larger than a verifier reads as one document."""


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
    for attempt in range(1, EXPORT_ATTEMPTS + 1):
        # A stored run is read again at its new head when a store redaction raced this read; the
        # last attempt writes what it reads (its verdict then says what is wrong, if anything is).
        checked = source.refresh is not None and attempt < EXPORT_ATTEMPTS
        try:
            return _export_once(source, path, key, fmt, plan, checked)
        except _RacedRedaction:
            assert source.refresh is not None
            source = source.refresh()
    raise AssertionError("unreachable: the last attempt is never checked")


def _export_once(
    source: RunSource, path: Path, key: SigningKey, fmt: str, plan: dict[int, list[str]], checked: bool
) -> ExportResult:
    if fmt == "jsonl":
        steps, head, markers = _summary(source, plan, checked=checked, exporting=True)
        redactions = redactions_map(markers)
        lines = _jsonl_lines(source, key, plan, head, redactions, markers if checked else None)
        written = atomic_write(path, lines)
        count = sum(len(paths) for paths in redactions.values())
    else:
        bundle = bundle_document(source, key, plan, checked=checked, exporting=True)
        steps, head = len(bundle["entries"]), bundle["chain"]["head_hash"]
        count = sum(len(e.get("redacted", [])) for e in bundle["entries"])
        document = dsse_envelope(bundle, key) if fmt == "dsse" else bundle
        text = canonicalize(document)
        if len(text) > MAX_DOCUMENT_BYTES:
            # Written, it would be a bundle no verifier of ours reads: refused before any file is made.
            raise BundleTooLargeError(
                f"run {source.run_id} as a {fmt} bundle is {len(text)} bytes, over the {MAX_DOCUMENT_BYTES}"
                " bytes a verifier reads as one JSON document (`bitexact verify` refuses it): export it as"
                " jsonl (`--format jsonl`), which is verified line by line")
        written = atomic_write(path, [text])
    return ExportResult(path, fmt, source.run_id, steps, head, count, written)
