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
call that never returned. Small entries use slots instead
(:mod:`bitexact.recording.journal_slots`); :mod:`bitexact.recording.fold`
folds both.
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from bitexact.canon import canonicalize, loads
from bitexact.crypto.hostkey import HostKey
from bitexact.crypto.sealed import SealedEnvelopeError, seal_pieces, unseal
from bitexact.errors import BitExactError, StrictJSONError
from bitexact.evidence.timefmt import now_iso
from bitexact.private_files import fsync_directory, write_private_file

PURPOSE: Final[str] = "sdk-journal"
SUFFIX: Final[str] = ".bxj"
_RUN_ID: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:-]{0,199}")
RUN_ID_RULE: Final[str] = ("a run id starts with a letter, a digit or _, holds only letters, digits and . _ : -, is"
                           " at most 200 characters and holds no '..' (the rule the SDK applies)")
""":func:`check_run_id`'s rule in words, for a door that refuses an id before recording (``import --run-id``)."""
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
    unwritten: bool = False
    """Journaled after its append raised (appends land whole or not at all): known not to be in the chain."""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "run_id": self.run_id, "seq": self.seq, "kind": self.kind, "data": self.data,
            "steps_before": self.steps_before, "recorded_at": self.recorded_at or now_iso(),
        }
        for name in ("prov", "ctx", "hints"):
            value = getattr(self, name)
            if value is not None:
                doc[name] = value
        if self.unwritten:
            doc["unwritten"] = True
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
            unwritten=doc.get("unwritten") is True,
        )


def check_run_id(run_id: str) -> str:
    """``run_id`` as a safe directory name, or :class:`JournalError` naming it."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise JournalError(f"run_id {run_id!r} cannot name a journal directory: use letters, digits and ._:-")
    return run_id


def journal_dir(home: Path, run_id: str) -> Path:
    """The directory holding ``run_id``'s journals."""
    return Path(home) / "journals" / check_run_id(run_id)


def journals_root_unusable(home: Path) -> str | None:
    """Why no run of ``home`` can have a journal directory, so no recording holds a run's live lock and
    whether a run is still recorded cannot be told; None when nothing is in the way."""
    root = Path(home) / "journals"
    if os.path.lexists(root) and not root.is_dir():
        kind = "a symlink to nothing" if root.is_symlink() and not root.exists() else "not a directory"
        return (f"{root} is {kind}: no recording can make a run's journal directory there, so none holds"
                " its live lock, and a run still being recorded cannot be told from one whose process stopped")
    return None


def ensure_journal_dir(directory: Path) -> None:
    """Create ``journals/<run_id>/`` owner-only, durably, if it is not there.

    Directories are this module's own rule, not private_files': 0700, both
    levels, an existing one left as it is, and the parents synced so the new
    directories outlive a crash along with the journal written into them.
    """
    if directory in _synced_dirs and directory.is_dir():
        return
    _make_journal_dir(directory)
    # Synced even when the directory was there already: the run's live lock makes it at the run's start
    # without syncing (a directory sync there costs milliseconds, and most runs journal nothing).
    fsync_directory(directory.parent)
    fsync_directory(directory.parent.parent)
    _synced_dirs.add(directory)


_synced_dirs: set[Path] = set()
"""Journal directories this process has made durable: the first journal of a run syncs its parents once."""


def _make_journal_dir(directory: Path) -> None:
    """``journals/`` and ``journals/<run_id>/``, owner-only, where missing (not synced)."""
    if directory.is_dir():
        return
    for level in (directory.parent, directory):
        if not level.is_dir():
            level.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(level, 0o700)


