"""A signal the kernel hands another thread than the main one, sent once the main thread blocks.

Python runs a signal's handler in the main thread only; a process-directed
signal (Ctrl-C at a terminal) may land on any thread. :func:`signal_elsewhere`
sends SIGUSR1 from a thread of its own, the handler :func:`usr1_raises`
installs raising :class:`Signalled` in the main thread, and a fallback ends
the main thread's wait another way after a while, so a wait that does not
wake for the signal is seen (``gave_up``) rather than hanging the suite.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Signalled(Exception):
    """Raised by the SIGUSR1 handler in the main thread."""


@contextmanager
def usr1_raises() -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise Signalled

    before = signal.signal(signal.SIGUSR1, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR1, before)


def _main_thread_blocks() -> bool:
    """Whether the main thread's innermost Python frame is a wait, an acquire or a sliced wait (a lock wait
    under it)."""
    frame = sys._current_frames().get(threading.main_thread().ident or 0)
    return frame is not None and frame.f_code.co_name in ("wait", "acquire", "_in_slices")


def signal_elsewhere(give_up_after: float, give_up: Callable[[], None]) -> tuple[threading.Event, threading.Event]:
    """Once ``armed`` is set and the main thread blocks, send SIGUSR1 to another thread; ``give_up_after``
    seconds later, call ``give_up`` (ending the wait the failure's way) and set ``gave_up``.

    Returns ``(armed, gave_up)``.
    """
    armed, gave_up = threading.Event(), threading.Event()

    def send() -> None:
        armed.wait()
        while not _main_thread_blocks():
            time.sleep(0.001)
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
        time.sleep(give_up_after)
        gave_up.set()
        give_up()

    threading.Thread(target=send, daemon=True).start()
    return armed, gave_up
