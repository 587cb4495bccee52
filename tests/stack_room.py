"""The stack left to a garbage collection's finalizers while a call runs.

A parser that recurses near the interpreter's recursion limit fails whatever
runs there: a collection started by the parser's own allocations runs every
finalizer of the garbage it finds (another library's, the agent's) with no
stack left, and each one dies of ``RecursionError`` ("Exception ignored in
..."). :func:`least_finalizer_room` makes that happen on purpose: it plants
one cyclic object with a finalizer, lets the next collection start after each
of many allocation counts, and reports the fewest frames any finalizer had.
"""

from __future__ import annotations

import gc
from collections.abc import Callable


def _recurse(depth: int) -> int:
    return _recurse(depth - 1) + 1 if depth else 0


def _room() -> int:
    """How many more Python frames this point of the stack can take (a binary search)."""
    low, high = 0, 5000
    while low < high:
        middle = (low + high + 1) // 2
        try:
            _recurse(middle)
        except RecursionError:
            high = middle - 1
        else:
            low = middle
    return low


def least_finalizer_room(call: Callable[[], object], thresholds: range = range(25, 3000, 25)) -> int:
    """The fewest frames a finalizer found while ``call`` ran, the collector started at each threshold."""
    rooms: list[int] = []

    class _Finalized:
        def __del__(self) -> None:
            rooms.append(_room())

    threshold, enabled = gc.get_threshold(), gc.isenabled()
    try:
        for allocations in thresholds:
            gc.collect(0)  # the youngest generation only: its count starts again from nothing, and it is cheap
            gc.disable()
            cyclic = _Finalized()
            cyclic.self = cyclic  # type: ignore[attr-defined]
            del cyclic  # garbage only a collection finds
            gc.set_threshold(allocations)
            gc.enable()
            try:
                call()
            finally:
                gc.collect(0)  # the planted object is still the youngest unless a collection already ran it
    finally:
        gc.set_threshold(*threshold)
        if not enabled:
            gc.disable()
    assert len(rooms) == len(thresholds), "every planted finalizer ran"
    return min(rooms)
