"""``flock(2)`` on the store's lock file, without giving up the GIL when the lock is free.

``fcntl.flock`` releases Python's interpreter lock around the system call,
as every blocking call does. Under load the group-commit leader then waits
to take the interpreter lock back from writer threads, twice per commit
(lock and unlock), for far longer than the system call took: with 8
pipelining writers that was a large share of each commit. Here the lock is
first tried without blocking through a ``PyDLL`` function, which keeps the
interpreter lock for the call; only when another process holds it does the
wait go through ``fcntl.flock`` with the interpreter lock released.
Unlocking never blocks, so it always keeps the interpreter lock.

:class:`ProcessLock` bounds the wait (``BITEXACT_LOCK_TIMEOUT`` in the
store): a process stopped while it holds the lock (Ctrl-Z on an import, a
debugger) must not hang every recording agent on the host for good.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import queue
import threading
import time
from typing import Any

from bitexact.interruptible import acquire

_libc_flock: Any
try:
    _libc_flock = ctypes.PyDLL(None, use_errno=True).flock
    _libc_flock.argtypes = (ctypes.c_int, ctypes.c_int)
    _libc_flock.restype = ctypes.c_int
except (AttributeError, OSError):  # no C library symbol to call: plain fcntl.flock
    _libc_flock = None


def unlock(fd: int) -> None:
    """Release the lock on ``fd``."""
    if _libc_flock is None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    elif _libc_flock(fd, fcntl.LOCK_UN) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


class LockTimeout(Exception):
    """The lock stayed with another process for the whole wait."""


class _Wait:
    """One bounded wait for the lock, served by the lock's waiter thread."""

    __slots__ = ("gate", "acquired", "error", "wanted", "since", "queued", "taken_past")

    def __init__(self) -> None:
        # A held lock is the cheapest one-shot wake-up (an Event is a Condition in Python code):
        # the waiter thread releases it once, when the flock is taken or failed.
        self.gate = threading.Lock()
        self.gate.acquire()
        self.acquired = False
        self.error: OSError | None = None
        self.wanted = True  # a caller waits for it (changed under ProcessLock._mutex)
        # When this process began to queue for the lock; None once a caller took it past this wait (the
        # holder it queued behind let go): the next caller that joins starts the clock again.
        self.since: float | None = time.monotonic()
        self.queued = False  # handed to the waiter thread
        # A caller took the lock past this wait (ProcessLock._claim): its flock may return on the strength of
        # that caller's hold, which may have ended since, so it no longer proves the lock is this process's.
        self.taken_past = False

    def left(self, timeout: float | None) -> float | None:
        """What is left of ``timeout`` (None: no bound), counted from when this process began to queue."""
        if timeout is None or self.since is None:
            return timeout
        return timeout - (time.monotonic() - self.since)


