"""WAL checkpoints off the commit path: a background thread copies, the writer only restarts.

SQLite's automatic checkpoint runs inside whichever commit crosses the
threshold: that commit copies the whole WAL into the database and fsyncs
it (20-40 ms for 16 MiB on the development disk), and every append queued
behind it waits. Under a steady stream of appends this put the checkpoint
into the p99 latency.

Here the writer connection never checkpoints on its own
(``wal_autocheckpoint = 0``). A thread with its own connection runs
``PRAGMA wal_checkpoint(PASSIVE)`` once commits have added about
``pass_frames`` frames (estimated from the bytes they wrote: a pass costs
two fsyncs, so it must not follow every commit): a passive checkpoint copies
committed frames into the database while writers go on appending, so the
copy is off the commit path (and, as SQLite gives up the GIL while it works,
off the writers' interpreter too).

A passive checkpoint never moves the WAL back to its start: SQLite restarts
the WAL only when a write transaction begins while every frame is already
copied, which a steady stream of commits never leaves time for. So once the
WAL passes ``restart_frames``, the thread flags a restart, and the next
commit's leader runs one passive checkpoint on the writer connection first:
it copies only the frames added since the thread's last pass, and the
transaction that follows starts the WAL over. The WAL file therefore stays
near ``restart_frames`` pages, as with the automatic checkpoint, but no
commit copies more than ``pass_frames`` and a few commits' worth of pages.

Passes every 128 frames rather than every 500 cut that restart from a
median of 3.3 ms to 0.8-2.5 ms (it still copies a pass's worth of commits
and syncs twice), and the p99 of 8 writers with 4 appends in flight each
from 5.3 to 3.4-4.5 ms (benchmarks/store_append.py): the restarting commit,
and everything queued behind it, is what a long remainder delays.

Under concurrent load (a commit that carried several appends) the thread
passes every 32 frames instead: each pass's database write and sync is
shorter, so it slows the commits beside it less, and the remainder a
restart copies is shorter. With 8 writers keeping 6 appends in flight
each, commits slower than 2 ms fell from about 30 to 8-14 per 16,000
appends and the p99 from 4.6-5.7 to 3.4-4.3 ms. A lone writer keeps the
128-frame passes: nobody queues behind its restart, and a pass every few
commits would overlap its own syncs (median append +30 µs, p90 +100 µs).

The WAL restarts every 2,000 frames rather than 1,000: half as many
restarts, each still copying only the short remainder the frequent passes
leave. Six alternating runs each on a slow stretch of the development VM:
at 1,000 frames 19,072-23,631 entries/s at p99 3.78-5.61 ms (three of six
at the goal), at 2,000 frames 20,005-24,932 at 3.75-4.65 ms (six of six).
The price is a larger grown WAL (9.8 MB instead of 5.7) and a process's
first commit at 9 ms instead of 5.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from bitexact.zerofill import leaves_headroom, write_zeros

RESTART_FRAMES: Final[int] = 2_000
"""WAL frames (8 MiB of 4 KiB pages) past which the next commit restarts the WAL."""
PASS_FRAMES: Final[int] = 128
"""WAL frames (about 512 KiB) added by a lone writer's commits between two background passes."""
BUSY_PASS_FRAMES: Final[int] = 32
"""The same under concurrent load: after a commit that carried several appends."""


