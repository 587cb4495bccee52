"""The embedded store: one SQLite file in WAL mode, appends group-committed.

Two connections per store: a writer, used by one thread at a time (the group
commit leader or a maintenance write), and a reader. Every write transaction
is ``BEGIN IMMEDIATE``, so the head is read under SQLite's write lock and no
two writers, in this process or another, can both extend the same head.

Writers of different processes also take an advisory ``flock`` on a lock
file beside the database before ``BEGIN IMMEDIATE``. It is not needed for
correctness (SQLite's lock is); it replaces SQLite's busy-wait, which sleeps
in steps of up to 100 ms, with a kernel queue that wakes the next writer as
soon as the lock is free. The kernel drops it when a process dies.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bitexact.canon import canonicalize, loads
from bitexact.crypto import GENESIS
from bitexact.config import SettingError, env_float
from bitexact.errors import RunNotFoundError, StaleHeadError, StoreBusyError, StoreDamagedError, StoreError
from bitexact.evidence.paths import escape
from bitexact.evidence.timefmt import now_iso
from bitexact.private_files import create_private_file
from bitexact.store import checks, flock
from bitexact.store.base import (
    COMPROMISED_KEY_ROLE,
    AppendResult,
    ConflictError,
    EntryNotFoundError,
    PendingAppend,
    RecordError,
    RunInfo,
    StaleCheckpointError,
    Store,
    WalKeptError,
)
from bitexact.store.checks import CheckpointFields, EntryFields
from bitexact.store.groupcommit import GroupCommitter, Ticket
from bitexact.store.sqlite_schema import (
    CHECKPOINT_PAGES,
    connect,
    migrate,
    needs_migration,
    refuse_foreign_file,
    why_unopenable,
)
from bitexact.store.walcheckpoint import WalCheckpointer, presize

PAGE: Final[int] = 256
"""Entries fetched per query while streaming a run."""
_FLUSH_ATTEMPTS: Final[int] = 400
"""Tries (5 ms apart) of the truncating checkpoint after a redaction, while another checkpoint runs."""
CLOSE_DRAIN_SECONDS: Final[float] = 30.0
"""How long ``close`` waits for submitted appends to land before it closes anyway (they then fail)."""
_UNWRITABLE: Final = (sqlite3.Error, UnicodeEncodeError, OverflowError)
"""What a statement raises for a value SQLite cannot take (binding it raises before SQLite sees it):
the checks refuse these first, naming the field; this is the backstop that fails one append alone."""
_SQLITE_BUSY: Final[int] = 5
"""SQLite's primary result code for a lock another connection holds (any extended code of it, too)."""
LOCK_TIMEOUT_ENV: Final[str] = "BITEXACT_LOCK_TIMEOUT"
LOCK_TIMEOUT: Final[float] = 30.0
"""Seconds a write waits for another process's write lock before it fails (as SQLite's busy timeout)."""


class StoreSettingError(StoreError, SettingError):
    """The store cannot open under a setting it cannot use (``BITEXACT_LOCK_TIMEOUT``): a setting error,
    which a caller must not take for a store that is damaged or holds no such run."""


_RUN_COLUMNS = "run_id, steps, head_hash, sealed, started_at, updated_at, meta, kinds"


_forks = 0
"""Forks this process has come out of as the child; a store opened before one of them is refused."""


def _forked() -> None:
    global _forks
    _forks += 1


os.register_at_fork(after_in_child=_forked)


_now: Final = now_iso
"""The store's clock (``appended_at``, ``updated_at``): ``now_iso`` itself, not a function calling it (one Python
call less on every commit)."""


class _Append:
    """One ticket: consecutive entries of one run (each with its checkpoint), written all or none.

    Built in the appending thread, with its rows (all but the commit time) and
    its results ready, so that the leader's share of the work (serial, and
    under the GIL) stays small.
    """

    __slots__ = ("run_id", "items", "rows", "results", "checkpointed", "size")

    def __init__(self, run_id: str, items: tuple[tuple[EntryFields, CheckpointFields | None], ...]) -> None:
        self.run_id = run_id
        self.items = items
        rows: list[tuple[Any, ...]] = []
        results: list[AppendResult] = []
        checkpointed, size = False, 0
        for e, cp in items:  # one loop, not four comprehensions: nearly every ticket holds one entry
            rows.append((run_id, e.step, e.prev, e.kind, e.prov, e.ts, e.hash, e.blob))
            results.append(AppendResult(e.step, e.hash))
            size += len(e.blob)
            if cp is not None:
                checkpointed, size = True, size + len(cp.blob)
        self.rows, self.results, self.checkpointed = rows, results, checkpointed
        self.size = size
        """Bytes its rows store (entries and checkpoints): what the WAL frames it will add are estimated from."""


class _Exclusive:
    """:meth:`SQLiteStore._exclusive`'s hold: the store's thread lock, then the cross-process lock; released in
    the reverse order. A class rather than two nested ``@contextmanager`` generators: every group commit
    enters it, and the generators' machinery cost about 14,500 instructions (some 2 µs) a commit."""

    __slots__ = ("_store",)

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def __enter__(self) -> sqlite3.Connection:
        store = self._store
        store._check_open()  # first: in a forked child a parent thread's hold on the lock below never ends
        store._write_lock.acquire()
        try:
            store._check_open()
            store._lock_process()
        except BaseException:
            store._write_lock.release()
            raise
        return store._writer

    def __exit__(self, *exc: object) -> None:
        store = self._store
        try:
            store._process_lock.release()
        finally:
            store._write_lock.release()


@dataclass(slots=True)
class _Head:
    """What a batch checks appends against: a run's step count, head hash and checkpoint count."""

    steps: int
    hash: str
    checkpoints: int


