"""The data a step stores, built by copying the caller's containers on first write.

The caller's data is never changed. A container is copied - with its
ancestors, so the copy is reachable from the copied root - the first time
something in it changes; a clean step costs no copy at all. Keys renamed by
a scrub are applied last, keeping the order of the keys, and a renamed key
that would collide with another gets `` (2)``, `` (3)``... so no two values
ever merge. Positions are named by chains of ``(position, key)`` from the
root (a container's position: see :class:`Output`), spelled as block paths
with keys as finally stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bitexact.canon import MAX_DEPTH
from bitexact.capture.errors import CaptureInputError
from bitexact.capture.paths import spell

Chain = tuple  # ((position, key), ...) from the data root to a position
ROOT = 0
"""The root's position."""


class Output:
    """Copy-on-write view of one step's data.

    The walk names each container by its *position*: the index :meth:`enter`
    gives it, in flat lists of the container, its parent's position and its
    key there. Lists rather than maps keyed by ``id()``: a map of millions of
    containers misses the cache at nearly every insert, and the walk would
    not stay linear; a list append is sequential. A container that occurs
    in two places has two positions, so a write through one never shows
    through the other.
    """

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.nodes: list[Any] = [root]  # position -> the container there, as captured
        self.parents: list[int] = [-1]  # position -> its parent's position
        self.keys: list[Any] = [None]  # position -> its key (or index) in its parent
        self.copies: dict[int, Any] = {}  # position -> its copy in the output
        self.renames: dict[int, dict[Any, str]] = {}
        self.applied: set[int] = set()  # positions whose renames are done

    def writable(self, position: int) -> Any:
        """The copy of the container at ``position`` in the output, made (with its ancestors') on first use."""
        copy = self.copies.get(position)
        if copy is None:
            container = self.nodes[position]
            copy = dict(container) if isinstance(container, dict) else list(container)
            self.copies[position] = copy
            parent = self.parents[position]
            if parent >= 0:
                # Under the key's stored name: a copy made after the renames must
                # land where the key now is, never bring the old key back.
                self.writable(parent)[self.stored_key(parent, self.keys[position])] = copy
        return copy

    def enter(self, container: Any, parent: int, key: Any, depth: int) -> int:
        """The position of ``container``, held at ``key`` in the container at ``parent``."""
        if depth > MAX_DEPTH:
            raise CaptureInputError(f"the step's data is nested deeper than {MAX_DEPTH} levels")
        self.nodes.append(container)
        self.parents.append(parent)
        self.keys.append(key)
        return len(self.nodes) - 1

    def keep_only(self, positions: Iterable[int]) -> None:
        """Forget the places of every container but ``positions`` and their ancestors (copies made stay)."""
        nodes: dict[int, Any] = {}
        parents: dict[int, int] = {}
        keys: dict[int, Any] = {}
        for position in positions:
            while position >= 0 and position not in nodes:
                nodes[position] = self.nodes[position]
                parents[position] = self.parents[position]
                keys[position] = self.keys[position]
                position = self.parents[position]
        # Maps by position from here on: every later use only indexes them by position.
        self.nodes, self.parents, self.keys = nodes, parents, keys  # type: ignore[assignment]

    def rename(self, position: int, key: Any, new: str) -> None:
        """Store ``key`` of the container at ``position`` under ``new`` (applied by :meth:`apply_renames`)."""
        self.renames.setdefault(position, {})[key] = new

    def stored_key(self, position: int, key: Any) -> Any:
        """The name ``key`` is stored under now: its new name once its container's renames are done."""
        if position not in self.applied:
            return key
        return self.renames[position].get(key, key)

    def apply_renames(self) -> None:
        """Rename keys in their copies, keeping order; never merge two keys."""
        for position, changes in list(self.renames.items()):
            changes = {old: new for old, new in changes.items() if new != old}
            if not changes:
                self.renames[position] = {}
                self.applied.add(position)
                continue
            target = self.writable(position)
            items = list(target.items())
            target.clear()
            # Keys that keep their names keep them; a renamed one that would collide is numbered.
            taken = {key for key, _ in items if key not in changes}
            final: dict[Any, str] = {}
            for key, value in items:
                name = key
                if key in changes:
                    name = _unique(changes[key], taken)
                    taken.add(name)
                target[name] = value
                final[key] = name
            self.renames[position] = final
            self.applied.add(position)

    def spell(self, chain: Chain) -> str:
        """The block path of a position, keys as stored."""
        nodes = self.nodes
        return spell([key if isinstance(nodes[p], list) else self.stored_key(p, key) for p, key in chain])

    def data(self) -> dict[str, Any]:
        """What the entry stores: the copied root, or the caller's data when nothing changed."""
        return self.copies.get(ROOT, self.root)


def _unique(name: str, taken: set[Any]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when another key already has it."""
    if name not in taken:
        return name
    n = 2
    while f"{name} ({n})" in taken:
        n += 1
    return f"{name} ({n})"
