"""sdk26: ``deeper_than`` answers a value of an exact leaf type (str, int, float, bool, None) "no container"
without ``isinstance``; ``_build``'s test for a dict subclass in ``data`` likewise.

The oracle is ``deeper_than`` as it was at 730052e, kept here: the same answer for containers of every kind
(subclasses of dict, list, tuple and str, an OrderedDict, an object whose ``__class__`` claims a container's type,
as ``isinstance`` reads it) at every limit; and an entry whose ``data`` holds a dict subclass is still written
from its values' bytes (a dict subclass's members are read by ``items()``, orjson's from the dict), canonically.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.evidence.entry import deeper_than, encode_entry

_CONTAINERS = (dict, list, tuple)


def _before(value: Any, limit: int) -> bool:
    """``deeper_than`` before sdk26."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    while level and limit > 0:
        limit -= 1
        below = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, _CONTAINERS):
                    below.append(child)
        level = below
    return bool(level)


class Text(str):
    pass


class Number(int):
    pass


class Items(list):  # type: ignore[type-arg]
    pass


class Pairs(tuple):  # type: ignore[type-arg]
    pass


class Members(dict):  # type: ignore[type-arg]
    pass


class Hiding(dict):  # type: ignore[type-arg]
    """A dict subclass whose ``items()`` (what canonicalize and the paths read) hides a member orjson would write."""

    def items(self) -> Any:
        return [(key, value) for key, value in super().items() if key != "hidden"]


class ClaimsList:
    """An object ``isinstance`` takes for a list (its ``__class__`` says so), iterable as one."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105
        return list

    def __iter__(self) -> Any:
        return iter([["inner"]])


VALUES: list[Any] = [
    "x", 1, 1.5, True, None, Text("t"), Number(3), [], (), {},
    ["a", 1, None, [True]], ("a", ("b",)), {"a": {"b": {"c": "d"}}},
    Items([Items([Text("x")])]), Pairs((Pairs(),)), Members(a=Members(b=[])), OrderedDict(a=OrderedDict(b=())),
    {"a": Text("x"), "b": Number(1), "c": [Members()]}, [ClaimsList()], {"k": ClaimsList()}, ClaimsList(),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_the_depth_walk_answers_as_before(value: Any) -> None:
    for limit in range(6):
        assert deeper_than(value, limit) is _before(value, limit), limit


@pytest.mark.parametrize("member", [Members(a="x"), Hiding(a="x", hidden="y"), OrderedDict(a="x"), {"a": "x"}, ["x"],
                                    "x", 1.0, None])
def test_an_entry_with_any_member_is_stored_canonically(member: Any) -> None:
    built = encode_entry(run_id="run-1", step=0, kind="tool_call", prov="observed",
                         data={"tool": "t", "result": member}, prev="0" * 64, alg="blake2b-256")
    assert built.encoded == canonicalize(built.entry)  # made here, from the values' bytes where not plain
