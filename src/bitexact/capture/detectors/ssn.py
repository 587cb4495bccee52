"""US Social Security numbers, with ``require_context`` (the default) asking for a cue nearby.

A candidate is ``AAA-GG-SSSS`` or ``AAA GG SSSS`` (or the URL-encoded
separators), or nine digits with no separator, not joined to other digits.
It must be a number the SSA can issue: area 001-899 except 666, group
01-99, serial 0001-9999. With ``require_context`` a cue ("SSN", "social
security", "SS#"...) must stand within 48 characters before it, or the value
must be stored under a key that is such a cue (``ssn``, ``social_security``).
Without it, the separated forms are found anywhere; nine bare digits always
need a cue, since most nine-digit numbers are not SSNs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import ESCAPE_TAIL, URL_ESCAPE, Finding, after_escape, ascii_digits

NAME = "us_ssn"
TOKEN = "[SSN]"
_CONTEXT_WINDOW = 48

_SEP = r"(?:-|%2[dD])"
_SPACE = r"(?:[ \u00a0+]|%20)"  # a query's "+" encodes a space, as %20 does
# A candidate never starts at the digits of a URL escape of punctuation (%20, %2D, %22), which encode
# a character: it would take the number after one ("ssn%20078051120") with it, and be read as a longer
# number. Its second character, a digit, ends every escape whose first is not 3, 4, 5, 6 or 7, and a %40 or %60.
_NOT_ESCAPE = rf"(?!(?<=%){ESCAPE_TAIL})(?!(?<=%[0-289A-Fa-f])[0-9])(?!(?<=%[46])0)"
_CANDIDATE = re.compile(
    rf"{_NOT_ESCAPE}(\d\d\d)(?:{_SEP}(\d\d){_SEP}|{_SPACE}(\d\d){_SPACE}|(\d\d))(\d\d\d\d)"
)
# "ssn" after anything but a letter or digit (customer_ssn, ssn-last), or in capitals after a lower-case
# letter (patientSSN): \b alone would miss both, "_" being a word character.
# A URL escape of punctuation before a cue (%22ssn%22, URL-encoded JSON) is the character it encodes.
_CUE_START = rf"(?:\b|(?<={URL_ESCAPE}))"
_CUE = re.compile(
    rf"(?:(?:(?<![a-z0-9])|(?<={URL_ESCAPE}))ssn|(?-i:(?<=[a-z])SSN)|{_CUE_START}ss\s?#|{_CUE_START}ss\s?no\b"
    rf"|social[\s_-]?security|{_CUE_START}soc\.?\s?sec)",
    re.IGNORECASE | re.ASCII,
)
_ESCAPES = frozenset({"%20", "%2D", "%2d"})
_AFTER = re.compile(r"\d|[ \-\u00a0]\d")


def _joined_before(text: str, start: int) -> bool:
    """Whether the candidate continues a run of digits (a digit, or a digit and a separator, before it)."""
    if start == 0:
        return False
    if start >= 3 and text[start - 3 : start] in _ESCAPES:
        # A %20 or %2D is the space or hyphen it encodes, not digits: joined only with a digit before it.
        return start >= 4 and text[start - 4].isdecimal()
    if after_escape(text, start):
        return False  # any other escape (%22) is punctuation, as the character it encodes would be
    before = text[start - 1]
    return before.isdecimal() or (start >= 2 and before in " -\u00a0" and text[start - 2].isdecimal())


def _digit_before(text: str, start: int) -> bool:
    """Whether a digit stands right before a hyphenated candidate; the ``0`` of a URL-encoded space
    (``%20``, which spaces one in a query as ``+`` does), or the digit ending any other escape of
    punctuation (``%22``), is no digit of it."""
    if start == 0 or not text[start - 1].isdecimal():
        return False
    return not after_escape(text, start)


def issuable(area: str, group: str, serial: str) -> bool:
    """Whether ASCII digits form an SSN the SSA can issue."""
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


@dataclass
class SsnDetector:
    """US SSNs; ``require_context`` asks for a cue before the number or in its key."""

    require_context: bool = True
    name: str = field(default=NAME, init=False)
    context_free: bool = field(default=False, init=False)

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every SSN in ``text``."""
        found: list[Finding] = []
        keyed = context is not None and _CUE.search(context) is not None
        for match in _CANDIDATE.finditer(text):
            deadline.check()
            start, end = match.span()
            # Digits right beside it make it part of a longer number. A hyphenated SSN is its own token,
            # so one after another in a list ("078-05-1120 219-09-9999") is two; a spaced or bare one
            # beside another digit group one space away may be a longer number's piece.
            hyphenated = match.group(2) is not None
            if (_digit_before(text, start) if hyphenated else _joined_before(text, start)):
                continue
            if (end < len(text) and text[end].isdecimal()) if hyphenated else _AFTER.match(text, end):
                continue
            group = match.group(2) or match.group(3) or match.group(4)
            area, group, serial = (ascii_digits(x) for x in (match.group(1), group, match.group(5)))
            if not issuable(area, group, serial):
                continue
            bare = match.group(4) is not None
            if not prefilter and (self.require_context or bare) and not keyed:
                if _CUE.search(text, max(0, start - _CONTEXT_WINDOW), start) is None:
                    continue
            found.append(Finding(start, end, TOKEN, NAME))
        return found
