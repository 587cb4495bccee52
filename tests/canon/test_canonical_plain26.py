"""sdk26: ``canonical_plain`` answers an empty ``dict`` or ``list`` (a call with no keyword or no positional
arguments) without the walk, the write and the order check; what it answers is what it answered before.

The oracle is ``canonical_plain`` as it was at 730052e, kept here: same bytes, same flag, for empty and
nearly empty values of every container type (subclasses and tuples included, which are not plain).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson
import pytest

from bitexact.canon import canonical_plain, canonicalize, orjson_order_holds
from bitexact.canon.encode import _NeedsReference, _prepare


class Mapping(dict):  # type: ignore[type-arg]
    pass


class Items(list):  # type: ignore[type-arg]
    pass


def _before(value: Any) -> tuple[bytes, bool]:
    """``canonical_plain`` before sdk26."""
    if type(value) is str:
        try:
            return orjson.dumps(value), True
        except orjson.JSONEncodeError:
            return canonicalize(value), False
    try:
        prepared = _prepare(value, 1)
        data = orjson.dumps(prepared, option=orjson.OPT_SORT_KEYS)
    except (_NeedsReference, orjson.JSONEncodeError):
        return canonicalize(value), False
    if orjson_order_holds(data):
        return data, prepared is value
    return canonicalize(value), False


VALUES: list[Any] = [{}, [], (), OrderedDict(), Mapping(), Items(), {"": []}, [{}], [[]], ((),), {"a": ()}, [()],
                     [1.0], {"k": "v"}, ["\ud800"], "", "x"]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_the_bytes_and_the_flag_are_the_ones_before(value: Any) -> None:
    assert canonical_plain(value) == _before(value)
    assert type(canonical_plain(value)[0]) is bytes


@pytest.mark.parametrize("value", [{}, []], ids=repr)
def test_an_empty_dict_or_list_is_plain_and_written_as_orjson_writes_it(value: Any) -> None:
    written, plain = canonical_plain(value)
    assert plain and written == canonicalize(value) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
