"""Waits in the main thread that a signal cuts short.

CPython runs a signal's Python handler (Ctrl-C's ``KeyboardInterrupt``) in the
main thread, once that thread is back in the interpreter. A lock wait wakes for
the signal only when the kernel hands the signal to the waiting thread; handed
to another thread of the process (the run's writer, an HTTP server's), the main
thread sleeps on to its timeout, so a Ctrl-C during a run's exit went unheard
for the whole drain (30 s by default), and one while this process queued for
the store's lock for the whole lock timeout. In the main thread these waits wake every
:data:`SLICE` seconds to let a pending handler run; other threads, which never
run handlers, wait as they always did.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Final

SLICE: Final[float] = 0.05
"""Longest a signal's handler waits to run in a main thread waiting here (seconds)."""


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _bounded(timeout: float | None) -> float | None:
    """``timeout`` as a lock wait takes it: never negative, never past TIMEOUT_MAX (OverflowError). A NaN is
    no wait (``max(0.0, nan)`` is 0.0; the other order kept the NaN, and a sliced wait never reached it)."""
    return None if timeout is None else min(max(0.0, timeout), threading.TIMEOUT_MAX)


def _in_slices(attempt: Callable[[float], bool], timeout: float | None) -> bool:
    """Call ``attempt(seconds)`` (True: done) with at most SLICE seconds each, until it is done or ``timeout``
    has run out; its last answer."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        wait = SLICE if deadline is None else min(max(0.0, deadline - time.monotonic()), SLICE)
        if attempt(wait):
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False


def wait_for(cond: threading.Condition, predicate: Callable[[], object], timeout: float | None = None) -> bool:
    """:meth:`threading.Condition.wait_for` (``cond`` held by the caller), its result as a bool."""
    timeout = _bounded(timeout)
    if not _in_main_thread():
        return bool(cond.wait_for(predicate, timeout))
    if predicate():
        return True

    def attempt(seconds: float) -> bool:
        cond.wait(seconds)
        return bool(predicate())

    return _in_slices(attempt, timeout)


def acquire(lock: threading.Lock, timeout: float | None = None) -> bool:
    """``lock.acquire(timeout=...)`` (``None``: no bound; a bound past ``threading.TIMEOUT_MAX`` is that)."""
    timeout = _bounded(timeout)
    if not _in_main_thread():
        return lock.acquire(timeout=-1 if timeout is None else timeout)
    return _in_slices(partial(lock.acquire, True), timeout)  # acquire(blocking, timeout)


def wait_event(event: threading.Event, timeout: float | None = None) -> bool:
    """:meth:`threading.Event.wait`."""
    timeout = _bounded(timeout)
    if not _in_main_thread():
        return event.wait(timeout)
    return _in_slices(event.wait, timeout)
