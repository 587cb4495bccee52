"""``canonical_text`` (perf22: build_entry commits a plain string without ``canonicalize``'s call) writes the bytes
``canonicalize`` and the reference encoder write, a lone surrogate and every escape included.

(A shortcut perf22 tried in ``_prepare``, ``frozenset.issuperset(map(type, items))`` before its Python loop, cost
more instructions than it saved on Python 3.11, whose ``issuperset`` builds a set of its argument first: not kept.)
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import canonical_text, canonicalize
from bitexact.canon.encode import _write
from bitexact.errors import CanonicalizationError


def reference(text: str) -> bytes:
    parts: list[str] = []
    _write(text, 1, parts)
    return "".join(parts).encode("utf-8")


SPECIAL = ["", "\U0001F600", "\uff01", "\u2028\u2029", "\x00\x1f\x7f\"\\/", "é", "\U0001F600\uffff", "\ud800",
           "a\udfffb", "\ud83d\ude00", "\b\f\n\r\t", "k" * 1000]


@settings(max_examples=2000, deadline=None)
@given(text=st.text(max_size=16) | st.sampled_from(SPECIAL))
def test_canonical_text_is_canonicalize_of_the_string(text: str) -> None:
    try:
        expected = canonicalize(text)
    except CanonicalizationError:
        with pytest.raises(CanonicalizationError):
            canonical_text(text)
        return
    assert canonical_text(text) == expected == reference(text)


@pytest.mark.parametrize("text", SPECIAL)
def test_each_special_text(text: str) -> None:
    test_canonical_text_is_canonicalize_of_the_string.hypothesis.inner_test(text)  # type: ignore[attr-defined]
