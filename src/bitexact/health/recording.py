"""The recording checks of ``bitexact health``: what a recording process left for repair, or holds.

An SDK entry whose call returned is durable in a journal (a journal file or
a slot of a slots file) until it is in the chain; the journal is removed,
or its slot released, once it is. A journal still there after its process
has gone means entries may be missing from the chain until
``bitexact repair RUN`` folds them (docs/sdk.md). A live run's journals
last milliseconds, so journals touched in the last :data:`GRACE_SECONDS`
are left out: they are most likely a recording in progress. So are those of
a run whose live lock a process holds: it is still recording the run, and
``bitexact repair`` refuses it until it stops.

A run no process records (its live lock, held from its start to its end,
is free), idle for :data:`GRACE_SECONDS`, with no seal and no repair
accepting where it ends, stopped before its seal: ``run-unsealed``. A host
key that is there but refused stops every journal: ``host-key-unusable``; a recorder key that is there
but refused stops every run: ``recorder-key-unusable``; a retired one that does not load stops ``keys show``
and ``keys trust-file``: ``retired-key-unusable``.

The store's write lock is held for the milliseconds of a commit. Held for
:data:`LOCK_PROBE_SECONDS` on end, it is a writer that is stopped or hung,
and every recording on the host waits up to ``BITEXACT_LOCK_TIMEOUT`` for it
and then records gaps (docs/store.md).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from bitexact import config
from bitexact.errors import BitExactError, RunNotFoundError
from bitexact.evidence.kinds import AUDIT_KINDS
from bitexact.health.context import HealthContext
from bitexact.health.findings import CRITICAL, WARN, Finding, listed
from bitexact.recording.journal import (
    LIVE_LOCK,
    JournalError,
    journal_dir,
    journals_root_unusable,
    marked_journals,
    orphan_journals,
)
from bitexact.recording.journal_slots import slot_blobs, slot_files
from bitexact.store import COMPROMISED_KEY_ROLE, DB_NAME, Store, flock
from bitexact.store.sqlite import lock_path
from bitexact.zerofill import free_bytes

GRACE_SECONDS: Final[float] = 60.0
"""Journals modified more recently than this are taken to belong to a run still recording."""
LOCK_PROBE_SECONDS: Final[float] = 1.0
"""How long the store's write lock must stay taken before health reports it (a commit takes milliseconds)."""
LISTED: Final[int] = 5
"""How many journals a message names before saying how many more (``details`` holds them all)."""


def _stale(path: Path, now: float) -> bool:
    """Not touched within :data:`GRACE_SECONDS` of now, either way (a time "in the future" by more than that
    was written before the clock went back: taken for a live recording's, it hid the journal until then)."""
    try:
        return abs(now - path.stat().st_mtime) >= GRACE_SECONDS
    except OSError:
        return False  # removed meanwhile: its entry reached the chain


def _left_behind(directory: Path, home: Path, now: float) -> list[str]:
    """The journals of one run directory that repair would look at: files, and full slots as ``<file>#<index>``."""
    try:
        files = orphan_journals(home, directory.name)
    except JournalError:
        return []  # not named as a run: no recording made it
    names = [p.name for p in files if _stale(p, now)]
    # Journals a fold cut short had written: the repair entry naming them is still to come.
    names += [path.name for path in marked_journals(directory) if _stale(path, now)]
    for slots in slot_files(directory):
        if not _stale(slots, now):
            continue
        try:
            names += [f"{slots.name}#{index}" for index, _, _ in slot_blobs(slots)]
        except (OSError, JournalError):
            names.append(slots.name)  # not whole slots: repair names it too
    return names


