"""URL-encoded pairs and JSON members inside another value (``%3D``, ``%22``, encoded once or twice).

docs/capture.md: "URL-encoded pairs and JSON members".
"""

from __future__ import annotations

import re
from typing import Final


# A pair written URL-encoded inside another value (next=%2Flogin%3Fpassword%3Dhunter2%26a%3Db): "=" is
# %3D; the value ends where an encoded "&" or ";" does, or where a plain value would.
# Rules version 9: the same search finds a pair encoded twice (password%253Dx, %25 the encoded "%") and a JSON member
# URL-encoded ("password":"x" as %22password%22%3A%22x%22, a JSON body in a query string or a form): one pass from
# each "%", as before.
# Rules version 10: a JSON member encoded twice (%2522password%2522%253A%2522x%2522: a JSON body in a query string
# inside another URL's query), its quotes %2522 and its colon %253A.
_ENCODED_EQ = re.compile(r"%(?:25)?3[Dd]|%22(?:%20|\+)*+%3[Aa]|%2522(?:%2520|%20|\+)*+%253[Aa]")
_ENCODED_VALUE = re.compile(r"""(?:(?!%2[6]|%3[Bb])[^\s&;,"'<>#)\]}\x00])+""")
_TWICE_ENCODED_VALUE = re.compile(r"""(?:(?!%2[6]|%3[Bb]|%252[6]|%253[Bb])[^\s&;,"'<>#)\]}\x00])+""")
_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%20|\+)*+(?:%22((?:[^%\s&\x00]|%5[Cc]%[0-9A-Fa-f]{2}|%(?!22)[0-9A-Fa-f]{2})*+)%22"""
    r"""|((?:[^%\s&;"'<>\x00]|%(?!2[Cc]|7[Dd]|5[Dd]|22)[0-9A-Fa-f]{2})++))"""
)
"""An encoded JSON member's value: a string's content between its encoded quotes (an escaped quote, %5C%22, inside
it), or a bare value up to the encoded comma, brace, bracket or quote after it (never past a quote: no value is
read again from each member of a run of them)."""
_ESCAPED_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%20|\+)*+(?:%5[Cc]%22((?:[^%\s&\x00]|%5[Cc]%5[Cc]%5[Cc]%22|%5[Cc]%5[Cc]|%5[Cc](?!%22)"""
    r"""|%(?!5[Cc]|22)[0-9A-Fa-f]{2})*+)%5[Cc]%22"""
    r"""|((?:[^%\s&;"'<>\x00]|%(?!2[Cc]|7[Dd]|5[Dd]|22|5[Cc])[0-9A-Fa-f]{2})++))"""
)
"""Rules version 11: the value of a URL-encoded JSON member held in a JSON string (``%5C%22password%5C%22%3A%5C%22
x%5C%22``, ``{\"password\":\"x\"}`` encoded): a string's content between its escaped quotes, an escaped quote
inside it written ``%5C%5C%5C%22``, never past another quote; or a bare value, as :data:`_ENCODED_MEMBER_VALUE`
reads one."""
_TWICE_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%2520|%2[Bb]|%20|\+)*+"""
    r"""(?:%2522((?:[^%\s&\x00]|%255[Cc]%25[0-9A-Fa-f]{2}|%25(?!22)[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})*+)%2522"""
    r"""|((?:[^%\s&;"'<>\x00]|%25(?!2[Cc]|7[Dd]|5[Dd]|22)[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})++))"""
)
"""A twice-encoded JSON member's value (rules version 10), as :data:`_ENCODED_MEMBER_VALUE` reads one encoded once:
each ``%`` of the once-encoded text written ``%25``."""
_TWICE_ESCAPED_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%2520|%2[Bb]|%20|\+)*+(?:%255[Cc]%2522((?:[^%\s&\x00]|%255[Cc]%255[Cc]%255[Cc]%2522|%255[Cc]%255[Cc]"""
    r"""|%255[Cc](?!%2522)|%25(?!5[Cc]|22)[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})*+)%255[Cc]%2522"""
    r"""|((?:[^%\s&;"'<>\x00]|%25(?!2[Cc]|7[Dd]|5[Dd]|22|5[Cc])[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})++))"""
)
"""Rules version 12: the value of a JSON member held in a JSON string and URL-encoded twice (``%255C%2522password
%255C%2522%253A%255C%2522x%255C%2522``), as :data:`_ESCAPED_ENCODED_MEMBER_VALUE` reads one encoded once: each ``%``
of the once-encoded text written ``%25``."""
_ENCODED_BACKSLASH: Final[frozenset[str]] = frozenset(("%5C", "%5c"))
_TWICE_ENCODED_BACKSLASH: Final[frozenset[str]] = frozenset(("%255C", "%255c"))
_ENCODED_MEMBER_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ENCODED_SEPARATORS = re.compile(r"[?&;/=\s]")