class ProcessLock:
    """The store's cross-process write lock, with an optional bound on the wait.

    Uncontended, :meth:`acquire` is one non-blocking ``flock`` that keeps the
    GIL. Contended, with no bound, it blocks in ``flock`` as the kernel
    queues it. With a bound, the lock's waiter thread (started on the first
    contended wait, then kept) blocks in ``flock`` instead and the caller
    waits at most ``timeout`` for it: Linux has no timed ``flock``, and
    polling would let a process that commits back to back take the lock
    again before a sleeping poller wakes. A wait whose caller gave up stays
    queued in the kernel: the next :meth:`acquire` joins it rather than
    queueing a second (and waits only what is left of the bound since it
    queued), and if it gets the lock with nobody waiting it gives it
    straight back.

    The lock belongs to the open file description, which the waiter's
    duplicate descriptor shares: while a wait is queued, a caller first tries
    the lock without blocking, which succeeds when the lock is free *or*
    already the waiter's, and fails only while another description (another
    process) holds it. So a caller never waits for, or blames another
    process for, a lock its own waiter took but has not yet handed over (a
    thread not yet scheduled, the GIL kept elsewhere). Two writers never
    both believe they hold it: while a wait is queued, every try, hand-over
    and unlock of this process happens under ``_mutex`` (only the waiter's
    blocking ``flock`` does not, and it only takes); the waiter leaves
    alone a lock a caller took past its wait and holds (``_claimed``); and
    a wait's ``flock`` that returned while such a caller held the lock
    proves nothing once that caller has let go, so the waiter hands it over
    only after a non-blocking try confirms the lock is this process's.

    One thread at a time may call :meth:`acquire` (the store holds its own
    write lock around it).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._mutex = threading.Lock()
        self._pending: _Wait | None = None
        # A caller holds the lock it took (under _mutex) while a wait was still queued with the waiter thread:
        # when that wait's flock returns, the waiter must not give the lock back. Written only by callers.
        self._claimed = False
        self._requests: queue.SimpleQueue[_Wait | None] = queue.SimpleQueue()
        self._waiter: threading.Thread | None = None

    def acquire(self, timeout: float | None = None) -> None:
        """Take the lock; raise :class:`LockTimeout` if another process keeps it ``timeout`` seconds."""
        if self._pending is None:  # only a caller queues a wait: with none, the waiter thread is idle
            if try_lock(self._fd):
                return
            wait = None
        else:
            with self._mutex:
                if self._claim():
                    return
                wait = self._join()
        if wait is None:
            if timeout is None:
                fcntl.flock(self._fd, fcntl.LOCK_EX)
                return
            wait = _Wait()
        try:
            if self._pending is not wait:
                self._queue_wait(wait)
            # Counted from when this process began to queue for the lock, not from this call: once a
            # holder has kept it past the bound, later writes fail at once until it lets go, rather
            # than each waiting the whole bound again. (A Ctrl-C the kernel handed the waiter thread
            # still cuts the wait short.)
            got = acquire(wait.gate, wait.left(timeout))
        except BaseException:
            self._give_up(wait)  # Ctrl-C while waiting: this process must not keep a lock it no longer wants
            raise
        if not got:
            with self._mutex:
                if not wait.acquired:
                    wait.wanted = False  # the waiter gives the lock straight back if it gets it unwanted
                    # The last word is the kernel's, not the waiter's: it may have the lock (or it may be
                    # free) with the waiter thread not yet run to hand it over.
                    if self._claim():
                        return
                    raise LockTimeout(f"held by another process for over {timeout:g} s")
            # taken at the very moment the wait ran out: ours after all
        with self._mutex:
            self._pending = None
        if wait.error is not None:
            raise wait.error

    def release(self) -> None:
        """Give the lock back."""
        if self._claimed:
            with self._mutex:  # with the waiter's wait still queued: its flock may return at any moment
                self._claimed = False
                unlock(self._fd)
        else:
            unlock(self._fd)

    def _claim(self) -> bool:
        """Under ``_mutex``: one non-blocking try, True when it took the lock (``_claimed`` if past a queued
        wait). It fails only while another open file description holds the lock, never for the waiter's."""
        if not try_lock(self._fd):
            return False
        if self._pending is not None:
            self._claimed = True
            self._pending.taken_past = True
            self._pending.since = None
        return True

    def _join(self) -> _Wait | None:
        """Under ``_mutex``: the queued wait, now wanted by the caller; None if it ended meanwhile."""
        wait = self._pending
        if wait is not None:
            wait.wanted = True
            if wait.since is None:
                wait.since = time.monotonic()
        return wait

    def _give_up(self, wait: _Wait) -> None:
        """Abandon ``wait``: the waiter gives the lock back when it gets it, or it is given back now."""
        with self._mutex:
            if not wait.acquired:
                wait.wanted = False
                if not wait.queued and self._pending is wait:
                    self._pending = None  # interrupted before the waiter thread had it: nothing will serve it
                return
            self._pending = None
        if wait.error is None:
            unlock(self._fd)  # it was taken for this caller, who is leaving

    def close(self) -> None:
        """Stop the waiter thread once its current wait (if any) ends; the caller closes the descriptor."""
        if self._waiter is not None:
            self._requests.put(None)

    def _queue_wait(self, wait: _Wait) -> None:
        with self._mutex:
            self._pending = wait
        if self._waiter is None:
            # A duplicate shares the open file description, so the lock it takes is the
            # store's; and closing the store's descriptor meanwhile cannot leave this thread
            # a reused descriptor number to unlock.
            fd = os.dup(self._fd)
            self._waiter = threading.Thread(target=self._serve, args=(fd,), name="bitexact-store-lock-wait",
                                            daemon=True)
            self._waiter.start()
        self._requests.put(wait)
        wait.queued = True

    def _serve(self, fd: int) -> None:
        """The waiter thread: block in ``flock`` for each queued wait, hand the lock over or give it back."""
        while (wait := self._requests.get()) is not None:
            while not self._settle(fd, wait):
                pass
        os.close(fd)

    def _settle(self, fd: int, wait: _Wait) -> bool:
        """Block in ``flock`` for ``wait``, then hand the lock over or give it back; False: block again."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            wait.error = exc
        with self._mutex:
            if wait.wanted:
                # A flock that returned while a caller held the lock it took past this wait may be stale: that
                # caller may have let go since, and another process taken it. Hand over only what the kernel
                # confirms now (a non-blocking try on the description: it has the lock, or takes it).
                if wait.error is None and wait.taken_past and not try_lock(fd):
                    return False
                wait.acquired = True  # the caller claims it (and, with it, the pending slot)
                wait.gate.release()
                return True
            # Its caller gave up. Unless a caller took the lock past this wait and holds it now (the flock
            # returned because the description already had it), nobody has it: give it back.
            if wait.error is None and not self._claimed:
                fcntl.flock(fd, fcntl.LOCK_UN)
            if self._pending is wait:
                self._pending = None
            return True


def try_lock(fd: int) -> bool:
    """One non-blocking attempt that keeps the GIL; False when another process holds the lock."""
    if _libc_flock is None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    if _libc_flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) == 0:
        return True
    code = ctypes.get_errno()
    if code not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
        raise OSError(code, os.strerror(code))
    return False


def holder_pid(fd: int) -> int | None:
    """The pid of the process holding a ``flock`` on ``fd``'s file, from ``/proc/locks``; None when unknown.

    For the message of a wait that ran out: which process to look at. Linux
    only; a lock held through another mount namespace or gone meanwhile
    reads as None.
    """
    try:
        info = os.fstat(fd)
        wanted = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            for line in locks:
                fields = line.split()
                # "1: FLOCK ADVISORY WRITE <pid> <maj:min:inode> 0 EOF"; waiters have "->" after the number.
                if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
                    return int(fields[4])
    except (OSError, ValueError):
        return None
    return None