class SQLiteStore(Store):
    """The SQLite implementation of :class:`Store`.

    ``group_commit=False`` gives every append its own transaction and fsync;
    it exists as the benchmark's baseline, not for use.
    """

    def __init__(
        self, path: Path | str, *, group_commit: bool = True, max_batch: int = 512, lock_timeout: float | None = None
    ) -> None:
        self.path = Path(path)
        try:
            self.lock_timeout = lock_timeout if lock_timeout is not None else env_float(LOCK_TIMEOUT_ENV, LOCK_TIMEOUT)
        except SettingError as exc:
            raise StoreSettingError(f"cannot open the store at {self.path}: {exc}") from None
        if not math.isfinite(self.lock_timeout) or self.lock_timeout <= 0:
            raise StoreError(
                f"cannot open the store at {self.path}: the lock timeout must be a finite number of seconds"
                f" above 0 ({LOCK_TIMEOUT_ENV}); got {self.lock_timeout!r}"
            )
        self._pid = os.getpid()
        self._forks = _forks
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._closed = False
        self._presized = False
        self._intact = False  # check_intact found nothing wrong (once per store object: it reads the whole file)
        # The lock file goes beside the -wal (companions), so every path to one database takes one lock.
        self._wal_path, lock_file = companions(self.path, "-wal", ".lock")
        self._committer: GroupCommitter[_Append, list[AppendResult]] | None = (
            GroupCommitter(self._commit_batch, max_batch=max_batch, hold=self._exclusive) if group_commit else None
        )
        opened: list[sqlite3.Connection] = []
        lock_fd = -1
        try:
            if self.path.is_file() and self.path.stat().st_size:
                refuse_foreign_file(str(self.path))  # first: a file not ours is left exactly as it is
            _create_private(self.path)
            lock_fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._lock_fd = lock_fd
            self._process_lock = flock.ProcessLock(lock_fd)
            opened.append(connect(str(self.path)))
            opened.append(connect(str(self.path)))
            self._writer, self._reader = opened
            # Checkpoints run on a thread of their own (walcheckpoint.py), never inside a commit.
            self._writer.execute("PRAGMA wal_autocheckpoint = 0")
            # A program outside the lock file (a sqlite3 shell in a write transaction) is waited for as long as
            # a BitExact writer is, not SQLite's own 30 s whatever BITEXACT_LOCK_TIMEOUT says.
            self._writer.execute(f"PRAGMA busy_timeout = {self._busy_ms()}")
            # By the path as it is now: the thread connects later, maybe after the process changed directory.
            database = str(self.path.absolute())
            self._wal = WalCheckpointer(lambda: connect(database), fallback_pages=CHECKPOINT_PAGES)
            if needs_migration(self._writer):
                with self._flock():
                    migrate(self._writer)  # checks again: another process may have just done it
        except BaseException as exc:
            for conn in opened:
                conn.close()
            if lock_fd >= 0:
                if hasattr(self, "_process_lock"):
                    self._process_lock.close()  # a wait for another process's lock may have started its thread
                os.close(lock_fd)
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise StoreError(f"cannot open the store at {self.path}: {exc}{why_unopenable(self.path, exc)}") from exc
            raise

    # -- transactions ---------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the store at {self.path} is closed")
        # _in_opening_process's test, inline: this runs three times an append.
        if _forks != self._forks:
            # SQLite connections must not cross fork(): both processes would
            # share one file lock state and could corrupt the database.
            raise StoreError(
                f"this store was opened by process {self._pid}; open the store again in this process"
            )

    def _in_opening_process(self) -> bool:
        """Not a child forked after the store opened (a counter, not ``os.getpid()``: a system call on every append)."""
        return _forks == self._forks

    @contextmanager
    def _flock(self) -> Iterator[None]:
        """The cross-process write lock, waited for at most ``lock_timeout`` seconds."""
        self._lock_process()
        try:
            yield
        finally:
            self._process_lock.release()

    def _lock_process(self) -> None:
        """Take the cross-process write lock, waiting at most ``lock_timeout`` seconds (StoreBusyError past it)."""
        try:
            self._process_lock.acquire(self.lock_timeout)
        except flock.LockTimeout:
            pid = flock.holder_pid(self._lock_fd)
            holder = f"process {pid}" if pid is not None else "another process"
            raise StoreBusyError(
                f"the store at {self.path} stayed locked by {holder} for over {self.lock_timeout:g} s, so nothing"
                f" was written; if that process is stopped or hung, resume or end it"
                f" (or raise {LOCK_TIMEOUT_ENV})"
            ) from None

    def _exclusive(self) -> _Exclusive:
        """The writer connection and the cross-process write lock, held together for a ``with`` block."""
        return _Exclusive(self)

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed (fsync'd) when the block ends without error."""
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except _UNWRITABLE as exc:
            _rollback(conn)
            if _busy(exc):
                raise self._held_by_another_program() from exc
            raise _failure(self.path, exc) from exc
        except BaseException:
            _rollback(conn)
            raise

    def _busy_ms(self) -> int:
        """The writer connection's SQLite busy timeout: ``lock_timeout`` in milliseconds."""
        return max(1, min(int(self.lock_timeout * 1000), 2**31 - 1))

    def _held_by_another_program(self) -> StoreBusyError:
        """SQLite's "database is locked" in words an operator can act on: a BitExact writer takes the lock file
        first, so what kept SQLite's own lock is another program (its raw message named neither it nor what
        to do)."""
        return StoreBusyError(
            f"the store at {self.path} stayed locked by another program's SQLite transaction for over"
            f" {self.lock_timeout:g} s (not a BitExact writer: a sqlite3 shell or a backup tool holding a write"
            f" transaction?), so nothing was written; end that transaction (or raise"
            f" {LOCK_TIMEOUT_ENV})"
        )

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """Hold the writer and run one transaction (everything but group-committed appends, which the
        Recorder checks for): on a damaged store, refused before the lock is taken (once per store)."""
        self.check_intact()
        with self._exclusive() as conn, self._transaction(conn):
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: a consistent snapshot for the queries inside it."""
        self._check_open()  # first, as in _exclusive
        with self._read_lock:
            self._check_open()
            conn = self._reader
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _failure(self.path, exc) from exc

    # -- runs -----------------------------------------------------------

    def create_run(self, run_id: str, meta: dict[str, Any] | None = None) -> None:
        run_id = checks.run_id(run_id)
        blob = checks.meta(meta)
        now = _now()
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
                raise ConflictError(f"run {run_id!r} already exists; pick another run id")
            conn.execute(
                "INSERT INTO runs (run_id, head_hash, started_at, updated_at, meta) VALUES (?, ?, ?, ?, ?)",
                (run_id, GENESIS, now, now, blob),
            )

    def head(self, run_id: str) -> tuple[int, str]:
        _bindable(run_id)
        with self._read() as conn:
            row = conn.execute("SELECT steps, head_hash FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise _missing(conn, run_id)
        return int(row[0]), str(row[1])

    def run(self, run_id: str) -> RunInfo:
        _bindable(run_id)
        with self._read() as conn:
            row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise _missing(conn, run_id)
        return _run_info(row)

    def runs(self) -> list[RunInfo]:
        with self._read() as conn:
            rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY id DESC").fetchall()
        return [_run_info(row) for row in rows]

    # -- appends --------------------------------------------------------

    def append(
        self, run_id: str, entry: dict[str, Any], *, checkpoint: dict[str, Any] | None = None,
        encoded: bytes | None = None,
    ) -> AppendResult:
        return self.append_many(run_id, [entry], [checkpoint], encoded=[encoded])[0]

    def append_many(
        self,
        run_id: str,
        entries: Sequence[dict[str, Any]],
        checkpoints: Sequence[dict[str, Any] | None] | None = None,
        *,
        encoded: Sequence[bytes | None] | None = None,
    ) -> list[AppendResult]:
        request = self._request(run_id, entries, checkpoints, encoded)
        if self._committer is not None:
            return self._committer.submit(request)
        ticket: Ticket[_Append, list[AppendResult]] = Ticket(request)
        with self._exclusive():
            self._commit_batch([ticket])
        return ticket.outcome()

    def submit(
        self,
        run_id: str,
        entries: Sequence[dict[str, Any]],
        checkpoints: Sequence[dict[str, Any] | None] | None = None,
        *,
        encoded: Sequence[bytes | None] | None = None,
    ) -> PendingAppend:
        if self._committer is None:
            return super().submit(run_id, entries, checkpoints, encoded=encoded)
        return self._committer.submit_nowait(self._request(run_id, entries, checkpoints, encoded))

    def _request(
        self,
        run_id: str,
        entries: Sequence[dict[str, Any]],
        checkpoints: Sequence[dict[str, Any] | None] | None,
        encoded: Sequence[bytes | None] | None = None,
    ) -> _Append:
        """Check the shapes and make the canonical bytes (unless ``encoded`` has them), in the caller's thread.

        Done before queueing so it overlaps with the leader's fsync.
        """
        self._check_open()
        run_id = checks.run_id(run_id)
        if not entries:
            raise RecordError("append_many needs at least one entry", field="entries")
        if checkpoints is None:
            checkpoints = [None] * len(entries)
        if len(checkpoints) != len(entries):
            raise RecordError(
                f"{len(checkpoints)} checkpoint slots for {len(entries)} entries", field="checkpoints"
            )
        if encoded is None:
            encoded = [None] * len(entries)
        elif len(encoded) != len(entries):
            raise RecordError(f"{len(encoded)} encoded slots for {len(entries)} entries", field="encoded")
        if len(entries) == 1:  # nearly every append: one entry, without a generator's two frames
            cp = checkpoints[0]
            return _Append(run_id, ((checks.entry(run_id, entries[0], encoded[0]),
                                     checks.checkpoint(run_id, cp) if cp is not None else None),))
        return _Append(
            run_id,
            tuple(
                (checks.entry(run_id, entry, blob), checks.checkpoint(run_id, cp) if cp is not None else None)
                for entry, cp, blob in zip(entries, checkpoints, encoded)
            ),
        )

    @property
    def commit_stats(self) -> tuple[int, int]:
        """``(transactions, appends)`` committed through group commit by this store object."""
        if self._committer is None:
            return (0, 0)
        return (self._committer.batches, self._committer.items)

    @property
    def queued_appends(self) -> int:
        """Appends waiting for a group commit leader to take them (for tests and monitoring)."""
        return self._committer.queued if self._committer is not None else 0

    @property
    def pending_appends(self) -> int:
        """Appends in flight through group commit: queued or being committed."""
        return self._committer.pending if self._committer is not None else 0

    def _commit_batch(self, batch: list[Ticket[_Append, list[AppendResult]]]) -> None:
        """Write a batch in one transaction; settle every ticket only once it is durable.

        The caller holds ``_exclusive()``. Nearly every batch takes the fast
        path; the checked path runs when a batch carries checkpoints or
        something in it does not extend its run's head, and gives each
        ticket its own result or error.
        """
        if not self._presized:  # this process's first commit: grow the WAL now, so that commits overwrite it
            self._presized = True
            presize(self._wal_path, int(self._writer.execute("PRAGMA page_size").fetchone()[0]))
        self._wal.restart(self._writer)
        if self._commit_fast(batch):
            return
        try:
            with self._transaction(self._writer) as conn:
                outcomes = self._apply(conn, batch)
        except StoreError as exc:
            if isinstance(exc, StoreBusyError):  # nothing was written; one by one, each would wait as long again
                for ticket in batch:
                    ticket.fail(StoreBusyError(str(exc)))
                return
            if len(batch) > 1:
                # Something failed below the head checks (disk, SQLite). Retry
                # one by one so an append that cannot be written fails alone.
                for ticket in batch:
                    self._commit_batch([ticket])
                return
            # A fresh error per ticket (not one object raised in two threads), of the same kind: a damaged
            # store said as such (the CLI's hint, the SDK's gap), where a plain StoreError lost that.
            batch[0].fail(StoreDamagedError(exc.what) if isinstance(exc, StoreDamagedError) else StoreError(str(exc)))
            return
        for ticket, outcome in outcomes:
            if isinstance(outcome, Exception):
                ticket.fail(outcome)
            else:
                ticket.succeed(outcome)
        self._wal.committed(_frames_written(batch), len(batch))  # after settling: committed is committed

    def _commit_fast(self, batch: list[Ticket[_Append, list[AppendResult]]]) -> bool:
        """The whole batch as one ``INSERT INTO appends`` in autocommit; False when it needs the checked path.

        One statement is one call into SQLite: the head checks (the view's
        trigger), the inserts, the head moves, the commit and its fsync all
        run without Python's interpreter lock, which the writer threads
        need meanwhile. Several statements would give the lock up and wait
        to retake it once each.
        """
        rows: list[Any] = []
        at = _now()
        for ticket in batch:
            if ticket.item.checkpointed:
                return False
            for row in ticket.item.rows:
                rows += row
                rows.append(at)
        count = len(rows) // _APPEND_COLUMNS
        if count > _MAX_ROWS:
            return False
        try:
            self._writer.execute(_appends_statement(count), rows)
        except sqlite3.IntegrityError:
            return False  # a stale head, a missing run, a step taken: the checked path names it per ticket
        except _UNWRITABLE as exc:
            if _busy(exc):  # another program holds SQLite's lock: the checked path would wait as long again
                for ticket in batch:
                    ticket.fail(self._held_by_another_program())
                return True
            return False  # the checked path retries, and fails only what cannot be written
        for ticket in batch:  # durable now: settled before anything else can raise
            ticket.succeed(ticket.item.results)
        self._wal.committed(_frames_written(batch), len(batch))
        return True

    def _apply(
        self, conn: sqlite3.Connection, batch: list[Ticket[_Append, list[AppendResult]]]
    ) -> list[tuple[Ticket[_Append, list[AppendResult]], list[AppendResult] | Exception]]:
        # A handful of statements per batch, whatever its size: every SQLite
        # call releases and retakes the GIL, and with writer threads busy
        # building their next entries each retake can wait.
        heads = _load_heads(conn, {ticket.item.run_id for ticket in batch})
        written: dict[tuple[str, int], str] = {}  # this batch's entries, not yet inserted
        entry_rows: list[tuple[Any, ...]] = []
        checkpoint_rows: list[tuple[Any, ...]] = []
        outcomes: list[tuple[Ticket[_Append, list[AppendResult]], list[AppendResult] | Exception]] = []
        at = _now()
        for ticket in batch:
            request = ticket.item
            run_id = request.run_id
            head = heads.get(run_id)
            if head is None:
                outcomes.append((ticket, _missing(conn, run_id)))
                continue
            # Stage the ticket's rows on a copy of the head: it lands whole or not at all.
            staged = _Head(head.steps, head.hash, head.checkpoints)
            staged_entries: list[tuple[Any, ...]] = []
            staged_checkpoints: list[tuple[Any, ...]] = []
            problem: Exception | None = None
            for (entry, checkpoint), row in zip(request.items, request.rows):
                if entry.step != staged.steps or entry.prev != staged.hash:
                    problem = _stale(run_id, entry, staged)
                    break
                if checkpoint is not None:
                    problem = _checkpoint_problem(conn, run_id, checkpoint, staged, entry.hash, written)
                    if problem is not None:
                        break
                    staged_checkpoints.append(
                        (run_id, checkpoint.seq, checkpoint.steps, checkpoint.head_hash, checkpoint.blob)
                    )
                    staged.checkpoints += 1
                staged_entries.append((*row, at))
                written[(run_id, entry.step)] = entry.hash
                staged.steps += 1
                staged.hash = entry.hash
            if problem is not None:
                for row in staged_entries:
                    written.pop((run_id, row[1]), None)
                outcomes.append((ticket, problem))
                continue
            heads[run_id] = staged
            entry_rows.extend(staged_entries)
            checkpoint_rows.extend(staged_checkpoints)
            outcomes.append((ticket, request.results))
        # The view's trigger moves each head as its entries land, and the
        # checkpoints table's trigger its checkpoint count.
        _insert_rows(conn, "appends", entry_rows)
        _insert_rows(conn, "checkpoints (run_id, seq, steps, head_hash, body)", checkpoint_rows)
        return outcomes

    # -- reading entries ------------------------------------------------

    def entries(self, run_id: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        _check_index(start, "start")
        if stop is not None:
            _check_index(stop, "stop")
        steps, _ = self.head(run_id)  # raises for an unknown run before iteration starts
        return self._stream(run_id, start, steps if stop is None else min(stop, steps))

    def _stream(self, run_id: str, start: int, stop: int) -> Iterator[dict[str, Any]]:
        return self._pages(_ENTRY_PAGE, "step", run_id, start, stop)

    def _pages(self, query: str, what: str, run_id: str, start: int, stop: int) -> Iterator[dict[str, Any]]:
        """The bodies ``query`` pages through, numbered ``start`` to ``stop`` with none missing (``what`` names
        the number in the error). Keyset pages: no read transaction stays open while the caller holds the
        iterator, and memory stays at one page."""
        number = start
        while number < stop:
            with self._read() as conn:
                rows = conn.execute(query, (run_id, number, stop, PAGE)).fetchall()
            for found, body in rows:
                if found != number:
                    raise StoreDamagedError(f"run {run_id}: {what} {number} is missing from the store; it is damaged")
                yield _stored(body, f"run {run_id}: {what} {number}")
                number += 1
            if not rows:
                raise StoreDamagedError(f"run {run_id}: {what} {number} is missing from the store; it is damaged")

    def entries_of_kind(self, run_id: str, kind: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        # The kind column: no other entry's body is read, so a damaged one elsewhere in the range is no error here.
        _check_index(start, "start")
        if stop is not None:
            _check_index(stop, "stop")
        steps, _ = self.head(run_id)  # raises for an unknown run before iteration starts
        with self._read() as conn:
            rows = conn.execute(_KIND_RANGE, (run_id, kind, start, steps if stop is None else min(stop, steps))).fetchall()
        return iter([_stored(body, f"run {run_id}: step {step}") for step, body in rows])

    def entry(self, run_id: str, step: int) -> dict[str, Any]:
        _check_index(step, "step")
        _bindable(run_id)
        with self._read() as conn:
            row = _entry_row(conn, run_id, step)
            if row is None and not _run_exists(conn, run_id):
                raise _missing(conn, run_id)
        if row is None:
            raise EntryNotFoundError(f"run {run_id} has no step {step}")
        return _stored(row[0], f"run {run_id}: step {step}")

    def rewrite_entry(self, run_id: str, step: int, entry: dict[str, Any]) -> None:
        _check_index(step, "step")
        fields = checks.entry(run_id, entry)
        if fields.step != step:
            raise RecordError(f"entry.step is {fields.step} but step {step} is being rewritten", field="step")
        with self._write() as conn:
            row = _entry_row(conn, run_id, step)
            if row is None:
                raise _missing(conn, run_id) if not _run_exists(conn, run_id) else EntryNotFoundError(
                    f"run {run_id} has no step {step}"
                )
            _check_same_chain(run_id, step, loads(row[0]), entry)
            conn.execute("UPDATE entries SET body = ? WHERE run_id = ? AND step = ?", (fields.blob, run_id, step))
            conn.execute("UPDATE runs SET updated_at = ? WHERE run_id = ?", (_now(), run_id))
            if fields.kind == "run_meta":
                _forget_meta(conn, run_id, entry.get("redacted", []))
        try:
            self.flush_destroyed()
        except StoreBusyError:
            # Its "nothing was written" is not so here: the rewrite above is committed.
            raise StoreError(
                f"{self.path}: the redacted value is gone from the database, but another process kept the store"
                f" locked for over {self.lock_timeout:g} s, so the WAL was not emptied and a copy may remain"
                " in it; `bitexact redact --resume RUN` finishes it"
            ) from None

    def flush_destroyed(self) -> None:
        """Checkpoint and truncate the WAL so a value just destroyed leaves no copy in it.

        The background checkpointer may be mid-pass, and a reader (in this or
        another process) may hold a snapshot that keeps the WAL: the truncate
        is tried for about two seconds, each try without SQLite's busy wait
        (which would hold the write lock for its full timeout per try). When
        it cannot be done, :class:`StoreError` says so: the value is gone from
        the database but may still be in the WAL, and
        ``bitexact redact --resume`` (:meth:`flush_destroyed`) finishes it.
        """
        with self._exclusive() as conn:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                for _ in range(_FLUSH_ATTEMPTS):
                    try:
                        if conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
                            self._presized = False  # the WAL is empty now: the next commit grows it again
                            return
                    except sqlite3.OperationalError as exc:
                        if "locked" not in str(exc) and "busy" not in str(exc):
                            raise _failure(self.path, exc) from exc
                    except sqlite3.Error as exc:
                        raise _failure(self.path, exc) from exc
                    time.sleep(0.005)
            finally:
                conn.execute(f"PRAGMA busy_timeout = {self._busy_ms()}")
        raise WalKeptError(
            f"{self.path}: the redacted value is gone from the database, but a reader kept the WAL from being"
            " emptied, so a copy may remain in it; close long-lived readers (a sqlite3 shell, a backup), then"
            " `bitexact redact --resume RUN` finishes it"
        )

    # -- checkpoints ----------------------------------------------------

    def checkpoints(self, run_id: str) -> list[dict[str, Any]]:
        _bindable(run_id)
        with self._read() as conn:
            if not _run_exists(conn, run_id):
                raise _missing(conn, run_id)
            rows = conn.execute("SELECT body FROM checkpoints WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [_stored(body, f"run {run_id}: a checkpoint") for (body,) in rows]

    def iter_checkpoints(self, run_id: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        _check_index(start, "start")
        if stop is not None:
            _check_index(stop, "stop")
        _bindable(run_id)
        with self._read() as conn:
            row = conn.execute("SELECT checkpoints FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise _missing(conn, run_id)  # before iteration starts, as entries() does
        stored = int(row[0])
        return self._pages(_CHECKPOINT_PAGE, "checkpoint", run_id, start, stored if stop is None else min(stop, stored))

    def add_checkpoint(self, run_id: str, checkpoint: dict[str, Any]) -> None:
        fields = checks.checkpoint(run_id, checkpoint)
        with self._write() as conn:
            head = _load_head(conn, run_id)
            if head is None:
                raise _missing(conn, run_id)
            problem = _checkpoint_problem(conn, run_id, fields, head, None)
            if problem is not None:
                raise problem
            _insert_checkpoint(conn, run_id, fields)  # its trigger moves the run's checkpoint count
            conn.execute("UPDATE runs SET updated_at = ? WHERE run_id = ?", (_now(), run_id))

    # -- custody and keys -----------------------------------------------

    def add_custody(self, run_id: str, record: dict[str, Any]) -> int:
        blob = checks.custody_record(record)
        with self._write() as conn:
            row = conn.execute("SELECT custody FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise _missing(conn, run_id)
            seq = int(row[0])
            conn.execute("INSERT INTO custody (run_id, seq, body) VALUES (?, ?, ?)", (run_id, seq, blob))
            conn.execute("UPDATE runs SET custody = ? WHERE run_id = ?", (seq + 1, run_id))
        return seq

    def custody(self, run_id: str) -> list[dict[str, Any]]:
        _bindable(run_id)
        with self._read() as conn:
            if not _run_exists(conn, run_id):
                raise _missing(conn, run_id)
            rows = conn.execute("SELECT body FROM custody WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [_stored(body, f"run {run_id}: a custody record") for (body,) in rows]

    def put_key(
        self,
        key_id: str,
        public_key: str,
        role: str,
        created_at: str,
        retired_at: str | None = None,
        compromised_at: str | None = None,
    ) -> None:
        checks.key_record(key_id, public_key, role, created_at, retired_at, compromised_at)
        with self._write() as conn:
            row = conn.execute(
                "SELECT public_key, created_at, retired_at, role FROM keys WHERE key_id = ?", (key_id,)
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO keys (key_id, public_key, role, created_at, retired_at, compromised_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (key_id, public_key, role, created_at, retired_at, compromised_at),
                )
                return
            _check_key_update(key_id, row[:3], public_key, retired_at)
            if row[3] == COMPROMISED_KEY_ROLE:
                role = COMPROMISED_KEY_ROLE  # a leaked key stays recorded as such (base.Store.put_key)
            # The first compromise date stays: a mark made again (keys/ restored from before it) is no new one.
            conn.execute(
                "UPDATE keys SET role = ?, retired_at = ?, compromised_at = coalesce(compromised_at, ?)"
                " WHERE key_id = ?", (role, retired_at, compromised_at, key_id)
            )

    def keys(self) -> list[dict[str, Any]]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT key_id, public_key, role, created_at, retired_at, compromised_at FROM keys"
                " ORDER BY created_at, key_id"
            ).fetchall()
        names = ("key_id", "public_key", "role", "created_at", "retired_at")
        # compromised_at only where it is set, as `keys show --json` lists it: every other row keeps its shape.
        return [{**dict(zip(names, row)), **({"compromised_at": row[5]} if row[5] is not None else {})}
                for row in rows]

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """SQLite's ``PRAGMA quick_check``: every page, index entry and NOT NULL of the file read once, in
        C (a damaged checkpoints or keys page read as nothing wrong to `bitexact health` before, while
        verify and export failed on it). Lines past ``limit`` are not looked for."""
        try:
            with self._read() as conn:
                rows = conn.execute(f"PRAGMA quick_check({int(limit)})").fetchall()
        except StoreDamagedError as exc:  # a page the check cannot walk (its read transaction's end fails too)
            return [str(exc.__cause__ or exc)]
        # A line may hold line breaks, under a "*** in database main ***" header: one line per problem here.
        lines = [" ".join(part for part in str(row[0]).split("\n") if part and not part.startswith("*** in database"))
                 for row in rows]
        return [] if lines == ["ok"] else [" ".join(line.split()) for line in lines if line]

    def write_lock_kept(self, seconds: float) -> bool:
        """``BEGIN IMMEDIATE`` with a busy timeout of ``seconds``, rolled back at once: busy the whole time is a
        program holding SQLite's write lock outside the lock file (a BitExact writer holds that one across its
        transaction, and `bitexact health` asks about it first). Not under the lock file: a hung holder of it
        would make this wait its full timeout."""
        with self._write_lock:
            self._check_open()
            conn = self._writer
            conn.execute(f"PRAGMA busy_timeout = {max(1, int(seconds * 1000))}")
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _busy(exc):
                    return True
                raise _failure(self.path, exc) from exc
            finally:
                conn.execute(f"PRAGMA busy_timeout = {self._busy_ms()}")
            _rollback(conn)
            return False

    def wal_uncopied(self) -> tuple[int, int] | None:
        """A passive checkpoint (it waits for no reader or writer, and changes no content: it copies committed
        frames into the database, as the background checkpointer does), and the frames it left in the log."""
        with self._write_lock:
            self._check_open()
            conn = self._writer
            try:
                busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
            except sqlite3.Error as exc:
                if _busy(exc):
                    return None
                raise _failure(self.path, exc) from exc
        if busy or frames < 0:  # another checkpoint runs (its counts are not ours), or not in WAL mode
            return None
        return max(0, int(frames) - int(copied)), page_size

    def check_intact(self) -> None:
        """SQLite's ``PRAGMA quick_check`` before the first write of this store object (about 0.5 s per GB
        the first time, in C; free after). Not per append: the append path stays as fast as it was."""
        if self._intact:
            return
        problems = self.integrity_problems(1)
        if problems:
            raise StoreDamagedError(f"the store at {self.path} is damaged ({problems[0]}), so nothing was written")
        self._intact = True

    def trust_intact(self) -> None:
        self._intact = True

    def close(self) -> None:
        """Close the store, first waiting (at most ``CLOSE_DRAIN_SECONDS``) for submitted appends to land."""
        here = self._in_opening_process()
        if not here:
            # A forked child leaves the parent's connections alone, and takes no lock: a parent
            # thread may have held one at the fork, and in the child it is never released.
            self._closed = True
            return
        if self._committer is not None:
            self._committer.drain(CLOSE_DRAIN_SECONDS)
        self._wal.stop()
        with self._write_lock, self._read_lock:
            if self._closed:
                return
            self._closed = True
            self._writer.close()
            self._reader.close()
            self._process_lock.close()
            os.close(self._lock_fd)


# -- helpers (SQL stays in this module) ---------------------------------


def companions(database: Path | str, *suffixes: str) -> list[Path]:
    """The files beside ``database`` named by ``suffixes`` (``"-wal"``, ``".lock"``; ``""`` the file itself).

    Beside the file itself, not a symlink to it: SQLite resolves the link and
    keeps its -wal and -shm there, and the store's lock file goes with them.
    """
    real = os.path.realpath(database)
    return [Path(real + suffix) for suffix in suffixes]


def lock_path(database: Path | str) -> str:
    """The write lock file of ``database``: beside the file itself, as SQLite keeps its -wal (through a symlink too)."""
    return str(companions(database, ".lock")[0])


def _busy(exc: BaseException) -> bool:
    """True for SQLite's "database is locked" (SQLITE_BUSY and its extended codes)."""
    return isinstance(exc, sqlite3.OperationalError) and getattr(exc, "sqlite_errorcode", 0) & 0xFF == _SQLITE_BUSY


