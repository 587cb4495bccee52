"""The data a step stores, built by copying the caller's containers on first write.

The caller's data is never changed. A container is copied - with its
ancestors, so the copy is reachable from the copied root - the first time
something in it changes; a clean step costs no copy at all. Keys renamed by
a scrub are applied last, keeping the order of the keys, and a renamed key
that would collide with another gets `` (2)``, `` (3)``... so no two values
ever merge. Positions are named by chains of ``(container, key)`` from the
root, spelled as block paths with keys as finally stored.
"""

from __future__ import annotations

from typing import Any

from bitexact.canon import MAX_DEPTH
from bitexact.capture.errors import CaptureInputError
from bitexact.capture.paths import spell

Chain = tuple  # ((container, key), ...) from the data root to a position


class Output:
    """Copy-on-write view of one step's data."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        # Where each container sits, by id: two dicts rather than a tuple per
        # container, since millions of tracked tuples would make the garbage
        # collector's passes grow with the step.
        self.parent_of: dict[int, Any] = {}
        self.key_of: dict[int, Any] = {}
        self.copies: dict[int, Any] = {}
        self.renames: dict[int, dict[Any, str]] = {}
        self.renamed: dict[int, Any] = {}  # id -> the container whose keys are renamed
        self.applied: set[int] = set()  # containers whose renames are done

    def writable(self, container: Any) -> Any:
        """The copy of ``container`` in the output, made (with its ancestors') on first use."""
        copy = self.copies.get(id(container))
        if copy is None:
            copy = dict(container) if isinstance(container, dict) else list(container)
            self.copies[id(container)] = copy
            parent = self.parent_of.get(id(container))
            if parent is not None:
                # Under the key's stored name: a copy made after the renames must
                # land where the key now is, never bring the old key back.
                self.writable(parent)[self.stored_key(parent, self.key_of[id(container)])] = copy
        return copy

    def enter(self, container: Any, parent: Any, key: Any, depth: int) -> Any:
        """Register ``container`` as ``parent[key]``; one met twice (shared, a cycle) is copied apart."""
        if depth > MAX_DEPTH:
            raise CaptureInputError(f"the step's data is nested deeper than {MAX_DEPTH} levels")
        if id(container) in self.parent_of or container is self.root:
            container = dict(container) if isinstance(container, dict) else list(container)
            self.writable(parent)[key] = container
        self.parent_of[id(container)] = parent
        self.key_of[id(container)] = key
        return container

    def rename(self, container: Any, key: Any, new: str) -> None:
        """Store ``container[key]`` under ``new`` (applied by :meth:`apply_renames`)."""
        self.renames.setdefault(id(container), {})[key] = new
        self.renamed[id(container)] = container

    def stored_key(self, container: Any, key: Any) -> Any:
        """The name ``container[key]`` is stored under now: its new name once its renames are done."""
        if id(container) not in self.applied:
            return key
        return self.renames[id(container)].get(key, key)

    def apply_renames(self) -> None:
        """Rename keys in their copies, keeping order; never merge two keys."""
        for container_id, changes in list(self.renames.items()):
            changes = {old: new for old, new in changes.items() if new != old}
            if not changes:
                self.renames[container_id] = {}
                self.applied.add(container_id)
                continue
            target = self.writable(self.renamed[container_id])
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
            self.renames[container_id] = final
            self.applied.add(container_id)

    def spell(self, chain: Chain) -> str:
        """The block path of a position, keys as stored."""
        return spell([key if isinstance(c, list) else self.stored_key(c, key) for c, key in chain])

    def data(self) -> dict[str, Any]:
        """What the entry stores: the copied root, or the caller's data when nothing changed."""
        return self.copies.get(id(self.root), self.root)


def _unique(name: str, taken: set[Any]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... when another key already has it."""
    if name not in taken:
        return name
    n = 2
    while f"{name} ({n})" in taken:
        n += 1
    return f"{name} ({n})"
