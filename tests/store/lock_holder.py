"""A real process that holds a store's lock file until told to let go (a stopped or hung writer)."""

from __future__ import annotations

import fcntl
import multiprocessing as mp
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