def _recording(directory: Path) -> bool:
    """True when a process holds the run's live lock: it is still recording the run (or a repair folds it).

    Read from ``/proc/locks``, never by taking the lock: a recording that journals its first entry while
    health held it for a moment would be refused its journal.
    """
    try:
        fd = os.open(directory / LIVE_LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False  # no lock file: no process has recorded the run since it was last repaired
    try:
        return flock.holder_pid(fd) is not None
    finally:
        os.close(fd)


def check_orphan_journals(ctx: HealthContext) -> list[Finding]:
    """orphan-journals, per run: journals a recording process left, whose entries may be missing from the chain."""
    if ctx.home is None:
        return []
    root = ctx.home / "journals"
    if not root.is_dir():
        return []
    now = time.time()
    findings: list[Finding] = []
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        # A live run's journals are entries on their way (or, failed, its repair's once it stops): no orphans.
        names = [] if _recording(directory) else _left_behind(directory, ctx.home, now)
        if not names:
            continue
        run_id = directory.name
        count = f"{len(names)} journal{'s' if len(names) != 1 else ''}"
        steps = _steps(ctx.store, run_id)
        if steps == _NOT_HELD:
            findings.append(Finding(
                WARN, "orphan-journals",
                f"{count} of run {run_id}, which the store does not hold ({listed(names, LISTED)}): it was"
                " replaced or restored from a backup older than the run, so `bitexact repair` has no run to"
                " fold them into. Put back the store that holds the run and repair it there; `bitexact"
                " capture journal FILE` reads one meanwhile",
                run_id=run_id, details={"journals": names},
            ))
            continue
        kept = _kept_unreadable(ctx.store, run_id, steps) if ctx.store is not None and steps is not None else None
        if kept is not None and all(name in kept[1] for name in names):
            # Another repair would only name them again: they fold once they open, under the key they were
            # sealed with.
            step, why = kept
            findings.append(Finding(
                WARN, "orphan-journals",
                f"{count} kept by the repair at step {step}, which could not open"
                f" {'them' if len(names) != 1 else 'it'} ({listed(names, LISTED)}; {why[names[0]]}):"
                f" {'their entries are' if len(names) != 1 else 'its entry is'} not in the run, and another"
                " `bitexact repair` only names them again. Restore the"
                f" host key they were sealed under (BITEXACT_HOST_KEY) and `bitexact repair {run_id} --by NAME"
                " --note TEXT` folds them; or remove them once their loss is accepted",
                run_id=run_id, details={"journals": names, "repair_step": step},
            ))
            continue
        missing_key = _host_key_missing(ctx.home)
        foreign = None if missing_key is not None else _unopened(ctx.home, directory, names)
        if foreign is not None:
            # A host key made anew (the data directory restored without the old one): repair keeps them unopened.
            findings.append(Finding(
                WARN, "orphan-journals",
                f"{count} left by a recording that stopped before writing {'them' if len(names) != 1 else 'it'}"
                f" into the chain ({listed(names, LISTED)}), and {foreign}: sealed under another host key (one"
                " made anew since, the old one lost with a restore?) or damaged. `bitexact repair` would keep"
                f" {'them' if len(names) != 1 else 'it'} unopened and accept the run's history without"
                f" {'their entries' if len(names) != 1 else 'its entry'}. Restore the host key"
                f" {'they were' if len(names) != 1 else 'it was'} sealed under (or point BITEXACT_HOST_KEY at it),"
                f" then `bitexact repair {run_id} --by NAME --note TEXT`",
                run_id=run_id, details={"journals": names, "unopened": foreign},
            ))
            continue
        if missing_key is not None:
            # Repair would record the run's history as accepted, each journal kept unopened: restore the key first.
            findings.append(Finding(
                WARN, "orphan-journals",
                f"{count} left by a recording that stopped before writing {'them' if len(names) != 1 else 'it'}"
                f" into the chain ({listed(names, LISTED)}), sealed under a host key that is not at {missing_key}"
                " any more (a data directory restored or moved without it): `bitexact repair` cannot open"
                f" {'them' if len(names) != 1 else 'it'}, and would accept the run's history without"
                f" {'their entries' if len(names) != 1 else 'its entry'}. Restore the host key from a backup (or"
                f" point BITEXACT_HOST_KEY at it), then `bitexact repair {run_id} --by NAME --note TEXT` folds"
                f" {'them' if len(names) != 1 else 'it'}",
                run_id=run_id, details={"journals": names, "host_key": str(missing_key)},
            ))
            continue
        findings.append(Finding(
            WARN, "orphan-journals",
            f"{count} left by a recording that stopped before writing {'them' if len(names) != 1 else 'it'}"
            f" into the chain ({listed(names, LISTED)}): entries whose calls returned may be missing from the run."
            f" Once no process records it, `bitexact repair {run_id} --by NAME --note TEXT` folds them in"
            " record order and names them in a repair entry",
            run_id=run_id, details={"journals": names},
        ))
    return findings


def _unopened(home: Path, directory: Path, names: list[str]) -> str | None:
    """Why the first journal file of ``names`` does not open under this host's key, or None when it opens
    (or there is no file journal to try, or no usable key: host-key-unusable says why). One per run."""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import read_journal

    first = next((name for name in names if "#" not in name and name.endswith(".bxj")), None)
    if first is None:
        return None
    try:
        key = load_host_key(home, create=False)
    except BitExactError:
        return None
    try:
        read_journal(directory / first, key)
    except JournalError as exc:
        return f"{first} does not open under the host key at {key.path} ({str(exc).rpartition(': ')[2]})"
    return None


def _host_key_missing(home: Path) -> Path | None:
    """The host key's path when no file (nor link) is there: journals sealed under it do not open."""
    from bitexact.crypto.hostkey import host_key_path

    path = host_key_path(home)
    return path if not path.exists() and not path.is_symlink() else None


_NOT_HELD: Final[int] = -1


def _steps(store: Store | None, run_id: str) -> int | None:
    """The run's entry count; ``_NOT_HELD`` when the store does not hold it; None when that is unknown (no
    store, or one that does not answer: store-unreadable says so)."""
    if store is None:
        return None
    try:
        return store.run(run_id).steps
    except RunNotFoundError:
        return _NOT_HELD
    except BitExactError:
        return None


def _kept_unreadable(store: Store, run_id: str, steps: int) -> tuple[int, dict[str, str]] | None:
    """The journals the repairs ending the run could not open and kept (name: why), and the step of the
    last repair naming one; None when none does. Only audit entries follow a repair (nothing records a
    repaired run); `bitexact repair` appends the fold's repair entry, then the operator's own."""
    named: dict[str, str] = {}
    last: int | None = None
    try:
        for step, entry in _closing_audit(store, run_id, steps):
            data = entry.get("data")
            kept = data.get("unreadable") if entry.get("kind") == "repair" and isinstance(data, dict) else None
            if isinstance(kept, dict) and kept:
                last = step if last is None else last
                named = {str(k): str(v) for k, v in kept.items()} | named  # the later repair's reason wins
    except BitExactError:
        return None  # damaged: the journals are orphans as far as health can tell
    return None if last is None else (last, named)


def _closing_audit(store: Store, run_id: str, steps: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """The audit entries that end the run, from its last entry back (``(step, entry)``), stopping at the
    first entry of its own."""
    for step in range(steps - 1, -1, -1):
        entry = store.entry(run_id, step)
        if entry.get("kind") not in AUDIT_KINDS:
            return
        yield step, entry


def _held_throughout(fd: int, seconds: float) -> bool:
    """True when another process holds ``fd``'s flock at every try for ``seconds``; a free lock is given back."""
    deadline = time.monotonic() + seconds
    while not flock.try_lock(fd):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.02)
    flock.unlock(fd)
    return False


def check_store_lock(ctx: HealthContext) -> list[Finding]:
    """store-locked: another process has held the store's write lock longer than any commit takes."""
    if ctx.home is None:
        return []
    try:
        fd = os.open(lock_path(ctx.home / DB_NAME), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return []  # no store yet, or not ours to open: nothing holds it
    try:
        if not _held_throughout(fd, LOCK_PROBE_SECONDS):
            return _sqlite_lock_kept(ctx)
        pid = flock.holder_pid(fd)
    finally:
        os.close(fd)
    holder = f"process {pid}" if pid is not None else "another process"
    return [Finding(
        WARN, "store-locked",
        f"the store's write lock has been held by {holder} for over {LOCK_PROBE_SECONDS:g} s (a commit takes"
        " milliseconds): a writer that is stopped or hung. Every recording on this host waits up to"
        " BITEXACT_LOCK_TIMEOUT (default 30 s) for it, then records gaps and journals its entries; resume or end"
        f" {holder}, then `bitexact repair` the runs that report orphan journals",
        details={"pid": pid} if pid is not None else {},
    )]


def _sqlite_lock_kept(ctx: HealthContext) -> list[Finding]:
    """store-locked, by a program outside the lock file: SQLite's own write lock kept for over a second (a
    sqlite3 shell in ``BEGIN IMMEDIATE``, a backup tool). Health said "healthy" while every write waited
    BITEXACT_LOCK_TIMEOUT and failed."""
    if ctx.store is None or ctx.home is None:
        return []
    try:
        kept = ctx.store.write_lock_kept(LOCK_PROBE_SECONDS)
    except BitExactError:
        return []  # a store that does not answer: store-unreadable and store-damaged say why
    if not kept:
        return []
    return [Finding(
        WARN, "store-locked",
        f"the store's SQLite write lock has been held for over {LOCK_PROBE_SECONDS:g} s by a program that is no"
        " BitExact writer (it holds SQLite's lock, not the store's lock file): a sqlite3 shell, a backup tool or"
        " a database browser in a write transaction. Every recording on this host waits up to"
        " BITEXACT_LOCK_TIMEOUT (default 30 s) for it, then records gaps and journals its entries, and every"
        " command that writes fails; end that transaction (`fuser -v"
        f" {ctx.home / DB_NAME}` lists the processes that have the store open), then `bitexact repair` the"
        " runs that report orphan journals",
        details={"holder": "sqlite"},
    )]


DISK_LOW: Final[int] = 16 << 20
"""Free space under which ``store-disk-low`` warns: about what one more process's WAL (8 MiB before it restarts)
and the checkpoint copying it into the database take."""
DISK_FULL: Final[int] = 1 << 20
"""Free space under which it is critical: a commit, a journal or a failures-record line may no longer fit."""


def check_store_disk(ctx: HealthContext) -> list[Finding]:
    """store-disk-low: the data directory's file system has little free space (critical under
    :data:`DISK_FULL`): every recording then fails to start or records gaps, and the failures record that would
    say so cannot be written either, so `recording-gaps` stays silent."""
    if ctx.home is None:
        return []
    try:
        free = free_bytes(ctx.home)
    except OSError:
        return []  # no data directory yet: nothing to fill
    if free >= DISK_LOW:
        return []
    level, now = (CRITICAL, "fail now") if free < DISK_FULL else (WARN, "soon fail")
    return [Finding(level, "store-disk-low",
                    f"the file system of {ctx.home} has {free // 1024} KiB free: recordings {now} to start or"
                    " record gaps, and the failures record that would say so cannot be written either. Free"
                    f" space there (at least {DISK_LOW >> 20} MiB), or move the data directory",
                    details={"free_bytes": free})]


WAL_PINNED_BYTES: Final[int] = 64 << 20
"""Log frames a checkpoint cannot copy, in bytes, past which ``store-wal-pinned`` warns. The store restarts its
write-ahead log every 2,000 frames (8 MiB of 4 KiB pages), and nothing it reads keeps a snapshot longer than a
query, so on a healthy store a checkpoint leaves next to nothing behind; 64 MiB, eight restarts' worth, is a
reader that has held one snapshot while all that was written, never a commit in flight."""
_HOLDERS_LISTED: Final[int] = 5


def _store_holders(database: Path) -> tuple[list[str], list[str]]:
    """``PID (NAME)`` of each other process with the store file open, read from ``/proc/*/fd`` (the processes
    this user may look into; a few thousand ``readlink`` calls on a busy host): those that are no BitExact store,
    then BitExact's own, told apart by the store's lock file, which every BitExact store holds open from its
    start and other programs never open. Empty where ``/proc`` does not tell."""
    target, ours = os.path.realpath(database), lock_path(database)
    others: list[str] = []
    bitexact: list[str] = []
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()]
    except OSError:
        return others, bitexact
    for pid in pids:
        try:
            links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            if target not in links:
                continue
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as comm:
                (bitexact if ours in links else others).append(f"{pid} ({comm.read().strip()})")
        except OSError:  # another user's process, or one that ended meanwhile
            continue
    return others, bitexact


def check_store_wal(ctx: HealthContext) -> list[Finding]:
    """store-wal-pinned: a reader has held one snapshot of the store while over :data:`WAL_PINNED_BYTES` was
    written (a sqlite3 shell left in a transaction, a backup or a browser reading for long): no checkpoint can
    copy those frames, so the log cannot restart and grows by every write until the reader ends, filling the
    disk, and each read walks a longer log."""
    if ctx.store is None or ctx.home is None:
        return []
    try:
        uncopied = ctx.store.wal_uncopied()
    except BitExactError:
        return []  # a store that does not answer: store-unreadable and store-damaged say why
    if uncopied is None:
        return []
    frames, page_size = uncopied
    pinned = frames * page_size
    if pinned < WAL_PINNED_BYTES:
        return []
    database = ctx.home / DB_NAME
    holders, bitexact = _store_holders(database)
    # BitExact's own processes hold no snapshot past a query: the programs that are not BitExact come first,
    # and BitExact's are named apart so the reader is not looked for among the recordings.
    who = (f"processes with the store open: {listed(holders, _HOLDERS_LISTED)}" if holders else
           f"`fuser -v {database}` lists the processes with the store open")
    if bitexact:
        who += f"; BitExact's own, which hold none: {listed(bitexact, _HOLDERS_LISTED)}"
    return [Finding(
        WARN, "store-wal-pinned",
        f"{pinned >> 20} MiB of the store's write-ahead log ({frames} frames) cannot be copied into the database:"
        " a reader has held one read transaction while all of it was written (a sqlite3 shell or database"
        " browser left in a transaction, a backup reading the file). Until it ends, the log"
        f" ({database}-wal) grows by every write and reads slow down; end that transaction or program ({who})."
        " BitExact's own readers hold no snapshot past a query",
        details={"uncopied_bytes": pinned, "frames": frames, "holders": holders, "bitexact_holders": bitexact},
    )]


RECENT_GAP_SECONDS: Final[float] = 24 * 3600.0
"""How far back ``recording-gaps`` looks: a failure of the recording itself (a full disk, a store that
stayed locked) in the last day is news; an older one was seen, or is in the run's own record for good."""
_INFRASTRUCTURE_CAUSES: Final[frozenset[str]] = frozenset({"storage_unavailable", "recording_error"})


_GAP_LINE_MAX: Final[int] = 64 * 1024
"""Longer than any gap the SDK declares: a longer line is no gap, and is skipped unread."""


class _NotARecord(Exception):
    """A failures record that is not a regular file (a FIFO, a device a link points at)."""


def _gap_lines(path: Path) -> Iterator[bytes]:
    """The lines of one failures record, streamed: memory stays bounded whatever the file holds, and a
    path that is not a regular file raises :class:`_NotARecord` before anything is read from it."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without a writer, and is refused below
    with open(fd, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise _NotARecord("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                              else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
        while line := file.readline(_GAP_LINE_MAX + 1):
            if len(line) <= _GAP_LINE_MAX or line.endswith(b"\n"):
                yield line
                continue
            while (rest := file.readline(_GAP_LINE_MAX)) and not rest.endswith(b"\n"):
                pass  # the rest of an over-long line, read in bounded pieces and dropped


def _recent_gaps(path: Path, since: float) -> list[dict[str, Any]]:
    """The infrastructure gaps one failures record declared at ``since`` or later, as written; a line that
    does not read (cut short by a crash, or no gap at all) is skipped."""
    from datetime import datetime

    from bitexact.canon import loads

    gaps: list[dict[str, Any]] = []
    for line in _gap_lines(path):
        if not line.strip():
            continue
        try:
            gap = loads(line)
            cause, at = gap["cause"], datetime.fromisoformat(gap["at"]).timestamp()
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(cause, str) and cause in _INFRASTRUCTURE_CAUSES and at >= since:  # a hand-damaged line
            gaps.append(gap)
    return gaps


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _gaps_in_chain(ctx: HealthContext, run_id: str,
                   gaps: list[dict[str, Any]]) -> tuple[int, dict[str, int]] | None:
    """How many of ``gaps`` the run's chain marks (a ``marker`` entry holding the same gap), and the journals a
    repair folded since (name: the step of the repair naming it); None when the store does not answer for
    the run (no store, no such run, a damaged one)."""
    if ctx.store is None:
        return None
    from collections import Counter

    marked: Counter[str] = Counter()  # each marker's gap, as canonical text: a marker answers for one gap
    folded: dict[str, int] = {}
    try:
        for entry in ctx.store.entries(run_id):
            data = entry.get("data")
            if not isinstance(data, dict):
                continue
            if entry.get("kind") == "marker" and isinstance(data.get("gap"), dict):
                marked[_gap_key(data["gap"])] += 1
            elif entry.get("kind") == "repair":
                named = [*data.get("journals", []), *data.get("already_written", {})]
                folded.update((str(name), int(entry["step"])) for name in named)
    except (BitExactError, TypeError, ValueError):
        return None
    count = 0
    for gap in gaps:
        key = _gap_key(gap)
        if marked[key]:
            marked[key] -= 1
            count += 1
    return count, folded


def _gap_key(gap: dict[str, Any]) -> str:
    import json

    return json.dumps(gap, sort_keys=True, default=str)


def _gaps_story(ctx: HealthContext, run_id: str, path: Path, gaps: list[dict[str, Any]]) -> str:
    """What is true of the gaps now: marked in the chain or declared in the failures record only; their
    entries folded since by a repair, waiting in journals, or kept by none."""
    show = f"`bitexact show {run_id}`"
    known = _gaps_in_chain(ctx, run_id, gaps)
    if known is None:
        return (f" See {path}: the store does not answer for run {run_id}, so whether its chain marks them, and"
                " whether a repair folded their entries, is not known here")
    marked, folded = known
    total = len(gaps)
    if marked == total:
        story = f" Each is marked in the chain: the gap markers in {show}."
    elif marked == 0:
        story = (f" None reached the chain (the store refused every write meanwhile): they are declared in {path}"
                 f" only, and {show} shows no marker for them.")
    else:
        story = (f" {marked} of them are marked in the chain (the gap markers in {show}); the other"
                 f" {total - marked} are declared in {path} only.")
    journals = [str(gap["journal"]) for gap in gaps if isinstance(gap.get("journal"), str)]
    try:
        waiting = set(_left_behind(journal_dir(ctx.home, run_id), ctx.home, math.inf)) if ctx.home else set()
    except JournalError:
        waiting = set()
    done = sorted({folded[name] for name in journals if name in folded})
    n_folded = sum(1 for name in journals if name in folded)
    n_waiting = sum(1 for name in journals if name not in folded and name in waiting)
    n_other = total - n_folded - n_waiting
    if n_folded:
        at = f"step {done[0]}" if len(done) == 1 else f"steps {', '.join(map(str, done))}"
        story += (f" {_plural(n_folded, 'entry', 'entries')} they journaled {'was' if n_folded == 1 else 'were'}"
                  f" folded into the run since, by the repair at {at}.")
    if n_waiting:
        story += (f" {_plural(n_waiting, 'entry waits', 'entries wait')} in its journals: once no process records"
                  f" the run, `bitexact repair {run_id} --by NAME --note TEXT` folds them.")
    if n_other:
        story += (f" {_plural(n_other, 'gap declares an entry', 'gaps declare entries')} no journal holds now:"
                  " missing from the run unless written after the gap.")
    if not n_waiting:
        return story + " If more follow, check the disk's free space and `store-locked`"
    return story + " Check the disk's free space and `store-locked` first"


def check_recording_gaps(ctx: HealthContext) -> list[Finding]:
    """recording-gaps, per run: the SDK declared in the last day that it could not record (the store or
    the disk failed it). The message says what is true now: whether the chain marks the gaps or only the
    failures record declares them (the store refused every write), and whether their entries were folded
    since by a repair or still wait in journals."""
    if ctx.home is None:
        return []
    root = ctx.home / "failures"
    if not root.is_dir():
        return []
    since = time.time() - RECENT_GAP_SECONDS
    findings: list[Finding] = []
    for path in sorted(root.glob("*.jsonl")):
        try:
            gaps = _recent_gaps(path, since)
        except OSError:
            continue  # removed meanwhile, or not ours to read: nothing to say of it
        except _NotARecord as exc:
            findings.append(Finding(
                WARN, "failures-record-unusable",
                f"{path} is {exc}, not a file: the SDK appends the gaps it declares for run"
                f" {path.name.removesuffix('.jsonl')} there, so they are lost; remove it (BitExact makes the"
                " record again on the run's next gap)",
                run_id=path.name.removesuffix(".jsonl"), details={"failures_record": str(path)},
            ))
            continue
        if not gaps:
            continue
        run_id = path.name.removesuffix(".jsonl")
        causes: dict[str, int] = {}
        for gap in gaps:
            causes[gap["cause"]] = causes.get(gap["cause"], 0) + 1
        counted = ", ".join(f"{cause} x{n}" for cause, n in sorted(causes.items()))
        findings.append(Finding(
            WARN, "recording-gaps",
            f"{_plural(len(gaps), 'recording gap', 'recording gaps')} declared in the last day ({counted}): the"
            f" store or the disk failed the recording.{_gaps_story(ctx, run_id, path, gaps)}",
            run_id=run_id, details={"causes": causes, "failures_record": str(path)},
        ))
    return findings


_EVERY_RECORDING: Final[str] = "every recording that reads it (SDK runs, imports, redactions) refuses to start"


def _recording_settings() -> tuple[tuple[str, Callable[[], object], str], ...]:
    """The settings every recording reads at its start, each with the reader that refuses a bad value and
    what then refuses."""
    from bitexact.config import env_flag
    from bitexact.crypto import default_alg
    from bitexact.recording.checkpoints import CheckpointPolicy
    from bitexact.recording.requests import dual_control_required
    from bitexact.sdk.queue import drain_timeout, queue_max_bytes
    from bitexact.sdk.run import JOURNAL_SMALL_ENV

    return (
        ("BITEXACT_HASH_ALG", default_alg, _EVERY_RECORDING),
        ("BITEXACT_CHECKPOINT_EVERY, BITEXACT_CHECKPOINT_SECONDS", CheckpointPolicy.from_env, _EVERY_RECORDING),
        ("BITEXACT_DRAIN_TIMEOUT", drain_timeout, _EVERY_RECORDING),
        ("BITEXACT_QUEUE_MAX_BYTES", queue_max_bytes, _EVERY_RECORDING),
        ("BITEXACT_JOURNAL_SMALL", lambda: env_flag(JOURNAL_SMALL_ENV), _EVERY_RECORDING),
        # Read by the commands that destroy values, not by a recording: SDK runs and imports go on.
        ("BITEXACT_REQUIRE_DUAL_CONTROL", dual_control_required,
         "every redaction (`bitexact redact`, `bitexact capture backfill`) refuses to run, while recordings go on"),
    )


def check_recording_settings(ctx: HealthContext) -> list[Finding]:
    """setting-invalid: a setting every recording reads holds a value it refuses, so every SDK run, import
    and redaction on the host refuses to start (an SDK run records nothing but its start gap)."""
    findings: list[Finding] = []
    for names, read, refused in _recording_settings():
        try:
            read()
        except ValueError as exc:
            findings.append(Finding(
                CRITICAL, "setting-invalid",
                f"{exc} ({names}): {refused} until it is fixed or unset",
                details={"variables": names.split(", ")},
            ))
    return findings


def _idle_seconds(updated_at: str, now: float) -> float:
    """Seconds since the store last wrote the run (its ``updated_at``); 0 when that does not read. Negative
    when it reads as later than now: the clock was ahead when it was written, or went back since."""
    from datetime import datetime

    try:
        return now - datetime.fromisoformat(updated_at).timestamp()
    except (TypeError, ValueError):
        return 0.0


def _just_written(updated_at: str, now: float) -> bool:
    """Whether the run was written within :data:`GRACE_SECONDS` of now, either way: one written "in the
    future" by more than that was written before the clock went back (an NTP step, a host whose clock ran
    ahead), and was left out of run-unsealed until the clock caught up, months maybe."""
    return abs(_idle_seconds(updated_at, now)) < GRACE_SECONDS


def _accepted(store: Store, run_id: str, steps: int) -> bool:
    """True when a ``repair`` follows the run's last entry of its own: an operator accepted that its history
    ends there. A redaction or hold appended after the repair leaves that acceptance standing."""
    return any(entry.get("kind") == "repair" for _, entry in _closing_audit(store, run_id, steps))


def check_unsealed_runs(ctx: HealthContext) -> list[Finding]:
    """run-unsealed, per run: no process records the run, yet it has no seal and no repair accepting it.

    Its recording stopped before ``run_end``: the process was killed, the host lost power, or the seal
    itself failed. A recording holds the run's live lock from its start to its end, so a run whose lock
    nobody holds, idle for :data:`GRACE_SECONDS`, is not being recorded. A run with orphan journals is
    left to ``orphan-journals``, which names them; a run whose id names no journal directory has no
    live lock to read and is left out.
    """
    if ctx.store is None or ctx.home is None or journals_root_unusable(ctx.home) is not None:
        return []  # with no live lock to read, a live run would be named: journals-unusable says why
    now = time.time()
    findings: list[Finding] = []
    try:
        # Listed afresh, not from the capture checks' pass: that may have taken minutes on a large store,
        # and a run that sealed meanwhile (its lock given back) must not be named.
        runs = ctx.store.runs()
    except BitExactError:
        return []  # the runs do not list: store-unreadable says so, once
    for info in runs:
        if info.sealed or _just_written(info.updated_at, now):
            continue
        try:
            directory = journal_dir(ctx.home, info.run_id)
        except JournalError:
            continue
        if _recording(directory) or _left_behind(directory, ctx.home, now):
            continue
        try:
            # Read again now that no process holds the run's lock: a recording seals before it gives the
            # lock back, so a seal that landed after the listing is seen here, never reported as missing.
            info = ctx.store.run(info.run_id)
            if info.sealed or _just_written(info.updated_at, now):
                continue
            if _accepted(ctx.store, info.run_id, info.steps):
                continue
        except BitExactError:
            continue  # a damaged run, or one removed meanwhile: store-unreadable says so
        # A run is made before its run_meta is appended: a recording killed in between left no entry.
        last = (f"its last entry, step {info.steps - 1}, was written at {info.updated_at}" if info.steps
                else f"it holds no entry, not even its run_meta: it was made at {info.updated_at}")
        if _idle_seconds(info.updated_at, now) < 0:
            last += ", later than this host's clock says it is now (the clock went back since, or ran ahead then)"
        findings.append(Finding(
            WARN, "run-unsealed",
            f"no process records the run, yet it has no seal ({last}): its recording stopped before run_end,"
            " killed, cut off or failing to seal. Verifying it with --require-sealed fails. `bitexact repair"
            f" {info.run_id} --by NAME --note TEXT` records that its history ends where it does",
            run_id=info.run_id, details={"steps": info.steps, "updated_at": info.updated_at},
        ))
    return findings


def check_journals_root(ctx: HealthContext) -> list[Finding]:
    """journals-unusable: ``<home>/journals`` is in the way (a file, a link to nothing), so no SDK run holds
    its live lock or journals an entry, and neither health nor repair can tell a live run from a dead one."""
    if ctx.home is None:
        return []
    blocked = journals_root_unusable(ctx.home)
    if blocked is None:
        return []
    return [Finding(
        CRITICAL, "journals-unusable",
        f"{blocked}. Until it is moved away, SDK runs journal nothing (an entry over 1 MiB is written in the"
        " agent's call), `bitexact repair` refuses every run, and run-unsealed is not reported",
        details={"path": str(ctx.home / "journals")},
    )]


def check_host_key(ctx: HealthContext) -> list[Finding]:
    """host-key-unusable: the host key file is there but refused (loose permissions, malformed, inside the
    data directory), so no journal is made or opened on this host."""
    if ctx.home is None:
        return []
    from bitexact.crypto.hostkey import host_key_path, load_host_key

    path = host_key_path(ctx.home)
    # A missing key is made owner-only on first use, but never inside the data directory: refused there.
    if not path.exists() and not path.is_symlink() and not config.inside(path, ctx.home):
        return []
    try:
        load_host_key(ctx.home, create=False)
    except BitExactError as exc:
        return [Finding(
            WARN, "host-key-unusable",
            f"{exc}. Until it is fixed, SDK runs journal nothing (an entry over 1 MiB is scanned and written"
            " in the agent's call instead of after it), and `bitexact repair` cannot open the journals"
            " already left",
            details={"path": str(path)},
        )]
    return []


def check_recorder_key(ctx: HealthContext) -> list[Finding]:
    """recorder-key-unusable: the recorder key file is there but refused (others may read or write it, it is
    no ed25519 PEM key, a link to nothing), so no run starts and nothing is signed. A missing one is made on
    first use."""
    if ctx.home is None:
        return []
    from bitexact.crypto.keystore import KeyStore

    keys = KeyStore(ctx.home)
    directory = keys.dir
    if os.path.lexists(directory) and not directory.is_dir():
        # Health said "healthy" (no key file under it, so none to check) while no run started.
        if directory.is_symlink():
            what = f"a symlink to {os.readlink(directory)}, which does not exist (an unmounted secrets volume?)"
            fix = "mount or restore what it names"
        else:
            what = "not a directory"
            fix = f"move it aside (`mv {directory} {directory}.aside`) and restore keys/ from a backup"
        return [Finding(
            CRITICAL, "recorder-key-unusable",
            f"{directory} is {what}: no recorder key can be read or made there. Until it is fixed, no run starts"
            f" (SDK runs record nothing and declare the gap), and nothing is exported or signed; {fix}",
            details={"path": str(directory)},
        )]
    if not keys.current_path.exists() and not keys.current_path.is_symlink():
        return []
    try:
        keys.current()
    except BitExactError as exc:
        return [Finding(
            CRITICAL, "recorder-key-unusable",
            f"{exc}. Until it is fixed, no run starts (SDK runs record nothing and declare the gap), and"
            " nothing is exported or signed",
            details={"path": str(keys.current_path)},
        )]
    return []


def check_current_key_retired(ctx: HealthContext) -> list[Finding]:
    """recorder-key-retired: the current key file holds a key the store recorded as retired by a rotation:
    keys/ was restored from a backup older than that rotation (or copied from another data directory), so
    runs are signed again with a key that was replaced, maybe because it leaked (the compromised list was
    rolled back with it). Health warned only that the newer key's file was missing."""
    if ctx.home is None or ctx.store is None:
        return []
    from bitexact.crypto.keystore import KeyStore

    keys = KeyStore(ctx.home)
    try:
        current = keys.current()
        rows = ctx.store.keys()
    except BitExactError:
        return []  # recorder-key-unusable or store-unreadable says why
    retired = {row["key_id"]: row["retired_at"] for row in rows if row.get("retired_at")}
    if current.key_id not in retired:
        return []
    if any(row["key_id"] == current.key_id and row["role"] == COMPROMISED_KEY_ROLE for row in rows):
        # The write path refuses a key the store marks compromised (Recorder): it signs nothing, whatever keys/ says.
        signing = (" The store marks that rotation's key compromised, so nothing signs with it (no run starts, and"
                   " `export` refuses) until it is replaced.")
    else:
        signing = (" Runs are signed with the replaced key again; if that rotation was `keys rotate --compromised`,"
                   " a leaked copy signs runs that verify as well.")
    return [Finding(
        CRITICAL, "recorder-key-retired",
        f"the current recorder key {current.key_id} ({keys.current_path}) was retired by a rotation at"
        f" {retired[current.key_id]}, as the store recorded: keys/ was restored from a backup older than that"
        f" rotation (or copied from elsewhere).{signing} Restore keys/ from a"
        " backup taken after the rotation; if none is left, `bitexact keys rotate --compromised"
        f" --expect-current {current.key_id}` replaces it (then hand relying parties a new trust file)",
        details={"key_id": current.key_id, "retired_at": retired[current.key_id], "path": str(keys.current_path)},
    )]


