"""Write-ahead journals of entries recorded after the call returned, and folding orphans back in.

An entry too large to scan and write inside the agent's call (over 1 MiB) is
written after the call returns, in the order the agent recorded it. Before
the call returns, the entry as it stood at the call is synced to a journal
sealed under the host key; the journal is removed once the entry is in the
chain (capture-controls.md, budget_ms). A journal still present when its
process is gone is an *orphan*: :func:`fold_orphans` writes every orphan of
a run into the chain in record order and appends a ``repair`` entry naming
them, so an entry whose call returned is never lost.

Layout: ``<data directory>/journals/<run_id>/<seq:012d>-<token>.bxj``, each
file one sealed canonical-JSON :class:`JournalRecord`. A journal is written
to a dot-named temporary file, fsynced and renamed, so a file under its
final name is always whole; a temporary file left by a crash belonged to a
call that never returned.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bitexact import config
from bitexact.canon import canonicalize, loads
from bitexact.crypto.hostkey import HostKey, load_host_key
from bitexact.crypto.sealed import SealedEnvelopeError, SealedWriter, unseal
from bitexact.errors import BitExactError, StrictJSONError
from bitexact.evidence.timefmt import now_iso
from bitexact.recording.audit import record_repair
from bitexact.recording.writer import Recorder

PURPOSE: Final[str] = "sdk-journal"
SUFFIX: Final[str] = ".bxj"
_RUN_ID: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:-]{0,199}")
_NAME: Final = re.compile(r"(\d{12})-([0-9a-f]{8})\.bxj")


class JournalError(BitExactError):
    """A journal cannot be written, read or folded; the message says which and why."""


@dataclass(frozen=True)
class JournalRecord:
    """One entry as the agent recorded it, before the write path has run on it."""

    run_id: str
    seq: int
    """The entry's place in the run's record order (1, 2, ...), within one recording process."""
    kind: str
    data: dict[str, Any]
    prov: str | None = None
    ctx: str | None = None
    hints: dict[str, Any] | None = None
    steps_before: int = 0
    """How many entries the run had when the entry was recorded (where a fold looks for it)."""
    recorded_at: str = ""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "run_id": self.run_id, "seq": self.seq, "kind": self.kind, "data": self.data,
            "steps_before": self.steps_before, "recorded_at": self.recorded_at or now_iso(),
        }
        for name in ("prov", "ctx", "hints"):
            value = getattr(self, name)
            if value is not None:
                doc[name] = value
        return doc

    @classmethod
    def from_json(cls, doc: Any, where: str) -> JournalRecord:
        if not isinstance(doc, dict):
            raise JournalError(f"{where}: a journal holds a JSON object")
        for name, kind in (("run_id", str), ("seq", int), ("kind", str), ("data", dict), ("steps_before", int)):
            if not isinstance(doc.get(name), kind) or isinstance(doc.get(name), bool):
                raise JournalError(f"{where}: {name} is missing or not a {kind.__name__}")
        return cls(
            run_id=doc["run_id"], seq=doc["seq"], kind=doc["kind"], data=doc["data"],
            prov=doc.get("prov"), ctx=doc.get("ctx"), hints=doc.get("hints"),
            steps_before=doc["steps_before"], recorded_at=str(doc.get("recorded_at", "")),
        )


def check_run_id(run_id: str) -> str:
    """``run_id`` as a safe directory name, or :class:`JournalError` naming it."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise JournalError(f"run_id {run_id!r} cannot name a journal directory: use letters, digits and ._:-")
    return run_id


def journal_dir(home: Path, run_id: str) -> Path:
    """The directory holding ``run_id``'s journals."""
    return Path(home) / "journals" / check_run_id(run_id)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _ensure_dir(directory: Path) -> None:
    if not directory.is_dir():
        for level in (directory.parent, directory):  # journals/ and journals/<run_id>/, owner-only
            if not level.is_dir():
                level.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(level, 0o700)
        _fsync_dir(directory.parent)
        _fsync_dir(directory.parent.parent)


def write_journal(home: Path, host_key: HostKey, record: JournalRecord, data_json: bytes | None = None) -> Path:
    """Seal ``record`` into its journal and sync it (file and directory) before returning its path.

    The sealed payload is the record's fields as canonical JSON, a newline,
    and the entry's data as JSON: ``data_json`` when the caller already has
    it (the SDK serializes a large entry once, natively), else the data's
    canonical JSON.
    """
    directory = journal_dir(home, record.run_id)
    name = f"{record.seq:012d}-{secrets.token_hex(4)}{SUFFIX}"
    head = record.to_json()
    del head["data"]
    body = data_json if data_json is not None else canonicalize(record.data)
    try:
        _ensure_dir(directory)
        temporary = directory / f".{name}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb", buffering=1 << 20) as out:
            sealed = SealedWriter(out, host_key, purpose=PURPOSE)
            sealed.write(canonicalize(head) + b"\n")
            sealed.write(body)
            sealed.finish()
            out.flush()
            os.fsync(out.fileno())
        final = directory / name
        os.rename(temporary, final)
        _fsync_dir(directory)
    except OSError as exc:
        raise JournalError(f"cannot write a journal in {directory}: {exc.strerror or exc}") from exc
    return final