def _create_private(path: Path) -> None:
    """Create the database file as 0600 before SQLite does (it would use 0644 less the umask).

    SQLite gives its ``-wal`` and ``-shm`` files the database file's mode. An
    existing file readable by others is tightened: entries hold agent inputs
    and outputs.

    Only the creation is shared (private_files); the rest is the store's own
    rule: an existing database is the normal case, not an error, and is
    tightened in place (through a symlink, if the user put one there); the
    file starts empty and SQLite makes its contents durable, so there is no
    temporary file or sync here.
    """
    try:
        fd = create_private_file(path, flags=os.O_RDWR)
    except FileExistsError:
        _tighten(path)
        # SQLite made a -wal and -shm beside a loosened file with its mode, and keeps using them (it
        # re-modes only an empty one): the -wal holds entries, so they are tightened with it.
        for companion in companions(path, "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):  # none, or its last connection just removed it
                _tighten(companion)
        return
    os.close(fd)


def _tighten(path: Path) -> None:
    """Take group and other permissions off ``path`` (through a symlink, as SQLite opens it)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o700)


def _forget_meta(conn: sqlite3.Connection, run_id: str, redacted: list[str]) -> None:
    """Drop from the run's ``meta`` (a copy of its run_meta's name) every top-level key now redacted."""
    (blob,) = conn.execute("SELECT meta FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    meta = loads(blob)
    if not isinstance(meta, dict):
        return
    kept = {key: value for key, value in meta.items() if escape(key) not in redacted}
    if kept != meta:
        conn.execute("UPDATE runs SET meta = ? WHERE run_id = ?", (checks.meta(kept), run_id))


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open, without hiding the error that got us here."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the connection is unusable; the original error says why


def _not_found(run_id: str) -> RunNotFoundError:
    return RunNotFoundError(f"no run {run_id!r} in the store; `bitexact runs` lists the runs it holds")


_DAMAGE_CODES: Final = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
"""SQLite's codes (and their extended forms, SQLITE_CORRUPT_INDEX ...) for a file that does not read back."""


