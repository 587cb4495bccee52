"""IBANs: a country's length and the ISO 13616 mod-97 check.

A candidate starts at two letters (either case) and two check digits that
no letter or digit precedes (a URL escape of punctuation before them, a
``%20`` or ``%22``, is the character it encodes), then continues through
letters and digits, optionally in groups joined by separators (a space, hyphen, ``+``, no-break
space, or ``%20``/``%2D``). The country's registered length is taken from the
start; it must end where a group ends (not in the middle of letters and
digits), its BBAN must have the country's structure (digits where the
registry's format has digits, :func:`~bitexact.capture.detectors.iban_registry.bban_ok`),
and the mod-97 remainder must be 1. Digits may be in any script. Nothing
inside a UUID (8-4-4-4-12 hex digits) is an IBAN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import SEPARATOR_UNIT, URL_ESCAPE, Finding, Sites, ascii_digits
from bitexact.capture.detectors.iban_registry import LENGTHS, bban_ok
from bitexact.capture.detectors.pan import in_uuid

NAME = "iban"
TOKEN = "[IBAN]"

# Anchored on the check digits (the regex engine scans for a digit quickly),
# then looks back for the country code.
# No letter or digit before the country code, but those of a URL escape of punctuation (%20, %2D, %22,
# %3A...): the character it encodes.
NOT_GLUED = rf"(?:(?<![A-Za-z\d])|(?<={URL_ESCAPE}))"
_START = Sites(rf"\d\d(?<={NOT_GLUED}[A-Za-z]{{2}}\d\d)")
# Separators first, so the digits of %20 are read as a separator.
_PIECE = re.compile(r"(?:%2[0dD]|[ \-+\u00a0])+|[A-Za-z0-9]|\d|.", re.DOTALL)
_SEPARATOR = re.compile(rf"{SEPARATOR_UNIT}{{1,3}}")
_ALNUM = re.compile(r"[A-Za-z0-9\d]")


def iban_ok(compact: str) -> bool:
    """Whether an upper-case IBAN without separators has its country's length and mod-97 = 1."""
    length = LENGTHS.get(compact[:2])
    if length is None or len(compact) != length or not compact.isalnum() or not compact.isascii():
        return False
    check = compact[2:4]
    if not check.isdigit() or check in ("00", "01", "99"):
        return False
    if not bban_ok(compact[:2], compact[4:]):
        return False
    moved = compact[4:] + compact[:4]
    numeric = "".join(str(int(c, 36)) for c in moved)
    return int(numeric) % 97 == 1


@dataclass
class IbanDetector:
    """IBANs of every country in the registry."""

    name: str = field(default=NAME, init=False)
    context_free: bool = field(default=True, init=False)

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every IBAN in ``text``."""
        found: list[Finding] = []
        resume = 0
        for start in _START.finditer(text):
            deadline.check()
            begin = start.start() - 2
            if begin < resume:
                continue
            hit = self.at(text, begin, start.end())
            if hit is not None:
                found.append(hit)
                resume = hit.end
        return found

    def at(self, text: str, begin: int, after_check: int) -> Finding | None:
        """The IBAN whose country code starts at ``begin`` (check digits end at ``after_check``), if any."""
        country = text[begin : begin + 2].upper()
        length = LENGTHS.get(country)
        if length is None:
            return None
        need = length - 4
        chars: list[str] = []
        end = after_check
        for piece in _PIECE.finditer(text, after_check):
            value = piece.group()
            if _ALNUM.fullmatch(value):
                chars.append(value)
                end = piece.end()
                if len(chars) == need:
                    break
            elif not _SEPARATOR.fullmatch(value):
                break
        if len(chars) < need:
            return None
        # It must end where a group ends: no letter or digit straight after.
        if end < len(text) and _ALNUM.match(text, end):
            return None
        compact = country + ascii_digits(text[begin + 2 : after_check] + "".join(chars)).upper()
        if not iban_ok(compact):
            return None
        if in_uuid(text, begin, end):
            return None  # part of a UUID (8-4-4-4-12 hex digits): an identifier, no account
        return Finding(begin, end, TOKEN, NAME)
