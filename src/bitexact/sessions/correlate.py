"""Tool correlation (UAS 5.4, T-UAS-022..024).

Pairing uses the exact supplied ID within a caller scope; nothing here
invents an ID, pairs by tool name when IDs conflict, or closes a dangling
start.  ``ToolTracker`` is the stateful helper the engine adapters use while
mapping; ``pair_tools`` analyses a finished canonical trace (for readers and
tests) into pairs, dangling starts and orphan completions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable, Mapping


@dataclass
class ToolTracker:
    """Exact-ID bookkeeping for starts and completions within scopes."""

    starts: dict[tuple[Hashable, Any], list[Any]] = field(default_factory=dict)
    completed: set[tuple[Hashable, Any]] = field(default_factory=set)

    def started(self, scope: Hashable, call_id: Any, name: Any) -> None:
        """Record an observed start (``name`` may be ``None``)."""
        if not _usable_id(call_id):
            return
        self.starts.setdefault((scope, call_id), []).append(name)

    def has_start(self, scope: Hashable, call_id: Any) -> bool:
        return _usable_id(call_id) and (scope, call_id) in self.starts

    def name_for(self, scope: Hashable, call_id: Any) -> Any:
        """The tool name of the exact matching start, if unambiguous, else ``None``."""
        if not _usable_id(call_id):
            return None
        names = self.starts.get((scope, call_id))
        if not names:
            return None
        if len(names) == 1:  # one start (nearly every call): its name, or None, as the count below finds
            return names[0]
        distinct = {repr(n) for n in names if n is not None}
        if len(distinct) != 1:
            return None
        return next(n for n in names if n is not None)

    def mark_complete(self, scope: Hashable, call_id: Any) -> bool:
        """Mark a completion observed; False when this ID was already completed."""
        if not _usable_id(call_id):
            return True
        key = (scope, call_id)
        if key in self.completed:
            return False
        self.completed.add(key)
        return True

    def is_complete(self, scope: Hashable, call_id: Any) -> bool:
        return _usable_id(call_id) and (scope, call_id) in self.completed


def _usable_id(call_id: Any) -> bool:
    return isinstance(call_id, (str, int)) and not isinstance(call_id, bool)


@dataclass(frozen=True)
class ToolPairing:
    """Result of ``pair_tools``: indices into the trace."""

    pairs: list[tuple[int, int]]
    dangling: list[int]
    orphans: list[int]
    ambiguous: list[int]


def _scope_of(event: Mapping[str, Any], data: Mapping[str, Any]) -> Hashable:
    parent = event.get("parent_tool_use_id", data.get("parentToolCallId"))
    agent = event.get("agentId", data.get("agentId"))
    session = event.get("sessionID")
    return (repr(parent), repr(agent), repr(session))


def pair_tools(events: Iterable[Mapping[str, Any]]) -> ToolPairing:
    """Pair starts and completions of a canonical trace by exact ``toolCallId``.

    A completion pairs with the earliest unpaired start carrying the same ID
    in the same scope.  Events without an ID are never paired by name here
    (a display may do so for unambiguous cases).  A start whose ID is reused
    by a later start before completion makes that ID ambiguous.
    """
    pending: dict[tuple[Hashable, Any], list[int]] = {}
    pairs: list[tuple[int, int]] = []
    orphans: list[int] = []
    ambiguous: list[int] = []
    for index, event in enumerate(events):
        kind = event.get("type")
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        call_id = data.get("toolCallId")
        if kind == "tool.execution_start":
            if _usable_id(call_id):
                key = (_scope_of(event, data), call_id)
                if pending.get(key):
                    ambiguous.append(index)
                pending.setdefault(key, []).append(index)
            else:
                pending.setdefault((None, ("no-id", index)), []).append(index)
        elif kind == "tool.execution_complete":
            key = (_scope_of(event, data), call_id)
            if _usable_id(call_id) and pending.get(key):
                pairs.append((pending[key].pop(0), index))
            else:
                orphans.append(index)
    dangling = sorted(i for starts in pending.values() for i in starts)
    return ToolPairing(pairs=pairs, dangling=dangling, orphans=orphans, ambiguous=ambiguous)


def split_mcp_name(name: Any) -> tuple[str, str] | None:
    """Split a ``mcp__server__tool`` name into (server, tool), or None.

    The server segment ends at the first ``__`` after the prefix; the tool
    keeps any further ``__`` unchanged.
    """
    if not isinstance(name, str) or not name.startswith("mcp__"):
        return None
    rest = name[5:]
    server, sep, tool = rest.partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool
