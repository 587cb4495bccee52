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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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


def interleave(sources: list[OrderedSource]) -> list[dict[str, Any]]:
    """All events of ``sources`` in merged order (see module docstring)."""
    anchored: list[tuple[int, int, int, dict[str, Any]]] = []
    tail: list[tuple[int, int, dict[str, Any]]] = []
    for source in sources:
        anchors = sequential_anchors(source.keys) if source.sequential else source.keys
        for index, (event, anchor) in enumerate(zip(source.events, anchors)):
            if anchor is None:
                tail.append((source.order, index, event))
            else:
                anchored.append((anchor, source.order, index, event))
    # (anchor, source order, local index) is unique, so tuple order never
    # reaches the event dicts.
    anchored.sort()
    tail.sort()
    return [item[3] for item in anchored] + [item[2] for item in tail]
