"""What every detector provides, and the text helpers they share.

A detector reads one text and returns :class:`Finding` spans, each with the
token that replaces it. It calls ``deadline.check()`` at every match, run of
digits or group it considers, so a scan stops at the deadline instead of
finishing the text (capture-controls.md, budget_ms).

``prefilter=True`` asks for a superset: the scanner runs every detector once
over many values joined by NUL, and rescans only the values a finding
touches. A detector whose answer depends on context outside the span (the
US SSN detector's ``require_context``) must report every candidate there.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Final, NamedTuple, Protocol

from bitexact.capture.budget import Deadline
from bitexact.regex_syntax import syntax_chars

# A space or hyphen, as written or as a URL encodes it (%20, %2D, a query's +),
# reads as the separator it encodes (capture-controls.md).
SEPARATOR_UNIT = r"(?:[ \-+\u00a0]|%20|%2[dD])"
# The characters a run of separated digits is made of, for a flat first pass
# that the regex engine runs as one tight loop; the groups and separators are
# checked afterwards.
RUN_CHARS = r"\d \-+\u00a0%dD"
# A URL escape of a byte that is no ASCII letter or digit (%22 a quote, %3A, %2F, a UTF-8 byte): it
# stands for punctuation, so its hex digits and letters are never part of a value written after it
# ("%224111111111111111%22", URL-encoded JSON, holds a card number). An escaped letter or digit (%41,
# %34) is read as written. ESCAPE_TAIL is the two characters after the "%".
ESCAPE_TAIL = r"(?:[0-289A-Fa-f][0-9A-Fa-f]|3[A-Fa-f]|[46]0|[57][B-Fb-f])"
URL_ESCAPE = rf"%{ESCAPE_TAIL}"
_URL_ESCAPE = re.compile(URL_ESCAPE)


def after_escape(text: str, start: int) -> bool:
    """Whether a URL escape of punctuation (:data:`URL_ESCAPE`) ends right before ``start``."""
    return start >= 3 and text[start - 3] == "%" and _URL_ESCAPE.match(text, start - 3) is not None


_UNICODE_ONLY = re.compile(r"\\[sSwWbB]")


_DIGITS = "0123456789"


_DIGIT = re.compile("[0-9]")
_NEAR: Final[int] = 64


def first_digit(text: str) -> int:
    """The index of the first ASCII digit in ``text``, or -1.

    The regex engine tests a character set (``\\d``, ``[0-9]``) character by character, about 5 ns
    each, 10-16 µs over a 2 KiB text; ten ``str.find`` of one character (a ``memchr`` each) take about
    1.5 µs whatever the text. So the first 64 characters are searched by the regex, and past them the
    ten ``memchr`` find the first digit.
    """
    near = _DIGIT.search(text, 0, _NEAR)
    if near is not None:
        return near.start()
    if len(text) <= _NEAR:
        return -1
    found = [at for at in map(text.find, _DIGITS) if at >= 0]
    return min(found) if found else -1


class Sites:
    """A site-finding regex compiled twice: for any text, and with ``re.ASCII`` for ASCII-only texts.

    A detector's scan for where to look (a digit, a run of digits) reads every
    character of the text. Matched against Unicode's ``\\d``, each character
    is looked up in the Unicode tables; with ``re.ASCII`` it is a bitmap test,
    1.4-1.8x faster over agent text. On a text of ASCII characters alone
    (``str.isascii`` is a flag, not a scan) both find exactly the same sites:
    the only ASCII decimal digits are 0-9. That holds for ``\\d`` and
    character sets, not for ``\\s`` (Unicode counts \\x1c-\\x1f as space) nor
    ``\\w``/``\\b``, so a pattern with those is refused.

    Every site starts with a digit (the pattern must begin with ``\\d`` and
    hold no top-level ``|``), so on an ASCII text the scan starts at the
    text's first digit (:func:`first_digit`), and a text with none has no
    site: the same matches, without the regex engine's test of every
    character before the first digit (a lookbehind still sees the characters
    before where the scan starts).
    """

    __slots__ = ("_any", "_ascii")

    def __init__(self, pattern: str) -> None:
        if _UNICODE_ONLY.search(pattern):
            raise ValueError(f"a Sites pattern may not use \\s, \\w or \\b, whose ASCII meaning differs: {pattern}")
        if not pattern.startswith("\\d") or _top_level_bar(pattern):
            raise ValueError(f"a Sites pattern starts with \\d and holds no top-level |: {pattern}")
        self._any = re.compile(pattern)
        self._ascii = re.compile(pattern, re.ASCII)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Every site in ``text``, as ``re.finditer`` of the Unicode pattern finds them."""
        if not text.isascii():
            return self._any.finditer(text)
        start = first_digit(text)
        if start < 0:
            return iter(())
        return self._ascii.finditer(text, start)


def _top_level_bar(pattern: str) -> bool:
    """Whether ``pattern`` holds a ``|`` outside every group (or character set): then a match need not
    start as the pattern's first item does."""
    depth = 0
    for _, char in syntax_chars(pattern):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


FLAG_ONLY = ""
"""The token of a prefilter finding that only asks for a rescan (never applied)."""


class Finding(NamedTuple):
    """A span ``text[start:end]`` that ``detector`` replaces with ``token``."""

    start: int
    end: int
    token: str
    detector: str


class Detector(Protocol):
    """A named detector over text.

    ``context_free`` is true when a finding in a NUL-joined text is exactly
    the finding in the value alone (no context, no look past a NUL).
    """

    name: str
    context_free: bool

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every span of ``text`` this detector replaces, in text order.

        ``context`` is the object key the text is stored under, when it has
        one. ``prefilter`` asks for a superset (see the module docstring).
        """
        ...


class _DecimalTable(dict[int, str]):
    """str.translate table mapping any script's decimal digit to its ASCII digit."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        value = unicodedata.decimal(char, None)
        mapped = char if value is None else str(value)
        self[code] = mapped
        return mapped


_DECIMALS = _DecimalTable()


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit of any script written as its ASCII digit."""
    if text.isascii():
        return text
    return text.translate(_DECIMALS)


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only: a look-alike letter (a Kelvin sign) stays itself."""
    return text.translate(_ASCII_LOWER)