def write_journal(home: Path, host_key: HostKey, record: JournalRecord, data_json: bytes | None = None) -> Path:
    """Seal ``record`` into its journal and sync it (file and directory) before returning its path.

    The sealed payload is the record's fields as canonical JSON, a newline,
    and the entry's data as JSON: ``data_json`` when the caller already has
    it (the SDK serializes a large entry once, natively), else the data's
    canonical JSON.
    """
    directory = journal_dir(home, record.run_id)
    name = f"{record.seq:012d}-{secrets.token_hex(4)}{SUFFIX}"
    final = directory / name
    try:
        ensure_journal_dir(directory)
        # Written as a dot-named .tmp, synced, renamed, directory synced: a partial journal is only
        # ever a temporary (fold discards those). The name is new (seq and a random token), so
        # ``replace`` costs nothing and keeps the single rename this path always made.
        write_private_file(
            final, seal_pieces(journal_payload(record, data_json), host_key, purpose=PURPOSE), replace=True
        )
    except OSError as exc:
        raise JournalError(f"cannot write a journal in {directory}: {exc.strerror or exc}") from exc
    return final


def journal_payload(record: JournalRecord, data_json: bytes | None = None) -> list[bytes]:
    """What a journal seals, in two pieces: the record's fields as canonical JSON and a newline, then the entry's data as JSON."""
    head = record.to_json()
    del head["data"]
    return [canonicalize(head) + b"\n", data_json if data_json is not None else canonicalize(record.data)]


def parse_journal(blob: bytes, host_key: HostKey, where: str) -> JournalRecord:
    """Open one sealed journal held in ``blob``; :class:`JournalError` naming ``where`` if it does not open."""
    try:
        payload = unseal(blob, host_key, purpose=PURPOSE)
        head, newline, body = payload.partition(b"\n")  # canonical JSON holds no raw newline
        if not newline:
            raise JournalError(f"journal {where}: no entry data after its header")
        doc = loads(head)
        if isinstance(doc, dict):
            doc["data"] = _load_data(body)
        return JournalRecord.from_json(doc, where)
    except (SealedEnvelopeError, StrictJSONError) as exc:
        raise JournalError(f"journal {where}: {exc}") from exc


def _load_data(body: bytes) -> Any:
    """A journal's entry data, read as the SDK's writer reads the same bytes (orjson): whatever the SDK
    journaled opens, even past the strict reader's depth or size limits, and the write path decides
    what it makes of it. The strict reader takes what orjson refuses (canonical JSON's escaped lone
    surrogates, from a journal sealed without ``data_json``)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return loads(body)


def read_journal(path: Path, host_key: HostKey) -> JournalRecord:
    """Open one journal; raises :class:`JournalError` for one that is damaged or foreign."""
    try:
        blob = Path(path).read_bytes()
    except OSError as exc:
        raise JournalError(f"journal {path}: {exc}") from exc
    return parse_journal(blob, host_key, str(path))


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


FOLDED_SUFFIX: Final[str] = ".folded-"
"""A journal file whose entry a fold wrote is renamed ``<name>.folded-<step>`` at once: a fold cut short
(the store failing mid-way) then names it as written at that step, never writes it a second time."""
FOLDING_SUFFIX: Final[str] = ".folding-"
"""Before a fold writes a journal file's entry it renames it ``<name>.folding-<step>`` (the step it is
about to land at), so a fold killed between the write and the ``.folded-`` rename finds out which."""
FOLDED: Final = re.compile(r"(\d{12}-[0-9a-f]{8}\.bxj)\.folded-(\d{1,19})")
FOLDING: Final = re.compile(r"(\d{12}-[0-9a-f]{8}\.bxj)\.folding-(\d{1,19})")


def folded_marks(directory: Path) -> list[tuple[str, int, Path]]:
    """Journals a fold cut short had written: (name, step, path), in record order."""
    if not directory.is_dir():
        return []
    found = [(m.group(1), int(m.group(2)), p) for p in directory.iterdir() if (m := FOLDED.fullmatch(p.name))]
    return sorted(found)


def marked_journals(directory: Path) -> list[Path]:
    """Journal files a fold renamed (``.folded-<step>``, ``.folding-<step>``): left behind until a repair
    entry names them."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if FOLDED.fullmatch(p.name) or FOLDING.fullmatch(p.name))