def check_compromise_lost(ctx: HealthContext) -> list[Finding]:
    """recorder-key-compromise-lost, per key: the store records a recorder key as retired as compromised that
    ``keys/compromised.json`` does not list: keys/ was restored from a backup older than the mark (or copied
    from elsewhere), and the key files trusted the leaked key again with no word. `keys show` and `keys
    trust-file` go by the store's mark; a verifier holding a trust file written from the rolled-back files
    does not."""
    if ctx.home is None or ctx.store is None:
        return []
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording.recorder_keys import compromise_lost

    keys = KeyStore(ctx.home)
    try:
        lost = compromise_lost(keys, ctx.store)
        current = keys.current().key_id if lost and keys.exists() else None
    except BitExactError:
        return []  # recorder-key-unusable or store-unreadable says why
    findings: list[Finding] = []
    for key_id in lost:
        if key_id == current:
            fix = (f"it is the current key again, and nothing signs with it (no run starts, SDK runs record nothing"
                   f" and declare the gap, `export` refuses): `bitexact keys rotate --compromised --expect-current"
                   f" {key_id}` replaces it and restores the mark")
        else:
            fix = f"`bitexact keys mark-compromised {key_id}` restores the mark (and removes its file, if any)"
        findings.append(Finding(
            CRITICAL, "recorder-key-compromise-lost",
            f"recorder key {key_id} is recorded as compromised in the store but not in {keys.compromised_path}:"
            " keys/ was restored from a backup older than the mark (or copied from elsewhere), so the key files"
            f" trust the leaked key again. {fix[0].upper()}{fix[1:]}; then hand relying parties a new trust file"
            " (`bitexact keys trust-file`), and replace any written since the restore",
            details={"key_id": key_id, "current": key_id == current, "path": str(keys.compromised_path)},
        ))
    return findings


