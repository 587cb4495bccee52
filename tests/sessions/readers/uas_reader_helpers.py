"""Helpers for the reader/bootstrap tests: deep-frozen fixtures and fixture loading."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "readers"


def _refuse(*_args: Any, **_kwargs: Any) -> Any:
    raise TypeError("frozen fixture: input mutation attempted")


class FrozenDict(dict):
    """A dict whose mutation raises (T-UAS-052: frozen fixtures expose accidental mutation)."""

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _refuse  # type: ignore[assignment]


class FrozenList(list):
    """A list whose mutation raises."""

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __iadd__ = __imul__ = _refuse  # type: ignore[assignment]


def freeze(value: Any) -> Any:
    """A deep-frozen copy of a JSON value (still a dict/list for isinstance checks)."""
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList(freeze(v) for v in value)
    return value


def load(name: str) -> Any:
    """A JSON fixture of ``tests/sessions/fixtures/readers``."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def frozen(name: str) -> tuple[Any, Any]:
    """``(frozen fixture, independent deep copy for the before/after comparison)``."""
    value = load(name)
    return freeze(value), copy.deepcopy(value)
