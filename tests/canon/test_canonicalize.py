"""Canonical bytes: the bundle spec §1.2 table, every refusal, and agreement with rfc8785."""

from __future__ import annotations

import json
import math

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import canonicalize, es6_number, loads
from bitexact.errors import CanonicalizationError

SPEC_TABLE = [
    ({"b": [True, False, None], "a": 1.0, "c": {"y": {}, "x": []}}, b'{"a":1,"b":[true,false,null],"c":{"x":[],"y":{}}}'),
    ([1e20, 1e21, 1e-7, 0.000001, 123e-20, 1 / 3],
     b"[100000000000000000000,1e+21,1e-7,0.000001,1.23e-18,0.3333333333333333]"),
    ({"a": 1, "€": 2, "\U00010000": 3, "！": 4, "": 5},
     '{"":5,"a":1,"€":2,"\U00010000":3,"！":4}'.encode()),
    ({"s": "x\udc00y"}, b'{"s":"x\\udc00y"}'),
    ("\u0001", b'"\\u0001"'),
    ("\u007f", '"\u007f"'.encode()),
    ("\u2028/", '"\u2028/"'.encode()),
    ("\b\t\n\f\r\"\\", b'"\\b\\t\\n\\f\\r\\"\\\\"'),
    ([2**53, 10**18, -(2**53)], b"[9007199254740992,1000000000000000000,-9007199254740992]"),
]


@pytest.mark.parametrize(("value", "expected"), SPEC_TABLE)
def test_spec_table_rows(value: object, expected: bytes) -> None:
    assert canonicalize(value) == expected


def test_surrogate_pair_is_folded_before_sorting_and_output() -> None:
    # "\ud800\udc00" is U+10000 spelled as a pair; it must sort and print as U+10000.
    assert canonicalize({"\ud800\udc00": 1, "\uff01": 2}) == '{"\U00010000":1,"！":2}'.encode()
    assert canonicalize("a\ud83d\ude00") == '"a\U0001f600"'.encode()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([-0.0], "negative zero cannot be canonicalized: it would share a commitment with positive zero (RFC 8785 errata 7920)"),
        ([math.nan], "NaN and Infinity cannot be canonicalized"),
        ([math.inf], "NaN and Infinity cannot be canonicalized"),
        ({1: "x"}, "object keys must be strings; got int"),
        ({"a": {1, 2}}, "set cannot be canonicalized as JSON"),
        (b"bytes", "bytes cannot be canonicalized as JSON"),
        ({"\ud800\udc00": 1, "\U00010000": 2}, "object keys collide once surrogate pairs are folded"),
    ],
)
def test_refusals_carry_the_spec_message(value: object, message: str) -> None:
    with pytest.raises(CanonicalizationError) as info:
        canonicalize(value)
    assert str(info.value) == message


@pytest.mark.parametrize("number", [2**53 + 1, 10**21, -(2**53) - 1, 2**64])
def test_integers_outside_the_double_range_are_refused(number: int) -> None:
    with pytest.raises(CanonicalizationError) as info:
        canonicalize([number])
    assert str(info.value) == (
        f"integer {number} is outside the safe integer range: JSON numbers are doubles, and a parser "
        "elsewhere reads these digits back as a different value. Record it as a string instead "
        "(RFC 8785 Appendix D)."
    )


def test_nesting_past_128_levels_is_refused_and_128_is_accepted() -> None:
    deep: object = []
    for _ in range(127):
        deep = [deep]
    assert canonicalize(deep) == b"[" * 128 + b"]" * 128
    with pytest.raises(CanonicalizationError, match="nesting deeper than 128 levels is refused"):
        canonicalize([deep])


def test_a_cycle_is_refused_not_a_crash() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(CanonicalizationError, match="nesting deeper"):
        canonicalize(loop)


@pytest.mark.parametrize(
    ("number", "text"),
    [(1.0, "1"), (-2.5, "-2.5"), (1e21, "1e+21"), (1e-7, "1e-7"), (1.5e-6, "0.0000015"), (5e-324, "5e-324"),
     (1.7976931348623157e308, "1.7976931348623157e+308"), (123456789012345680000.0, "123456789012345680000"),
     (0.1, "0.1"), (100.0, "100")],
)
def test_es6_number_formatting(number: float, text: str) -> None:
    assert es6_number(number) == text


def test_subclasses_take_the_reference_path_with_identical_bytes() -> None:
    class Name(str):
        pass

    class Counter(int):
        pass

    assert canonicalize({Name("b"): Counter(2), "a": (1, 2)}) == b'{"a":[1,2],"b":2}'


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not (f == 0 and math.copysign(1, f) < 0)),
    st.text(),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(st.lists(children, max_size=5), st.dictionaries(st.text(), children, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_agrees_with_rfc8785_on_every_value_both_accept(value: object) -> None:
    try:
        theirs = rfc8785.dumps(value)
    except Exception:  # noqa: BLE001 - rfc8785 refuses lone surrogates and more; those are ours alone
        return
    assert canonicalize(value) == theirs


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_stable_under_loads_canonicalize_round_trips(value: object) -> None:
    first = canonicalize(value)
    again = canonicalize(loads(first))
    assert again == first
    assert canonicalize(json.loads(first)) == first


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_every_double_reads_back_to_itself(number: float) -> None:
    if number == 0:
        number = 0.0
    assert float(canonicalize(number)) == number
