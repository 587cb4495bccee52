"""A real process that holds a store's lock file until told to let go (a stopped or hung writer)."""

from __future__ import annotations

import ctypes
import fcntl
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def _hold(path: str, held: "mp.synchronize.Event", release: "mp.synchronize.Event") -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held.set()
    release.wait(60)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@contextmanager
def held_by_another_process(path: Path) -> Iterator[tuple[int, "mp.synchronize.Event"]]:
    """A spawned process holds ``path``'s flock until the yielded event is set (or the block ends)."""
    ctx = mp.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(str(path), held, release))
    holder.start()
    try:
        assert held.wait(30), "the holder process did not take the lock"
        assert holder.pid is not None
        yield holder.pid, release
    finally:
        release.set()
        holder.join(30)
    assert holder.exitcode == 0


STARTED, TAKE, HELD, LET_GO, LET_GO_DONE = range(5)  # a FlagHolder's flags in shared memory


def _hold_by_flags(path: str, flags: Any) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    flags[STARTED] = 1
    while not flags[TAKE]:
        if flags[LET_GO]:  # let go before it was told to take: never takes
            os.close(fd)
            return
        time.sleep(0.001)
    fcntl.flock(fd, fcntl.LOCK_EX)
    flags[HELD] = 1
    while not flags[LET_GO]:
        time.sleep(0.001)
    fcntl.flock(fd, fcntl.LOCK_UN)
    flags[LET_GO_DONE] = 1
    os.close(fd)


def _spin_until(done: Callable[[], bool], what: str) -> None:
    """Wait for another process without giving up this thread's GIL (no blocking call)."""
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, what


class FlagHolder:
    """Another process that takes and lets go of a lock file's flock when told, through shared memory only.

    :meth:`take` and :meth:`let_go` return once the holder has done it, and
    never give up this thread's GIL meanwhile: within :func:`no_thread_switch`,
    no other thread of this process runs until this thread blocks.
    """

    def __init__(self, pid: int, flags: Any) -> None:
        self.pid = pid
        self._flags = flags

    def take(self) -> None:
        self._flags[TAKE] = 1
        _spin_until(lambda: bool(self._flags[HELD]), "the holder process did not take the lock")

    def let_go(self) -> None:
        self._flags[LET_GO] = 1
        _spin_until(lambda: bool(self._flags[LET_GO_DONE]), "the holder process did not let go")


@contextmanager
def flag_holder(path: Path, *, holding: bool = True) -> Iterator[FlagHolder]:
    """A spawned :class:`FlagHolder` of ``path``'s flock, holding it already unless ``holding=False``."""
    ctx = mp.get_context("spawn")
    flags = ctx.RawArray("b", 5)
    holder = ctx.Process(target=_hold_by_flags, args=(str(path), flags))
    holder.start()
    try:
        deadline = time.monotonic() + 30
        while not flags[STARTED]:
            assert time.monotonic() < deadline, "the holder process did not start"
            time.sleep(0.001)
        assert holder.pid is not None
        held = FlagHolder(holder.pid, flags)
        if holding:
            held.take()
        yield held
    finally:
        flags[LET_GO] = 1
        holder.join(30)
    assert holder.exitcode == 0


_libc = ctypes.PyDLL(None, use_errno=True)


def wchan(tid: int) -> bytes:
    """Where thread ``tid`` of this process sleeps in the kernel (``/proc/self/task/<tid>/wchan``; ``0`` when it
    runs), read through ``PyDLL`` calls, which keep the GIL: ``open()``/``os.read`` give it up, and would let
    the thread watched run on."""
    fd = _libc.open(f"/proc/self/task/{tid}/wchan".encode(), os.O_RDONLY)
    if fd < 0:
        return b""
    buf = ctypes.create_string_buffer(64)
    try:
        n = _libc.read(fd, buf, 64)
    finally:
        _libc.close(fd)
    return buf.raw[: max(n, 0)]


def in_flock(tid: int) -> bool:
    """Thread ``tid`` sleeps in ``flock`` (queued for a lock)."""
    return wchan(tid) == b"locks_lock_inode_wait"


def waits_for_gil(tid: int) -> bool:
    """Thread ``tid`` sleeps on a futex (for the GIL, when it is back from a blocking call)."""
    return wchan(tid).startswith(b"futex")


@contextmanager
def no_thread_switch() -> Iterator[None]:
    """No other thread of this process takes the GIL from this one until it blocks (a 100 s switch interval).

    A thread starved of the GIL as a loaded machine may starve it, but for as
    long as the test needs, not for however long the machine happens to take.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def free_for_others(path: Path, within: float = 30.0) -> bool:
    """True once a fresh open file description can take the lock (nobody in this process keeps it)."""
    deadline = time.monotonic() + within
    fd = os.open(path, os.O_RDWR)
    try:
        while time.monotonic() < deadline:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            fcntl.flock(fd, fcntl.LOCK_UN)
            return True
        return False
    finally:
        os.close(fd)
