"""perf22's shortcuts in canonicalization give the bytes the reference encoder writes.

* ``_prepare`` answers an object of text keys and values of ``str`` / ``bool`` / ``None`` (and a list or tuple of
  them) with one C loop over the types instead of its Python loop: the value comes back as it is (a tuple as a
  list), and ``canonicalize`` writes what the reference encoder writes.
* ``canonical_text`` writes a plain string without ``canonicalize``'s call: the same bytes, a lone surrogate
  included.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import canonical_text, canonicalize
from bitexact.canon.encode import _prepare, _write
from bitexact.errors import CanonicalizationError


class Tag(str):
    """A caller's own string type: the reference path, whatever the shortcut."""


class Colour(str, Enum):
    RED = "red"


def reference(value: Any) -> bytes:
    parts: list[str] = []
    _write(value, 1, parts)
    return "".join(parts).encode("utf-8")


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", "\U0001F600", "\uff01", "\u2028", "\x00\x1f\"\\", "é", "\U0001F600\uffff"])
PLAIN = TEXT | st.booleans() | st.none()
OTHER = st.one_of(st.integers(-(2**53) + 1, 2**53 - 1), st.integers(2**53, 2**60),
                  st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0 or str(f) == "0.0"),
                  TEXT.map(Tag), st.just(Colour.RED))
VALUES = st.recursive(PLAIN | OTHER, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                      | st.dictionaries(TEXT | TEXT.map(Tag), inner, max_size=4), max_leaves=20)


@settings(max_examples=1500, deadline=None)
@given(value=VALUES)
def test_canonicalize_writes_the_reference_bytes(value: Any) -> None:
    try:
        expected = reference(value)
    except CanonicalizationError:
        # Refused both ways (which of two bad values is named first may differ: the reference sorts first).
        with pytest.raises(CanonicalizationError):
            canonicalize(value)
        return
    assert canonicalize(value) == expected


@settings(max_examples=500, deadline=None)
@given(value=st.dictionaries(TEXT, PLAIN, max_size=8))
def test_an_object_of_plain_values_is_kept_as_it_is(value: dict[str, Any]) -> None:
    assert _prepare(value, 1) is value
    assert canonicalize(value) == reference(value)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(PLAIN, max_size=8))
def test_a_list_of_plain_values_is_kept_and_a_tuple_made_a_list(items: list[Any]) -> None:
    assert _prepare(items, 1) is items
    as_tuple = _prepare(tuple(items), 1)
    assert type(as_tuple) is list and as_tuple == items
    assert canonicalize(tuple(items)) == reference(items)


@pytest.mark.parametrize("value", [
    {"a": 1.0}, {"a": 2**60}, {"a": Tag("x")}, {Tag("k"): "x"}, {1: "x"}, {"a": -0.0}, {"a": float("nan")},
    {"a": [1.0]}, ["x", 1e-7], ("x", 2.0), {"b": "x", "a": {"c": 3.0}}, {"\U0001F600": 1, "\uff01": 2},
    {"a": object()},
])
def test_what_the_shortcut_leaves_to_the_loop_is_written_as_before(value: Any) -> None:
    try:
        expected = reference(value)
    except (CanonicalizationError, TypeError):
        with pytest.raises(CanonicalizationError):
            canonicalize(value)
        return
    assert canonicalize(value) == expected


def test_a_deep_plain_object_is_still_refused_past_the_depth_limit() -> None:
    value: Any = {"leaf": "x"}
    for _ in range(127):
        value = {"d": value}
    canonicalize(value)  # 128 levels
    with pytest.raises(CanonicalizationError, match="nesting deeper than 128 levels"):
        canonicalize({"d": value})


@settings(max_examples=1500, deadline=None)
@given(text=st.text(max_size=16) | st.sampled_from(["\ud800", "a\udfffb", "\ud83d\ude00", "\U0001F600\uffff"]))
def test_canonical_text_is_canonicalize_of_the_string(text: str) -> None:
    try:
        expected = canonicalize(text)
    except CanonicalizationError:
        with pytest.raises(CanonicalizationError):
            canonical_text(text)
        return
    assert canonical_text(text) == expected == reference(text)