def _failure(path: Path, exc: Exception) -> StoreError:
    """The error for a statement SQLite refused: a damaged file said as such, with what to do (it was
    "database disk image is malformed" alone), anything else as SQLite words it."""
    if str(getattr(exc, "sqlite_errorname", "")).startswith(_DAMAGE_CODES):
        return StoreDamagedError(f"the store at {path} is damaged ({exc})")
    return StoreError(f"{path}: {exc}")


def _missing(conn: sqlite3.Connection, run_id: str) -> RunNotFoundError | StoreError:
    """The error for a run id the runs table's index did not find: an unknown run, or, when a scan of the
    table itself finds the run, a damaged index (the run listed by `bitexact runs`, yet every command said
    "no run", exit 2, as if the id were mistyped). The scan runs only on a miss."""
    try:
        found = conn.execute("SELECT 1 FROM runs NOT INDEXED WHERE run_id = ?", (run_id,)).fetchone()
    except sqlite3.DatabaseError as exc:  # the table's own pages damaged too
        return StoreDamagedError(f"the store is damaged: looking for run {run_id!r} in its runs table failed"
                                 f" ({exc})")
    if found is None:
        return _not_found(run_id)
    return StoreDamagedError(f"the store is damaged: run {run_id!r} is in its runs table, but the table's index"
                             f" does not find it")