def _store_gone(database: Path) -> bool:
    """No store file, or an empty one with no WAL beside it: nothing the data directory ever recorded is there."""
    try:
        if os.lstat(database).st_size:
            return False
    except FileNotFoundError:
        return True
    except OSError:
        return False  # not ours to judge: opening it says what is wrong
    try:
        return os.path.getsize(f"{database}-wal") == 0
    except OSError:
        return True


def check_store_missing(ctx: HealthContext) -> list[Finding]:
    """store-missing: recorder keys are here but the store is not (or is an empty file). Every way a store
    is made (`keys init`, a recording, `demo`) makes it with the first key, so it was deleted, moved or
    emptied since, and health said "healthy": every run recorded here gone, and the next recording starts
    an empty store. Keys put here by hand before the first recording read the same, so a warning."""
    if ctx.home is None or ctx.store is not None or not ctx.home.is_dir():
        return []
    database = ctx.home / DB_NAME
    if not _store_gone(database):
        return []
    from bitexact.crypto.keystore import KeyStore

    keys = KeyStore(ctx.home)
    try:
        held = [path.name for path in (keys.current_path, *sorted(keys.retired_dir.glob("*.key"))) if path.is_file()]
    except OSError:
        return []
    if not held:
        return []
    return [Finding(
        WARN, "store-missing",
        f"{ctx.home} holds recorder key files ({listed(held, LISTED)}) but no store: {database} was deleted, moved"
        " or emptied since the keys were made with it (or the keys were copied here before a first recording)."
        " If runs were recorded here, they are gone from this data directory: restore bitexact.db (with its"
        " -wal, if any) from a backup before anything records here, since the next recording starts an empty"
        " store",
        details={"path": str(database), "keys": held},
    )]


