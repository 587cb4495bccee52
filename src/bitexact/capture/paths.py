"""Path spelling shared with the bundle format (bundle-format.md §4.1).

``esc`` replaces ``~`` with ``~0`` then ``.`` with ``~1``; a committed path is
one or two escaped keys joined by ``.``. The capture block spells a position
deeper than a committed path by continuing the same way, one escaped segment
per level, an array index written in decimal: ``content.files.0.b64``. Because
every literal dot in a key is escaped, splitting at every ``.`` is
unambiguous, and the value at each level (an object or an array) says whether
a decimal segment is a key or an index.
"""

from __future__ import annotations

from collections.abc import Sequence

from bitexact.evidence.paths import escape as esc
from bitexact.evidence.paths import split_path
from bitexact.evidence.paths import unescape as unesc

__all__ = ["esc", "spell", "split_rule_path", "unesc"]


def spell(segments: Sequence[str | int]) -> str:
    """The block spelling of a position given as keys and indexes from the data root."""
    return ".".join(str(s) if isinstance(s, int) else esc(s) for s in segments)


def split_rule_path(path: str) -> tuple[str, ...]:
    """Split a rule or hint path (``KEY`` or ``KEY.SUBKEY``) at its first dot, unescaped."""
    top, sub = split_path(path)
    return (top, sub) if sub is not None else (top,)
