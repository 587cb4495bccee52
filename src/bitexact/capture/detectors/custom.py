"""Custom detectors: a restricted pattern language that always matches in linear time.

A pattern is built only from (capture-controls.md, custom):

* literals: letters, digits, space and ``_ : / # @ -``;
* classes ``[...]`` of those literals, ranges (``a-z``), the escapes below,
  optionally negated (``[^...]``);
* the escapes ``\\b \\d \\w \\s \\D \\W \\S`` and the escaped literals
  ``\\. \\- \\_ \\: \\/ \\# \\@ \\+`` (a bare ``.`` is no literal);
* bounded quantifiers up to 64: ``?``, ``{n}``, ``{n,m}``; at most one of them
  varies in length (``?`` or ``{n,m}`` with n < m).

No groups, alternation, anchors, lazy or unbounded repetition, so the regex
engine backtracks at most 65 ways at any position. ``\\d{4}-?\\d{4}`` is
accepted; ``\\d{1,8}-\\d{1,8}`` is refused. Everything else is refused at load,
with the position and the reason.

A search still reads up to the pattern's widest match at every position, so
its cost grows with that width: about 4.5 ms per MiB of text for each
character of width, measured over a MiB of word characters, the worst case
for ``\\w`` (``\\w{64}`` repeated 84 times took 22 s a MiB). A pattern that
can match more than :data:`MAX_WIDTH` characters is refused at load, and the
search runs in windows with the deadline checked between them, so a text
with no match is stopped at the deadline like any other scan.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import Finding

MAX_REPEAT = 64
MAX_PATTERN = 512
# The widest match a pattern may have. 128 keeps the worst text (a MiB of the characters the pattern
# repeats) at about 0.6 s a MiB on a loaded development machine, inside the default 1000 ms budget, and
# is twice what the patterns seen in practice need (an employee id EMP-[0-9]{6} is 10, a SHA-256 in hex
# [0-9a-f]{64} is 64, user@[a-z]{1,64} is 69).
MAX_WIDTH = 128
# Characters searched between two deadline checks: ~37 ms at the widest pattern's worst rate.
WINDOW = 64 * 1024
_LITERAL_PUNCT = frozenset(" _:/#@-")
_CLASS_ESCAPES = frozenset("dwsDWS")
_ESCAPED_LITERALS = frozenset(".-_:/#@+")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
# ASCII digits only: the regex engine reads {٨} (another script's digit) as literal text, not a quantifier.
_QUANT = re.compile(r"\{([0-9]{1,3})(?:(,)([0-9]{0,3}))?\}")


class PatternRefused(ValueError):
    """A custom pattern outside the restricted language; the message says where and why."""


def _is_literal(char: str) -> bool:
    return char.isalnum() or char in _LITERAL_PUNCT


def _class_end(pattern: str, start: int) -> int:
    """Validate the class opening at ``start``; return the index after its ``]``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    items = 0
    previous_literal: str | None = None
    while i < len(pattern) and pattern[i] != "]":
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern):
                raise PatternRefused(f"position {i}: a class ends in a bare backslash")
            nxt = pattern[i + 1]
            if nxt not in _CLASS_ESCAPES and nxt not in _ESCAPED_LITERALS:
                raise PatternRefused(f"position {i}: \\{nxt} is not an allowed escape")
            previous_literal = nxt if nxt in _ESCAPED_LITERALS else None
            if (previous_literal is None and i + 3 < len(pattern) and pattern[i + 2] == "-"
                    and pattern[i + 3] != "]"):
                # Python reads [\d-z] as a range from a class, which it refuses: so is it here, at load.
                raise PatternRefused(f"position {i + 2}: a range cannot start at \\{nxt}; write - last in the class")
            i += 2
        elif char == "-" and previous_literal is not None and i + 1 < len(pattern) and pattern[i + 1] != "]":
            high = pattern[i + 1]
            if not high.isalnum():
                raise PatternRefused(f"position {i}: a range must end in a letter or digit")
            if not previous_literal.isalnum() or previous_literal > high:
                raise PatternRefused(f"position {i}: the range {previous_literal}-{high} is not a range")
            previous_literal = None
            i += 2
        elif _is_literal(char):
            previous_literal = char
            i += 1
        else:
            raise PatternRefused(
                f"position {i}: {char!r} is not allowed in a class "
                "(literals are letters, digits, space and _ : / # @ -)"
            )
        items += 1
    if i >= len(pattern):
        raise PatternRefused(f"position {start}: the class is not closed")
    if items == 0:
        raise PatternRefused(f"position {start}: the class is empty")
    return i + 1


def validate_pattern(pattern: str) -> str:
    """Return ``pattern`` if it is in the restricted language; raise :class:`PatternRefused`."""
    pattern_width(pattern)
    return pattern