def check_retired_keys(ctx: HealthContext) -> list[Finding]:
    """retired-key-loose, per key: a retired recorder key file others may read or write (retired before
    rotation made retired keys owner-only, or loosened since). Every trust file listing it accepts what it
    signs, so a copy of it can sign a forged run that verifies."""
    if ctx.home is None:
        return []
    from bitexact.crypto.keystore import KeyStore

    findings: list[Finding] = []
    for path, mode in KeyStore(ctx.home).loose_retired():
        key_id = path.name.removesuffix(".key")
        findings.append(Finding(
            CRITICAL, "retired-key-loose",
            f"retired recorder key {path} has permissions {mode:04o}: others may read or write it, and every"
            " trust file listing it accepts runs and bundles it signs. `chmod 600"
            f" {path}`; if others may have"
            f" read it, `bitexact keys mark-compromised {key_id}` removes it and leaves it out of trust files"
            " (then hand relying parties a new one: `bitexact keys trust-file`)",
            details={"path": str(path), "key_id": key_id, "mode": f"{mode:04o}"},
        ))
    return findings


def check_retired_keys_load(ctx: HealthContext) -> list[Finding]:
    """retired-key-unusable, per key file: a retired recorder key file that does not load (garbage, a named
    pipe, a link to nothing). Health said healthy while `keys show` and `keys trust-file` exited 1 on it, so
    no trust file could be handed out. Loaded as they load it (a named pipe refused unread, never waited on)."""
    if ctx.home is None:
        return []
    from bitexact.crypto.ed25519 import SigningKey
    from bitexact.crypto.keystore import KeyStore

    keys = KeyStore(ctx.home)
    if not keys.retired_dir.is_dir():
        return []
    try:
        rows = {row["key_id"]: row["public_key"] for row in ctx.store.keys()} if ctx.store is not None else {}
    except BitExactError:
        rows = {}  # store-unreadable says why
    findings: list[Finding] = []
    for path in sorted(keys.retired_dir.glob("*.key")):
        try:
            SigningKey.load(path)
        except BitExactError as exc:
            key_id = path.name.removesuffix(".key")
            public = rows.get(key_id)
            # Its runs verify by the public half alone (`verify RUN` reads it from the run's checkpoints, a
            # bundle from a trust file written before): only the key files' listing is stopped.
            half = (f"the store keeps its public half ({public}), so the runs it signed still verify (`bitexact"
                    " verify RUN`, and bundles against a trust file written before)" if public is not None else
                    "the runs it signed still verify by its public half (`bitexact verify RUN` reads it from"
                    " their checkpoints; bundles against a trust file written before)")
            findings.append(Finding(
                WARN, "retired-key-unusable",
                f"retired recorder key {key_id} does not load: {exc}. Until it is fixed, `bitexact keys"
                f" show` and `bitexact keys trust-file` exit 1, so no new trust file can be handed out; {half}."
                f" Restore {path.name} from a backup of keys/ (owner-only: chmod 600); with no backup, move it"
                " out of keys/retired/, and the store's copy of its public half is listed as `missing`",
                details={"path": str(path), "key_id": key_id, **({"public_key": public} if public else {})},
            ))
    return findings


