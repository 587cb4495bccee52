"""Card numbers and IBANs in one pass over the text, when both detectors are on.

Both detectors start at a digit: a card number at a run of digit groups, an
IBAN at its two check digits. Finding every digit is most of the cost of
either, so when both run, one regex finds both kinds of site and hands each
to its detector's own checks: a match of 12 or more run characters is a
card-number run (and an IBAN site when two letters stand right before it),
a match of two digits after two letters is an IBAN site. The findings are
exactly those of the two detectors run one after the other.

On an ASCII text the sites are found in a copy of it with every digit written ``0`` and every letter that is no run
character ``a`` (one ``bytes.translate``): a pattern opening with the literal ``0`` is searched for in the regex
engine's literal loop, where ``\\d`` is tested character by character (about 5 ns each, most of this pass's cost on
prose). Each candidate there is a superset of a site; the site itself is the original pattern matched at it
(:func:`_ascii_sites`), so the sites are exactly ``_SITES.finditer``'s (tests/capture/test_text_speed26.py).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from dataclasses import dataclass, field

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import RUN_CHARS, Finding, Sites, after_escape, first_digit
from bitexact.capture.detectors.iban import NOT_GLUED, IbanDetector
from bitexact.capture.detectors.pan import MIN_DIGITS, PanDetector

_SITES = Sites(rf"\d(?:[{RUN_CHARS}]{{{MIN_DIGITS - 1},}}|(?<={NOT_GLUED}[A-Za-z]{{2}}\d)\d)")
_SITE_AT = re.compile(rf"\d(?:[{RUN_CHARS}]{{{MIN_DIGITS - 1},}}|(?<={NOT_GLUED}[A-Za-z]{{2}}\d)\d)", re.ASCII)
""":data:`_SITES` as an ASCII text reads it, matched at each candidate :data:`_CANDIDATES` finds."""
# The ASCII letters that are run characters (the "d" of %2d) stay as they are; every other letter reads "a", every
# digit "0". Punctuation stays: the run characters' class below is RUN_CHARS as ASCII text holds it.
_RUN_LETTERS = "".join(c for c in string.ascii_letters if re.fullmatch(f"[{RUN_CHARS}]", c, re.ASCII))
_OTHER_LETTERS = "".join(c for c in string.ascii_letters if c not in _RUN_LETTERS)
_WRITTEN_OVER = bytes.maketrans(
    (string.digits + _OTHER_LETTERS).encode("ascii"), b"0" * 10 + b"a" * len(_OTHER_LETTERS))
_CANDIDATES = re.compile(
    (rf"0(?:[{RUN_CHARS.replace(chr(92) + 'd', '0').replace(chr(92) + 'u00a0', '')}]{{{MIN_DIGITS - 1},}}"
     rf"|(?<=(?:(?<![a0{_RUN_LETTERS}])|(?<=%[a0{_RUN_LETTERS}]{{2}}))[a{_RUN_LETTERS}]{{2}}0)0)").encode("ascii"))
"""Where a site may start, in an ASCII text as :data:`_WRITTEN_OVER` writes it: a run of :data:`_SITES`'s run characters
from a digit, or two digits after two letters with no letter or digit before them or a ``%`` and two letters or
digits (any: a superset of :data:`NOT_GLUED`'s URL escapes)."""
_MAX_MISSES = 256
"""Candidates that are no site before :func:`_ascii_sites` hands the rest of the text to :data:`_SITES`'s own search:
a text made of near misses (``%zzab12`` over and over) costs a step of Python each, the regex's C loop none."""
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _iban_site(text: str, start: int) -> bool:
    """Whether two letters, with no letter or digit before them, stand right before ``start``."""
    if start < 2 or text[start - 1] not in _ASCII_LETTERS or text[start - 2] not in _ASCII_LETTERS:
        return False
    if start >= 3:
        before = text[start - 3]
        # The characters of a URL escape of punctuation (%20, %22) before the country code are what it encodes.
        if (before in _ASCII_LETTERS or before.isdecimal()) and not after_escape(text, start - 2):
            return False
    return start + 1 < len(text) and text[start + 1].isdecimal()


@dataclass
class PanIbanDetector:
    """The ``pan`` and ``iban`` detectors sharing one pass; findings keep their own names."""

    pan: PanDetector
    iban: IbanDetector
    name: str = field(default="pan+iban", init=False)
    names: tuple[str, ...] = field(default=("pan", "iban"), init=False)
    context_free: bool = field(default=True, init=False)

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every card number and IBAN in ``text``, in text order."""
        cards: list[Finding] = []
        ibans: list[Finding] = []
        resume = 0
        for start, end in _ascii_sites(text) if text.isascii() else map(_span, _SITES.finditer(text)):
            deadline.check()
            if _iban_site(text, start) and start - 2 >= resume:
                hit = self.iban.at(text, start - 2, start + 2)
                if hit is not None:
                    ibans.append(hit)
                    resume = hit.end
            if end - start > 2:
                self.pan.scan_run(text, text[start:end], start, deadline, cards)
        return sorted(cards + ibans)


def _span(match: re.Match[str]) -> tuple[int, int]:
    return match.span()


def _ascii_sites(text: str) -> Iterator[tuple[int, int]]:
    """The spans of :data:`_SITES`'s matches in the ASCII ``text``: those ``_SITES.finditer`` yields, in order.

    Every site's start is a candidate (:data:`_CANDIDATES` matches the written-over copy there). A run of run
    characters is a site as the candidate is (the same class over the same characters, as long: the site's first
    alternative, tried first); two digits after two letters are asked of :data:`_SITE_AT` (the letters' glue), and
    a candidate that is no site is passed by one character, as ``finditer`` passes a position where its search
    fails. After a site the search goes on at its end.
    """
    position = first_digit(text)  # ten memchr: a text of no digit (most of a recorded call's) costs no copy
    if position < 0:
        return
    shapes = text.encode("ascii").translate(_WRITTEN_OVER)
    misses = 0
    while (candidate := _CANDIDATES.search(shapes, position)) is not None:
        start, end = candidate.span()
        if end - start == 2:  # two digits after two letters (a run is at least MIN_DIGITS long)
            site = _SITE_AT.match(text, start)
            if site is None:
                position = start + 1
                misses += 1
                if misses > _MAX_MISSES:  # finditer from here yields what this loop would
                    yield from map(_span, _SITE_AT.finditer(text, position))
                    return
                continue
            end = site.end()
        yield start, end
        position = end
