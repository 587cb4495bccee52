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
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
from typing import Any

_libc_flock: Any
try:
    _libc_flock = ctypes.PyDLL(None, use_errno=True).flock
    _libc_flock.argtypes = (ctypes.c_int, ctypes.c_int)
    _libc_flock.restype = ctypes.c_int
except (AttributeError, OSError):  # no C library symbol to call: plain fcntl.flock
    _libc_flock = None


def lock(fd: int) -> None:
    """Take the exclusive lock on ``fd``, waiting (with the GIL released) while another process holds it."""
    if _libc_flock is not None:
        if _libc_flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EINTR):
            raise OSError(code, os.strerror(code))
    fcntl.flock(fd, fcntl.LOCK_EX)


def unlock(fd: int) -> None:
    """Release the lock on ``fd``."""
    if _libc_flock is None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    elif _libc_flock(fd, fcntl.LOCK_UN) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