def check_missing_recorder_keys(ctx: HealthContext) -> list[Finding]:
    """recorder-key-missing: the store recorded a recorder key that no key file holds any more (deleted by
    hand, lost with a volume), so it signs nothing more, and a recording made a new key in its place."""
    if ctx.home is None or ctx.store is None:
        return []
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording.recorder_keys import missing_keys

    keys = KeyStore(ctx.home)
    try:
        gone = missing_keys(keys, ctx.store)
    except BitExactError:
        return []  # the key files do not list: recorder-key-unusable says why
    return [Finding(
        WARN, "recorder-key-missing",
        f"recorder key {info.key_id} signed for this store but its file is gone from {keys.dir} (neither"
        f" {keys.current_path.name} nor retired/{info.key_id}.key): restore it from a backup if you have one."
        " Its public half is still listed by `bitexact keys show` and in trust files (`bitexact keys"
        " trust-file`), so the runs it signed still verify; hand relying parties a new trust file",
        details={"key_id": info.key_id, "public_key": info.public_key},
    ) for info in gone]


def _span(seconds: float) -> str:
    """A time span as a person reads it: ``0.250 s`` under a minute, else ``2 days, 3:04:05``."""
    from datetime import timedelta

    return f"{seconds:.3f} s" if seconds < 60 else str(timedelta(seconds=round(seconds)))


