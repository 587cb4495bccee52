"""Timestamp interleaving that keeps every source's own order (T-UAS-056, T-UAS-057).

Sequential sources (agent streams, gateway and firewall logs ...) are merged
by a nondecreasing *anchor*: the first valid timestamp anchors the untimed
records before it, and each later record uses the latest timestamp seen so
far, so a regressing clock never reverses the source's records.  Unordered
batches (OTLP exports) sort by each observation's own timestamp.

Anchored observations are merged by ``(anchor, source enumeration order,
source-local index)``; completely untimed sources and untimed OTLP
observations follow, in source enumeration order and then source-local
order.  Anchors exist only here: they are never written as timestamps.

Two equivalent forms: ``merge_positions`` sorts one packed integer per event
(all keys in memory; the reference form, also used by ``interleave``), and
``merge_runs`` - what the writer uses - streams a k-way merge of per-source
runs that are each already in merge order, holding one record per source.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class OrderedSource:
    """One selected source's normalized events and their observed ordering keys."""

    order: int
    sequential: bool
    events: list[dict[str, Any]]
    keys: list[int | None]


def sequential_anchors(keys: list[int | None]) -> list[int | None]:
    """Merge-only anchors of a sequential source (``None`` for a wholly untimed source)."""
    first = next((k for k in keys if k is not None), None)
    if first is None:
        return [None] * len(keys)
    anchors: list[int | None] = []
    latest = first
    for key in keys:
        if key is not None and key > latest:
            latest = key
        anchors.append(latest)
    return anchors


INDEX_BITS = 40
"""Low bits of a merge position: the event's index within its source."""
_INDEX_MASK = (1 << INDEX_BITS) - 1
_POSITION_BITS = 64


def merge_positions(sources: list[tuple[int, bool, list[int | None]]]) -> list[int]:
    """Merged order as packed positions ``source_order << INDEX_BITS | index``.

    ``sources`` are ``(order, sequential, ordering keys)``.  Sorting one
    integer per event (anchor in the high bits) instead of a tuple holding the
    event keeps the merge small enough for sources of any size; the events
    themselves are fetched only when written.
    """
    anchored: list[int] = []
    tail: list[int] = []
    for order, sequential, keys in sources:
        anchors = sequential_anchors(keys) if sequential else keys
        base = order << INDEX_BITS
        for index, anchor in enumerate(anchors):
            if anchor is None:
                tail.append(base | index)
            else:
                # (anchor, source order, local index) is unique; a negative
                # anchor keeps its order because the low bits are OR-ed in.
                anchored.append((anchor << _POSITION_BITS) | base | index)
    anchored.sort()
    tail.sort()
    low = (1 << _POSITION_BITS) - 1
    return [key & low for key in anchored] + tail


def split_position(position: int) -> tuple[int, int]:
    """``(source order, local index)`` of a packed merge position."""
    return position >> INDEX_BITS, position & _INDEX_MASK


def interleave(sources: list[OrderedSource]) -> list[dict[str, Any]]:
    """All events of ``sources`` in merged order (see module docstring)."""
    by_order = {source.order: source for source in sources}
    positions = merge_positions([(s.order, s.sequential, s.keys) for s in sources])
    out = []
    for position in positions:
        order, index = split_position(position)
        out.append(by_order[order].events[index])
    return out


class Run(Protocol):
    """One source as the streaming merge reads it (``SourceBuilder`` implements it)."""

    def anchored(self) -> Iterable[tuple[int, bytes]]:
        """``(anchor, line)`` in nondecreasing anchor order (ties: source-local order)."""
        ...

    def unanchored(self) -> Iterable[bytes]:
        """Lines that follow all anchored observations, in source-local order."""
        ...


def merge_runs(runs: Sequence[Run]) -> Iterator[bytes]:
    """Every line of ``runs`` (listed in source enumeration order) in merged order.

    Same order as ``merge_positions``: anchored lines by ``(anchor, source
    order, local index)`` - the heap breaks equal anchors by the position
    of the run in ``runs`` and keeps each run's own order - then
    the unanchored lines source by source.
    """
    # heapq.merge(..., key=itemgetter(0)) written out for (anchor, line) pairs: one list per run, compared by
    # (anchor, run position) as heapq.merge compares, without its key call and tuple unpacking per line.
    heap: list[list[Any]] = []
    for order, run in enumerate(runs):
        pairs = iter(run.anchored())
        first = next(pairs, None)
        if first is not None:
            heap.append([first[0], order, first[1], pairs])
    heapq.heapify(heap)
    while len(heap) > 1:
        entry = heap[0]
        yield entry[2]
        pair = next(entry[3], None)
        if pair is None:
            heapq.heappop(heap)
        else:
            entry[0], entry[2] = pair
            heapq.heapreplace(heap, entry)
    if heap:
        _anchor, _order, line, pairs = heap[0]
        yield line
        for _anchor, line in pairs:
            yield line
    for run in runs:
        yield from run.unanchored()
