"""entry25: ``canonical_plain`` is ``canonicalize``, and says when orjson writes the value itself as those bytes.

The write path writes an entry's ``data`` in one orjson call when every committed value is plain: a value it
calls plain must be written by ``orjson.dumps(value, option=OPT_SORT_KEYS)`` as its canonical bytes, also
inside a larger object (where orjson writes it the same way). A value it does not call plain may be anything.
"""

from __future__ import annotations

from collections import OrderedDict
from enum import Enum
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import canonical_plain, canonicalize, orjson_order_holds
from bitexact.errors import CanonicalizationError


class Tag(str):
    pass


class Colour(str, Enum):
    RED = "red"


def check(value: Any) -> bool:
    """Assert canonical_plain's contract for ``value``; return its flag (None refused as canonicalize refuses)."""
    try:
        expected = canonicalize(value)
    except CanonicalizationError:
        with pytest.raises(CanonicalizationError):
            canonical_plain(value)
        return False
    written, plain = canonical_plain(value)
    assert written == expected
    if plain:
        assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS) == expected
        assert orjson.dumps({"k": [value]}, option=orjson.OPT_SORT_KEYS) == canonicalize({"k": [value]})
    return plain


PLAIN: list[Any] = ["k" * 1000, "", "\U0001F600", "\u00e9\u2028", 0, -3, 2**53 - 1, 0.5, 1.5e300, True, None,
                    [1e21], [], {}, ["a", 1, [2.5, {"b": None}]], {"z": 1, "a": {"\u00e9": "x", "e": [0.25]}},
                    {"\U0001F600": 1, "\u00e9": 2}, {"\uff01": 1, "\ue000": 2}]
NOT_PLAIN: list[Any] = [1.0, [1.0], {"a": 2.0}, ("a", 1), [("a",)], 1e-7, 2.0**60, Tag("x"), Colour.RED,
                        {"a": Tag("x")}, OrderedDict([("b", 1)]), [OrderedDict()], "\ud800", ["a\udfff"],
                        {"\U0001F600": 1, "\uff01": 2}, [{"\U0001F600": "\uff01"}], 2**64, {Tag("k"): 1}]


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_plain_values_are_called_plain(value: Any) -> None:
    assert check(value) is True


@pytest.mark.parametrize("value", NOT_PLAIN, ids=repr)
def test_values_orjson_would_write_otherwise_are_not_plain(value: Any) -> None:
    assert check(value) is False


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
    | st.sampled_from(["\U0001F600", "\uff01", "\ud800", Tag("t"), 1.0, -0.0, 1e-7]),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner) | st.dictionaries(
        st.text(max_size=4) | st.sampled_from(["\U0001F600", "\uff01", "\ue000"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=1500, deadline=None)
@given(value=JSON)
def test_canonical_plain_keeps_its_contract(value: Any) -> None:
    check(value)


def test_orjson_order_holds_only_without_both_kinds_of_character() -> None:
    assert orjson_order_holds(b'{"a":1}')
    assert orjson_order_holds('{"\U0001F600":1,"\u00e9":2}'.encode())
    assert orjson_order_holds('{"\uff01":1,"\ue000":2}'.encode())
    assert not orjson_order_holds('{"\U0001F600":1,"\uff01":2}'.encode())