def read_journal(path: Path, host_key: HostKey) -> JournalRecord:
    """Open one journal; raises :class:`JournalError` for one that is damaged or foreign."""
    try:
        payload = unseal(Path(path).read_bytes(), host_key, purpose=PURPOSE)
        head, newline, body = payload.partition(b"\n")  # canonical JSON holds no raw newline
        if not newline:
            raise JournalError(f"journal {path}: no entry data after its header")
        doc = loads(head)
        if isinstance(doc, dict):
            doc["data"] = loads(body)
        return JournalRecord.from_json(doc, str(path))
    except (OSError, SealedEnvelopeError, StrictJSONError) as exc:
        raise JournalError(f"journal {path}: {exc}") from exc


def remove_journal(path: Path) -> None:
    """Remove a journal whose entry is in the chain (a missing file is already removed)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def orphan_journals(home: Path, run_id: str) -> list[Path]:
    """The run's journals in record order (temporary files excluded)."""
    directory = journal_dir(home, run_id)
    if not directory.is_dir():
        return []
    found = [p for p in directory.iterdir() if _NAME.fullmatch(p.name)]
    return sorted(found, key=lambda p: p.name)


def runs_with_orphans(home: Path) -> list[str]:
    """Run ids that have at least one journal under ``home``."""
    root = Path(home) / "journals"
    if not root.is_dir():
        return []
    return sorted(d.name for d in root.iterdir() if d.is_dir() and any(_NAME.fullmatch(p.name) for p in d.iterdir()))


def _store_home(recorder: Recorder) -> Path:
    path = getattr(recorder.store, "path", None)
    return Path(path).parent if path is not None else config.home()


def _already_written(recorder: Recorder, record: JournalRecord) -> int | None:
    """The step holding ``record`` when it reached the chain before its journal was removed."""
    wanted = canonicalize(record.data)
    for entry in recorder.store.entries(record.run_id, start=record.steps_before):
        if entry["kind"] == record.kind and entry.get("ctx") == record.ctx and "data" in entry:
            try:
                if canonicalize(entry["data"]) == wanted:
                    return int(entry["step"])
            except BitExactError:
                continue
    return None


def fold_orphans(
    recorder: Recorder,
    run_id: str,
    *,
    home: Path | None = None,
    host_key: HostKey | None = None,
    by: str = "bitexact repair",
) -> list[str]:
    """Write the run's orphan journals into its chain in record order; append a ``repair`` naming them.

    Returns the names of the journals folded (those whose entry was already
    in the chain included, since a crash can fall between an entry's write
    and its journal's removal). A journal that does not open is named in the
    repair entry as unreadable and kept. Journals are removed only after the
    repair entry has landed, so a fold cut short folds again without writing
    an entry twice. Raises :class:`JournalError` for a sealed run: nothing
    but audit entries may follow its seal.
    """
    home = Path(home) if home is not None else _store_home(recorder)
    directory = journal_dir(home, run_id)
    paths = orphan_journals(home, run_id)
    partial = sorted(p for p in directory.glob(".*.tmp")) if directory.is_dir() else []
    if not paths and not partial:
        return []
    writer = recorder.attach(run_id)
    if writer.sealed and paths:
        raise JournalError(
            f"run {run_id} is sealed: its {len(paths)} orphan journal(s) in {directory} cannot follow the seal"
        )
    host_key = host_key or load_host_key(home, create=False)
    folded: list[str] = []
    steps: dict[str, int] = {}
    already: dict[str, int] = {}
    unreadable: dict[str, str] = {}
    for path in paths:
        try:
            record = read_journal(path, host_key)
        except JournalError as exc:
            unreadable[path.name] = str(exc.__cause__ or exc)
            continue
        if record.run_id != run_id:
            unreadable[path.name] = f"holds an entry of run {record.run_id}"
            continue
        step = _already_written(recorder, record)
        if step is not None:
            already[path.name] = step
        else:
            steps[path.name] = writer.append(record.kind, record.data, prov=record.prov, ctx=record.ctx,
                                             hints=record.hints).step
        folded.append(path.name)
    extra: dict[str, Any] = {"journals": folded, "steps": steps}
    if already:
        extra["already_written"] = already
    if unreadable:
        extra["unreadable"] = unreadable
    if partial:
        extra["discarded_partial"] = [p.name for p in partial]
    note = (f"folded {len(steps)} orphan journal entr{'y' if len(steps) == 1 else 'ies'} into the chain "
            "in record order; each call had returned before its process stopped")
    record_repair(writer, by=by, note=note, extra=extra)
    for path in paths:
        if path.name in folded:
            remove_journal(path)
    for path in partial:
        remove_journal(path)
    return folded
