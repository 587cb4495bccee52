"""Committed paths: the two-level ``~0``/``~1`` escaped paths of §4.1."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_ABSENT = object()


def escape(key: str) -> str:
    """``esc``: ``~`` to ``~0``, then ``.`` to ``~1``."""
    if "~" in key:
        key = key.replace("~", "~0")
    if "." in key:
        key = key.replace(".", "~1")
    return key


def unescape(part: str) -> str:
    """The inverse: ``~1`` to ``.`` first, then ``~0`` to ``~``."""
    if "~" not in part:
        return part
    return part.replace("~1", ".").replace("~0", "~")


def resolve(data: Mapping[str, Any], path: str) -> Any:
    """The value a path names in ``data``, or :data:`ABSENT`.

    Split at the first ``.``, unescape both parts, read ``data[top]`` or
    ``data[top][sub]``; a sub-path under a non-object is absent.
    """
    top, dot, sub = path.partition(".")
    value = data.get(unescape(top), _ABSENT)
    if not dot or value is _ABSENT:
        return value
    if type(value) is not dict:
        return _ABSENT
    return value.get(unescape(sub), _ABSENT)


ABSENT: Any = _ABSENT
"""Marker for a path with no value."""


def uncommitted(data: Mapping[str, Any], commitments: Mapping[str, Any]) -> Iterator[str]:
    """The paths derived from ``data`` that ``commitments`` lacks, in document order, husks excused."""
    for key, value in data.items():
        top = escape(key)
        if type(value) is dict and value:
            for sub in value:
                path = top + "." + escape(sub)
                if path not in commitments:
                    yield path
        elif top not in commitments:
            if type(value) is dict and _has_sub_commitment(top, commitments):
                continue  # a husk: every sub-path was redacted (§4.1)
            yield top


def _has_sub_commitment(top: str, commitments: Mapping[str, Any]) -> bool:
    prefix = top + "."
    return any(path.startswith(prefix) for path in commitments)
