"""Card numbers and IBANs in one pass over the text, when both detectors are on.

Both detectors start at a digit: a card number at a run of digit groups, an
IBAN at its two check digits. Finding every digit is most of the cost of
either, so when both run, one regex finds both kinds of site and hands each
to its detector's own checks: a match of 12 or more run characters is a
card-number run (and an IBAN site when two letters stand right before it),
a match of two digits after two letters is an IBAN site. The findings are
exactly those of the two detectors run one after the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import RUN_CHARS, Finding, Sites, after_escape
from bitexact.capture.detectors.iban import NOT_GLUED, IbanDetector
from bitexact.capture.detectors.pan import MIN_DIGITS, PanDetector

_SITES = Sites(rf"\d(?:[{RUN_CHARS}]{{{MIN_DIGITS - 1},}}|(?<={NOT_GLUED}[A-Za-z]{{2}}\d)\d)")
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
        for site in _SITES.finditer(text):
            deadline.check()
            start, end = site.span()
            if _iban_site(text, start) and start - 2 >= resume:
                hit = self.iban.at(text, start - 2, start + 2)
                if hit is not None:
                    ibans.append(hit)
                    resume = hit.end
            if end - start > 2:
                self.pan.scan_run(text, site.group(), start, deadline, cards)
        return sorted(cards + ibans)
