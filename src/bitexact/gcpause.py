"""Pausing Python's cyclic garbage collector during one bulk pass.

A scan of a 64 MiB step or a parse of a 100 MB log allocates millions of
short-lived objects that reference counting frees anyway; each allocation
burst also triggers generation-2 collections whose cost grows with the heap,
which makes such passes slower than linear. Pausing the collector for the
pass keeps them linear. Nested and concurrent pauses are counted, so the
collector comes back only when the last pass ends, and only if it was on.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees memory)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