def _bindable(run_id: str) -> None:
    """Refuse, as an unknown run, a run id SQLite cannot bind (a lone surrogate: what a command-line
    argument that is not UTF-8 decodes to); binding it raised UnicodeEncodeError. No run holds one."""
    try:
        run_id.encode("utf-8")
    except (UnicodeEncodeError, AttributeError):  # AttributeError: not a string at all
        raise _not_found(run_id) from None


def _stale(run_id: str, entry: EntryFields, head: _Head) -> StaleHeadError:
    """The refusal of an entry that does not extend the head, saying which way it misses: a step the run
    has already taken (another writer appended first), a step past the head (one is missing between), or
    the head's step with another ``prev`` (a chain built on something other than this run's head)."""
    if entry.step < head.steps:
        why = "another writer appended first - reload the head and rebuild the entry"
    elif entry.step > head.steps:
        missing = f"step {head.steps} was" if entry.step == head.steps + 1 else f"steps {head.steps} to {entry.step - 1} were"
        why = f"{missing} never appended - append the entries before it first, in order"
    else:
        why = "its prev is not the head's hash: it was built on another chain - rebuild it on this run's head"
    return StaleHeadError(
        f"run {run_id}: the entry for step {entry.step} (prev {entry.prev[:16]}...) does not extend the head"
        f" (steps {head.steps}, head {head.hash[:16]}...); {why}"
    )


