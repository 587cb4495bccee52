"""Sites: the ASCII compilation finds exactly what the Unicode pattern finds, on every ASCII text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.capture.detectors import digits, iban, pan
from bitexact.capture.detectors.base import Sites

# Digits, separators, the letters IBANs and %-escapes are made of, and characters either side
# of the ASCII line: controls Unicode calls space, a non-breaking space, Arabic-Indic digits.
ALPHABET = "0123456789 -+%dDGBDEabz\n\t\x1c\x1f" + "\u00a0\u0663\u0664\uff11"
SITES = {"digits (pan+iban)": digits._SITES, "pan": pan._RUN, "iban": iban._START}


def spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


@pytest.mark.parametrize("name", SITES)
@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=80))
def test_the_sites_found_are_the_unicode_patterns_own(name: str, text: str) -> None:
    sites = SITES[name]
    expected = spans(sites._any, text)
    assert [m.span() for m in sites.finditer(text)] == expected
    if text.isascii():
        assert spans(sites._ascii, text) == expected  # the path taken for it, checked directly


def test_a_card_number_and_an_iban_are_found_on_both_paths() -> None:
    ascii_text = "card 4111 1111 1111 1111 and GB82 WEST 1234 5698 7654 32"
    other = ascii_text + " \u00e9"  # one non-ASCII character: the Unicode path
    for text in (ascii_text, other):
        assert spans(digits._SITES._any, text) == [m.span() for m in digits._SITES.finditer(text)]
        assert [m.group() for m in digits._SITES.finditer(text)][:1] == ["4111 1111 1111 1111 "]


@pytest.mark.parametrize("pattern", [r"\s\d", r"\w+", r"\bx", r"[\S]"])
def test_a_pattern_whose_ascii_meaning_differs_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="may not use"):
        Sites(pattern)