def pattern_width(pattern: str) -> int:
    """The most characters a match of ``pattern`` can span; raise :class:`PatternRefused` if it is refused.

    Every atom is one character wide (``\\b`` none) and a quantifier multiplies its atom by its upper
    bound, so the width is the sum of the atoms' upper repeats. More than :data:`MAX_WIDTH` is refused.
    """
    if not isinstance(pattern, str) or not pattern:
        raise PatternRefused("the pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN:
        raise PatternRefused(f"the pattern is longer than {MAX_PATTERN} characters")
    variable = 0
    min_length = 0
    max_length = 0
    i = 0
    # The previous atom: None at the start or after a quantifier, "zero" after \b.
    previous: str | None = None
    while i < len(pattern):
        char = pattern[i]
        if char in "?{":
            at = i
            if previous is None:
                raise PatternRefused(f"position {i}: a quantifier must follow a character or class")
            if previous == "zero":
                raise PatternRefused(f"position {i}: \\b cannot be repeated")
            if char == "?":
                low, high, i = 0, 1, i + 1
            else:
                match = _QUANT.match(pattern, i)
                if match is None:
                    raise PatternRefused(f"position {i}: a quantifier is {{n}} or {{n,m}}")
                low = int(match.group(1))
                if match.group(2) and not match.group(3):
                    raise PatternRefused(f"position {i}: {{n,}} is unbounded repetition")
                high = int(match.group(3)) if match.group(2) else low
                if high > MAX_REPEAT:
                    raise PatternRefused(f"position {i}: a quantifier may repeat at most {MAX_REPEAT} times")
                if low > high:
                    raise PatternRefused(f"position {i}: {{{low},{high}}} is not a range")
                i = match.end()
            if i < len(pattern) and pattern[i] in "?+":
                raise PatternRefused(f"position {i}: lazy or possessive quantifiers are not allowed")
            if low != high:
                variable += 1
                if variable > 1:
                    raise PatternRefused(
                        f"position {at}: at most one quantifier may vary in length (? or {{n,m}} with n < m)"
                    )
            min_length += low - 1
            max_length += high - 1
            previous = None
            continue
        if char in "*+":
            raise PatternRefused(f"position {i}: {char} is unbounded repetition; use {{n,m}} with m <= {MAX_REPEAT}")
        if char == "[":
            i = _class_end(pattern, i)
            previous = "atom"
            min_length += 1
            max_length += 1
            continue
        if char == "\\":
            if i + 1 >= len(pattern):
                raise PatternRefused(f"position {i}: the pattern ends in a bare backslash")
            nxt = pattern[i + 1]
            if nxt == "b":
                previous = "zero"
            elif nxt in _CLASS_ESCAPES or nxt in _ESCAPED_LITERALS:
                previous = "atom"
                min_length += 1
                max_length += 1
            else:
                raise PatternRefused(f"position {i}: \\{nxt} is not an allowed escape")
            i += 2
            continue
        if char == ".":
            raise PatternRefused(f"position {i}: a bare . is not a literal; write \\. for a dot")
        if char in "()|":
            raise PatternRefused(f"position {i}: groups and alternation are not allowed")
        if char in "^$":
            raise PatternRefused(f"position {i}: anchors are not allowed")
        if not _is_literal(char):
            raise PatternRefused(
                f"position {i}: {char!r} is not a literal (literals are letters, digits, space and _ : / # @ -)"
            )
        previous = "atom"
        min_length += 1
        max_length += 1
        i += 1
    if min_length <= 0:
        raise PatternRefused("the pattern can match empty text")
    if max_length > MAX_WIDTH:
        raise PatternRefused(
            f"the pattern can match up to {max_length} characters, more than {MAX_WIDTH}: a search reads that "
            "many at every position of a text, so a wider pattern could stall a write; match a shorter, "
            "more specific part of the value"
        )
    try:
        re.compile(pattern)
    except re.error as exc:  # a case the checks above let through: refused at load all the same
        raise PatternRefused(f"position {exc.pos}: {exc.msg}") from None
    return max_length


def validate_name(name: object) -> str:
    """Return ``name`` if it can name a custom detector; raise :class:`PatternRefused`."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PatternRefused("a name is a lower-case letter then up to 31 lower-case letters, digits or _")
    return name


@dataclass
class CustomDetector:
    """A named, validated pattern; each match is replaced by ``[NAME]``.

    ``tokens`` matches the tokens the policy's detectors write (``[PAN ****1111]``,
    ``[IBAN]``, ``[ACCT]``...): a match that overlaps one is not a finding, so
    applying the policy twice declares nothing new (a PIN pattern ``\\d{4}``
    would otherwise find the last four a card token keeps).
    """

    name: str
    pattern: str
    tokens: re.Pattern[str] | None = field(default=None, compare=False)
    context_free: bool = field(default=True, init=False)
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _width: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validate_name(self.name)
        self._width = pattern_width(self.pattern)
        self._compiled = re.compile(self.pattern)

    @property
    def token(self) -> str:
        """The replacement token, ``[NAME]`` in upper case."""
        return f"[{self.name.upper()}]"

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every non-empty match of the pattern in ``text``, as ``finditer`` over the whole text finds them.

        The text is searched :data:`WINDOW` characters at a time, with the deadline checked before each
        window and at each match: one search of a long text with no match would otherwise run to its end
        past any deadline.
        """
        found: list[Finding] = []
        token = self.token
        spans = [m.span() for m in self.tokens.finditer(text)] if self.tokens is not None and "[" in text else []
        for start, end in self._matches(text, deadline):
            if end > start and not any(start < stop and begin < end for begin, stop in spans):
                found.append(Finding(start, end, token, self.name))
        return found

    def _matches(self, text: str, deadline: Deadline) -> Iterator[tuple[int, int]]:
        """The spans ``finditer(text)`` yields, searched window by window under ``deadline``.

        A match starting before a window's end reads at most ``width`` characters from its start, and
        ``\\b`` one more: searching up to ``width + 1`` past the window's end gives it all it reads, so it
        is found as a search of the whole text finds it (``pos`` keeps the real text before it, for
        ``\\b``). A match starting at or past the window's end is left to the next window, which starts
        where the last match ended, as ``finditer`` continues.
        """
        size = len(text)
        position = 0
        while position < size:
            deadline.check()
            window_end = min(size, position + WINDOW)
            search_end = min(size, window_end + self._width + 1)
            resume = window_end
            for match in self._compiled.finditer(text, position, search_end):
                start, end = match.span()
                if start >= window_end:
                    break
                deadline.check()
                yield start, end
                resume = max(window_end, end)
            position = resume