_MAX_SQLITE_INTEGER: Final[int] = 2**63 - 1


def _entry_row(conn: sqlite3.Connection, run_id: str, step: int) -> tuple[Any, ...] | None:
    """The stored body of one step; None when there is none (a step past SQLite's integers included)."""
    if step > _MAX_SQLITE_INTEGER:
        return None
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT body FROM entries WHERE run_id = ? AND step = ?", (run_id, step)).fetchone()
    return row


def _check_index(value: object, name: str) -> None:
    if type(value) is not int or value < 0:
        raise RecordError(f"{name} must be a non-negative integer; got {value!r:.80}", field=name)


def _run_exists(conn: sqlite3.Connection, run_id: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is not None


def _frames_written(batch: list[Ticket[_Append, list[AppendResult]]]) -> int:
    """About how many WAL frames (4 KiB pages) a committed batch wrote: its rows' bytes, and a few
    index, run and interior pages per run it touched."""
    if len(batch) == 1:  # a lone caller's commit (most of them): the sums below of one ticket
        return batch[0].item.size // 4096 + 4
    size = sum(ticket.item.size for ticket in batch)
    return size // 4096 + 3 * len({ticket.item.run_id for ticket in batch}) + 1


def _load_heads(conn: sqlite3.Connection, run_ids: set[str]) -> dict[str, _Head]:
    """The heads of ``run_ids`` (unknown runs are absent), in one query."""
    ids = sorted(run_ids)
    rows = conn.execute(
        f"SELECT run_id, steps, head_hash, checkpoints FROM runs WHERE run_id IN ({', '.join('?' * len(ids))})",
        ids,
    ).fetchall()
    return {row[0]: _Head(int(row[1]), str(row[2]), int(row[3])) for row in rows}


_ENTRY_PAGE: Final[str] = (
    "SELECT step, body FROM entries WHERE run_id = ? AND step >= ? AND step < ? ORDER BY step LIMIT ?")
_KIND_RANGE: Final[str] = (
    "SELECT step, body FROM entries WHERE run_id = ? AND kind = ? AND step >= ? AND step < ? ORDER BY step")
_CHECKPOINT_PAGE: Final[str] = (
    "SELECT seq, body FROM checkpoints WHERE run_id = ? AND seq >= ? AND seq < ? ORDER BY seq LIMIT ?")

_MAX_ROWS: Final[int] = 128
"""Rows per multi-row statement; a few statement shapes keep SQLite's statement cache warm."""


def _insert_rows(conn: sqlite3.Connection, target: str, rows: list[tuple[Any, ...]]) -> None:
    """``INSERT INTO target VALUES (...), (...)`` for all ``rows``, in statements of at most 128 rows."""
    for first in range(0, len(rows), _MAX_ROWS):
        chunk = rows[first : first + _MAX_ROWS]
        one = f"({', '.join('?' * len(chunk[0]))})"
        conn.execute(
            f"INSERT INTO {target} VALUES {', '.join([one] * len(chunk))}",
            [value for row in chunk for value in row],
        )


_APPEND_COLUMNS: Final[int] = 9
"""run_id, step, prev, kind, prov, ts, hash, body, at: the columns of the ``appends`` view."""


@functools.lru_cache(maxsize=_MAX_ROWS)
@functools.lru_cache(maxsize=None)  # at most _MAX_ROWS strings: made once each, not at every commit
def _appends_statement(count: int) -> str:
    """``INSERT INTO appends`` of ``count`` rows (one string per count, so SQLite's statement cache hits)."""
    one = f"({', '.join('?' * _APPEND_COLUMNS)})"
    return f"INSERT INTO appends VALUES {', '.join([one] * count)}"


def _load_head(conn: sqlite3.Connection, run_id: str) -> _Head | None:
    return _load_heads(conn, {run_id}).get(run_id)


def _run_info(row: tuple[Any, ...]) -> RunInfo:
    run_id, steps, head_hash, sealed, started_at, updated_at, meta, kinds = row
    if not isinstance(run_id, str):  # NOT NULL in the schema: only a damaged page reads so
        raise StoreDamagedError(f"the store is damaged: a row of its runs table has no readable run id"
                                f" ({run_id!r})")
    return RunInfo(
        run_id=run_id,
        steps=int(steps),
        head_hash=head_hash,
        sealed=bool(sealed),
        started_at=started_at,
        updated_at=updated_at,
        kinds=_stored(kinds, f"run {run_id}: its count of kinds"),
        meta=_stored(meta, f"run {run_id}: its name"),
    )


def _stored(blob: Any, what: str) -> Any:
    """A JSON column read back; one that does not read is a damaged store, said as such (naming the row), never a
    bare parse error: something outside BitExact changed the file (a search-and-replace over a directory)."""
    try:
        return loads(blob)
    except (ValueError, TypeError) as exc:
        raise StoreDamagedError(
            f"the store is damaged: {what} does not read back as JSON ({exc})"
        ) from None


def _checkpoint_problem(
    conn: sqlite3.Connection,
    run_id: str,
    checkpoint: CheckpointFields,
    head: _Head,
    appending: str | None,
    written: dict[tuple[str, int], str] | None = None,
) -> Exception | None:
    """Why ``checkpoint`` cannot be stored now, or None.

    ``appending`` is the hash of the entry being appended with it (the run
    then has ``head.steps + 1`` entries), or None for a checkpoint on its own;
    ``written`` holds the hashes of entries earlier in the same batch.
    A checkpoint must cover entries that exist, so none can outlive its entry.
    """
    if checkpoint.seq != head.checkpoints:
        return StaleCheckpointError(
            f"run {run_id}: checkpoint seq {checkpoint.seq} is not the next one ({head.checkpoints});"
            " another writer checkpointed first - reload the checkpoints and mint it again"
        )
    steps = head.steps + (1 if appending is not None else 0)
    if checkpoint.steps > steps:
        return RecordError(
            f"run {run_id}: checkpoint covers {checkpoint.steps} steps but the run has {steps}", field="steps"
        )
    expected: str | None  # None: the step it covers is not stored
    if checkpoint.steps == 0:
        expected = GENESIS
    elif appending is not None and checkpoint.steps == steps:
        expected = appending
    elif checkpoint.steps == head.steps:
        expected = head.hash
    elif written and (run_id, checkpoint.steps - 1) in written:
        expected = written[(run_id, checkpoint.steps - 1)]
    else:
        row = conn.execute(
            "SELECT hash FROM entries WHERE run_id = ? AND step = ?", (run_id, checkpoint.steps - 1)
        ).fetchone()
        expected = row[0] if row else None
    if checkpoint.head_hash != expected:
        return RecordError(
            f"run {run_id}: checkpoint head_hash {checkpoint.head_hash[:16]}... is not the hash of step"
            f" {checkpoint.steps - 1} ({str(expected)[:16]}...)",
            field="head_hash",
        )
    return None


def _insert_checkpoint(conn: sqlite3.Connection, run_id: str, checkpoint: CheckpointFields) -> None:
    conn.execute(
        "INSERT INTO checkpoints (run_id, seq, steps, head_hash, body) VALUES (?, ?, ?, ?, ?)",
        (run_id, checkpoint.seq, checkpoint.steps, checkpoint.head_hash, checkpoint.blob),
    )


def _check_same_chain(run_id: str, step: int, stored: dict[str, Any], new: dict[str, Any]) -> None:
    """Refuse a rewrite that changes anything the chain hash covers (§6, store redaction step 2)."""
    if new.get("hash") != stored.get("hash"):
        raise ConflictError(
            f"run {run_id} step {step}: a rewrite must keep the entry's hash; it would change"
            f" {str(stored.get('hash'))[:16]}... to {str(new.get('hash'))[:16]}..."
        )
    old_body, new_body = checks.chain_body(stored), checks.chain_body(new)
    # Compare canonical bytes, not Python values: True == 1 and 1 == 1.0 in
    # Python, but they hash differently.
    if canonicalize(old_body) != canonicalize(new_body):
        changed = sorted(
            k
            for k in old_body.keys() | new_body.keys()
            if k not in old_body or k not in new_body or canonicalize(old_body[k]) != canonicalize(new_body[k])
        )
        first = "commitments" if "commitments" in changed else changed[0]
        raise ConflictError(
            f"run {run_id} step {step}: a rewrite may replace only data, salts and redacted;"
            f" it would change {first!r} (changed: {', '.join(changed)})"
        )
    # Redaction only ever removes: a rewrite built from a copy read before another redaction
    # of this entry landed would otherwise bring the value that one destroyed back.
    kept = set(new.get("redacted", []))
    restored = [path for path in stored.get("redacted", []) if path not in kept]
    if restored:
        raise ConflictError(
            f"run {run_id} step {step}: a rewrite must keep every path already redacted; it would restore"
            f" {', '.join(map(repr, restored))} (the entry changed since it was read: read it again)"
        )


def _check_key_update(key_id: str, row: tuple[Any, ...], public_key: str, retired_at: str | None) -> None:
    """Refuse updates that rewrite a key's history. ``created_at`` is not compared: the
    first registration's value is kept (a rotation knows only the retirement time)."""
    old_public, _old_created, old_retired = row
    if public_key != old_public:
        raise ConflictError(f"key {key_id} is bound to another public key; a key id never changes keys")
    if old_retired is not None and retired_at != old_retired:
        raise ConflictError(f"key {key_id} was retired at {old_retired}; a retired key stays retired")