class WalCheckpointer:
    """The background checkpoint thread of one store object (started on the first commit)."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        *,
        restart_frames: int = RESTART_FRAMES,
        pass_frames: int = PASS_FRAMES,
        busy_pass_frames: int = BUSY_PASS_FRAMES,
        fallback_pages: int = 4_000,
    ) -> None:
        self._connect = connect
        self._fallback_pages = fallback_pages
        self._failed = False
        self._last_copied = -1
        self._added = 0
        self.restart_frames = restart_frames
        self.pass_frames = min(pass_frames, restart_frames)
        self.busy_pass_frames = min(busy_pass_frames, self.pass_frames)
        self._wake = threading.Event()
        self._stopping = False
        self._unstartable = False  # a thread could not be started: commits keep SQLite's automatic checkpoint
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.restart_due = False
        """Set by the thread when the WAL is long; the next commit's leader clears it and restarts the WAL."""
        self.passes = 0
        """Checkpoint passes run so far (for tests and monitoring)."""

    def committed(self, frames: int, appends: int = 1) -> None:
        """A commit of ``appends`` appends added about ``frames`` WAL frames: wake the thread once
        enough have piled up (fewer when the commit was shared: see the module's docstring)."""
        self._added += frames
        if self._added < (self.busy_pass_frames if appends > 1 else self.pass_frames):
            return
        self._added = 0
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stopping and not self._unstartable:
                    thread = threading.Thread(target=self._run, name="bitexact-wal-checkpoint", daemon=True)
                    try:
                        thread.start()
                    except RuntimeError:  # no thread to be had (a process at its limit): SQLite's own checkpoint
                        self._unstartable = self._failed = True
                        return
                    self._thread = thread
        self._wake.set()

    def restart(self, writer: sqlite3.Connection) -> None:
        """Before a write transaction on ``writer``: copy what is left if a restart is due, so the WAL starts over."""
        if self._failed:
            # No thread could connect: hand checkpoints back to SQLite's own, in the commits.
            self._failed = False
            writer.execute(f"PRAGMA wal_autocheckpoint = {self._fallback_pages}")
        if not self.restart_due:
            return
        self.restart_due = False
        try:
            writer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            pass  # busy or failing: the next commit tries again, and the commit itself is unaffected

    def stop(self) -> None:
        """End the thread (it finishes the pass it is in)."""
        with self._lock:
            self._stopping = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        try:
            conn = self._connect()
        except Exception:  # noqa: BLE001 - no checkpointer: the writer's automatic checkpoint comes back
            self._failed = True
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                self._pass(conn)
        finally:
            conn.close()

    def _pass(self, conn: sqlite3.Connection) -> None:
        try:
            busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            return
        self.passes += 1
        if frames > self.restart_frames:
            self.restart_due = True
        if 0 <= copied < frames and copied != self._last_copied:
            self._wake.set()  # commits landed while it copied: go again (not when a reader holds it back)
        self._last_copied = copied


PRESIZE_FRAMES: Final[int] = RESTART_FRAMES + 3 * PASS_FRAMES
"""WAL frames the file is grown to before a process's first commit: past the restart point, so that
commits overwrite the file rather than grow it."""
_WAL_HEADER: Final[int] = 32
_FRAME_HEADER: Final[int] = 24


def presize(wal: Path, page_size: int, frames: int = PRESIZE_FRAMES) -> bool:
    """Grow the WAL file ``wal`` with zeros to ``frames`` frames of ``page_size``; True if it grew.

    An fdatasync after a write that grows a file also commits the file's new
    size (an ext4 journal commit): 230 µs against 110 µs after a write inside
    it, on the development disk. SQLite deletes the WAL when its last
    connection closes, so every process would pay the slower sync on each of
    its first ~2,000 frames (a short recording: on every commit). Zeros past
    the last frame are what a restarted WAL holds anyway (old frames):
    SQLite reads frames only while their salts and checksums match.

    The caller holds the store's write lock, so no BitExact writer appends
    frames meanwhile; only bytes past the current end are written. Best
    effort, and never at a disk's expense: the file is grown only when the
    file system keeps :data:`~bitexact.zerofill.HEADROOM` free afterwards
    (on a nearly full disk the zeros took every free byte, so the database
    could no longer grow to take a checkpoint, appends failed, and other
    programs on the disk with them), and a growth that fails part way is cut
    back to the size the file had.
    """
    target = _WAL_HEADER + frames * (_FRAME_HEADER + page_size)
    try:
        fd = os.open(wal, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size >= target or not leaves_headroom(fd, target - size):
            return False
        try:
            write_zeros(fd, size, target)
            os.fdatasync(fd)
        except OSError:
            os.ftruncate(fd, size)  # the zeros written so far are no frame SQLite needs
            return False
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
