"""Reading a regular expression's own text: which of its characters are syntax.

The capture policy asks whether a digit detector's pattern has a top-level ``|``, and the Draft-07
schema check rewrites a pattern's ``$``; both need the characters that stand outside every character
set and are not escaped. One walk for both (here, below ``capture`` and ``sessions``).
"""

from __future__ import annotations

from collections.abc import Iterator


def syntax_chars(pattern: str) -> Iterator[tuple[int, str]]:
    """Each character of ``pattern`` that is syntax, with its index: not escaped, not an escape's backslash,
    and outside every character set (a set's opening ``[`` is syntax; what it holds and its ``]`` are not)."""
    escaped = in_set = False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_set:
            in_set = char != "]"
        else:
            in_set = char == "["
            yield index, char