def discard_folded(home: Path, run_id: str, steps: set[int]) -> None:
    """Remove the kept copies of entries a fold wrote at ``steps`` (``.folded-`` and ``.folding-<step>``): once a
    store redaction has destroyed a value of such an entry, no copy of it may stay on disk.

    A ``.folding-<step>`` entry may have landed after its step (audit entries landing meanwhile move the
    fold's append on), and nothing but it and audit entries, which no redaction destroys, follows that
    step: a redaction at that step or after destroys its entry's values, if any."""
    try:
        directory = journal_dir(home, run_id)
    except JournalError:
        return  # no journal directory can be named for the run, so it has no journal and no copy
    for path in marked_journals(directory):
        folded = FOLDED.fullmatch(path.name)
        if folded is not None and int(folded.group(2)) in steps:
            remove_journal(path)
        folding = FOLDING.fullmatch(path.name)
        if folding is not None and any(step >= int(folding.group(2)) for step in steps):
            remove_journal(path)  # a fold killed after the write left it


def unfolded_journals(home: Path, run_id: str) -> list[str]:
    """The names of the run's journals no fold has written: journal files and slots files holding a
    record. Each may hold a copy of an entry's values (one written just before its process died, or one
    not written yet). Files a fold renamed (``.folded-``/``.folding-<step>``) name their step, so a
    redaction finds and removes them itself (:func:`discard_folded`)."""
    from bitexact.recording.journal_slots import has_full_slot, slot_files

    try:
        directory = journal_dir(home, run_id)
    except JournalError:
        return []  # no journal directory can be named for the run: it has none
    files = [p.name for p in orphan_journals(home, run_id)]
    return sorted(files + [p.name for p in slot_files(directory) if has_full_slot(p)])


LIVE_LOCK: Final[str] = ".recording.lock"
"""In a run's journal directory: held (flock) by the process recording the run for as long as it does,
so that a repair never folds (or deletes) the journals of a run that is still being recorded."""


def hold_live_lock(home: Path, run_id: str) -> int:
    """Take the run's live lock; returns the descriptor to keep open while recording (closing releases it)."""
    directory = journal_dir(home, run_id)
    _make_journal_dir(directory)  # not synced: a lock lasts no longer than its process; a journal syncs it
    fd = _flock_lock_file(directory / LIVE_LOCK)
    if fd is None:
        raise JournalError(f"run {run_id} is already being recorded by another process")
    return fd


def release_live_lock(home: Path, run_id: str, fd: int) -> None:
    """Give the run's live lock back and remove its file (the run's recording is over), and the run's
    journal directory with it when nothing else is left in it: every run takes the lock, most never
    journal anything, and a directory per finished run would pile up for nothing."""
    directory = journal_dir(home, run_id)
    try:
        os.unlink(directory / LIVE_LOCK)
    except OSError:
        pass
    os.close(fd)
    remove_empty_journal_dir(directory)


def remove_empty_journal_dir(directory: Path) -> None:
    """Remove a run's journal directory when nothing is left in it (and forget it was synced: a long-lived
    process records many runs); journals or slots that wait for repair keep it."""
    try:
        directory.rmdir()
    except OSError:
        return  # journals or slots wait for repair there (or another process made its lock file meanwhile)
    _synced_dirs.discard(directory)


def take_live_lock(directory: Path) -> int | None:
    """For a repair: the run's live lock, taken without waiting and held (the descriptor) for the whole
    fold, so a recording cannot start journaling meanwhile; None when a process holds it (it records)."""
    return _flock_lock_file(directory / LIVE_LOCK)


def _flock_lock_file(path: Path) -> int | None:
    """The lock file at ``path``, opened (made if missing) and locked without waiting; None when held.

    Whoever holds the lock last removes its file while still holding it. An
    open that raced that removal locks a file no longer at ``path``, which
    guards nothing (the next comer makes a new one): such a lock is dropped
    and the open tried again.
    """
    import fcntl

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        mine = os.fstat(fd)
        try:
            there = os.stat(path)
        except FileNotFoundError:
            there = None
        if there is not None and (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
            return fd
        os.close(fd)