def check_clock_back(ctx: HealthContext) -> list[Finding]:
    """entry-time-backwards, per run: an entry's ``ts`` is earlier than the entry before it, so the recording
    host's clock stepped back mid-run (an NTP step, a VM restored from a snapshot, a hand-set clock). The
    chain verifies (``ts`` is informational: steps order a run), but a duration, a "when" or a time-ordered
    merge read from those times is wrong. Read in the pass over every run's entries the capture checks make."""
    findings = []
    for run in ctx.run_captures():
        if not run.clock_back:
            continue
        first, worst = run.clock_back[0], max(back.seconds for back in run.clock_back)
        steps = [str(back.step) for back in run.clock_back]
        findings.append(Finding(
            WARN, "entry-time-backwards",
            f"{_plural(len(steps), 'entry is', 'entries are')} timed earlier than the entry before"
            f" (step{'s' if len(steps) != 1 else ''} {listed(steps, LISTED)}; step {first.step} at {first.ts},"
            f" {_span(first.seconds)} before step {first.step - 1}'s {first.previous_ts}"
            + (f"; at most {_span(worst)} back" if len(steps) > 1 else "") + "): the recording host's clock"
            " stepped back mid-run. The chain still verifies (entry times are informational; steps order the"
            " run), but durations and times read from them are wrong there. Keep the host's clock synchronised"
            " (NTP slewing, not stepping)",
            run_id=run.run_id,
            details={"steps": [back.step for back in run.clock_back],
                     "first": {"step": first.step, "ts": first.ts, "previous_ts": first.previous_ts},
                     "max_seconds_back": worst},
        ))
    return findings


RECORDING_CHECKS = (check_recording_settings, check_store_lock, check_store_wal, check_store_disk,
                    check_recorder_key,
                    check_current_key_retired, check_compromise_lost, check_store_missing, check_retired_keys,
                    check_retired_keys_load,
                    check_missing_recorder_keys,
                    check_journals_root, check_host_key, check_orphan_journals, check_unsealed_runs,
                    check_recording_gaps, check_clock_back)
"""The recording checks, in the order ``bitexact health`` runs them."""
