"""Line, quote and note-mark helpers shared by the rules.

Where a line starts and ends, the first word of a line after a markdown note's marks, quote marks (``> ``)
before a line, blanks and a terminal's carriage returns. docs/capture.md: "Terminal transcripts" and "Rules
version 17".
"""

from __future__ import annotations

import bisect
import re
from typing import Final


_NOTE_MARKS = r"(?:[ \t]*+(?:>|[-*+](?=[ \t])|[0-9]{1,9}+[.)](?=[ \t]))){0,8}+[ \t]*+"
"""Rules version 17: what a markdown note puts before a configuration line it quotes or lists: a blockquote's ``>``
marks and a list item's marker (``- ``, ``* ``, ``+ ``, ``1. ``, ``1) ``, a blank after it), nested up to eight deep,
with the blanks between them."""


# Rules version 13: what a terminal's raw transcript (``script``, a pty's log) holds before sqlite3's prompt and
# before the first line a statement prints: readline's bracketed paste, ``ESC[?2004l`` then a carriage return, then
# ``ESC[?2004h`` before the next ``sqlite> ``. Since ansi23 a text holding ESC is also read as a terminal shows it
# (capture/terminal.py: its escape sequences taken out, its carriage returns kept), so these rules read past only the
# carriage returns that are left there (leaks25: reading past the codes too found nothing more in any raw transcript
# test; without the carriage returns sqlite3's and bash's pty transcripts kept their passwords).
_CARRIAGE_RETURNS = re.compile(r"\r*+")


def _past_carriage_returns(text: str, at: int) -> int:
    """Where the run of carriage returns at ``at`` ends (``at`` when none is there: one character's test)."""
    if not text.startswith("\r", at):
        return at
    returns = _CARRIAGE_RETURNS.match(text, at)
    assert returns is not None  # it matches the empty run too
    return returns.end()


def _indent_past_returns(text: str, at: int) -> int:
    """Where a line starting at ``at`` has its first character past carriage returns (:func:`_past_carriage_returns`)
    and blanks: a continuation prompt's ``...> ``."""
    at = _past_carriage_returns(text, at)
    return at + _blanks(text, at)


def _blanks(text: str, at: int) -> int:
    """How many blanks (spaces, tabs) stand in ``text`` from ``at``: a continuation prompt's indent."""
    count = 0
    while text[at + count : at + count + 1] in (" ", "\t") and at + count < len(text):
        count += 1
    return count


_MAX_TABLE_LINE: Final[int] = 4096


def _line_at(text: str, at: int) -> tuple[int, int]:
    """The start and end (its newline's position, or the text's end or NUL) of the line holding ``at``, each looked
    for within :data:`_MAX_TABLE_LINE` characters; -1 for either not found there (a line too long for a table's)."""
    floor = max(0, at - _MAX_TABLE_LINE)
    start = max(text.rfind("\n", floor, at), text.rfind("\x00", floor, at))
    if start == -1 and floor > 0:
        return -1, -1
    ceiling = min(len(text), at + _MAX_TABLE_LINE)
    end = text.find("\n", at, ceiling)
    nul = text.find("\x00", at, ceiling if end == -1 else end)
    if nul != -1:
        end = nul
    if end == -1:
        if ceiling < len(text):
            return -1, -1
        end = len(text)
    return start + 1, end


def _line_end(text: str, at: int) -> int:
    """Where the line holding ``at`` ends (a newline, a NUL or the text's end), however far."""
    end = text.find("\n", at)
    nul = text.find("\x00", at, len(text) if end == -1 else end)
    if nul != -1:
        return nul
    return len(text) if end == -1 else end


def _ends_line(text: str, at: int) -> bool:
    """Whether only spaces and tabs stand between ``at`` and its line's end (a newline, a NUL, a written ``\\n``, or
    the text's end)."""
    at = _past_blanks(text, at)
    return at == len(text) or text[at] in "\r\n\x00" or text.startswith("\\n", at)


def _past_blanks(text: str, at: int) -> int:
    """The position after the spaces and tabs at ``at``."""
    while at < len(text) and text[at] in " \t":
        at += 1
    return at


def _line_start(text: str, floor: int, at: int) -> int:
    """Where the line holding ``at`` starts, searched back no further than ``floor`` (each end of
    :data:`_LINE_END`, by a search in C: the stretches between the lines a flag stands on are read once)."""
    escaped = text.rfind("\\n", floor, at)
    return max(floor, text.rfind("\n", floor, at) + 1, text.rfind("\x00", floor, at) + 1,
               escaped + 2 if escaped != -1 else floor)


def _inside(starts: list[int], spans: list[tuple[int, int]], at: int) -> bool:
    """Whether ``at`` is inside one of ``spans`` (sorted, ``starts`` their starts)."""
    index = bisect.bisect_right(starts, at) - 1
    return index >= 0 and at < spans[index][1]


def _next_at(positions: list[int], start: int, default: int) -> int:
    """The first of ``positions`` (sorted) at or after ``start``, if before ``default``; else ``default``."""
    index = bisect.bisect_left(positions, start)
    return min(positions[index], default) if index < len(positions) else default


def _opens_a_line(text: str, at: int) -> bool:
    """Whether ``at`` starts its line (:func:`_starts_a_line`) or, rules version 16, follows a markdown blockquote's
    marks that open it (:func:`_quote_opening`: ``>`` and blanks only, so a prompt's own ``> `` before it is none)."""
    return _starts_a_line(text, at) or _quote_opening(text, at) != -1


_NOTE_OPENING = re.compile(_NOTE_MARKS)
_NOTE_MARK_CHARS: Final[str] = " \t>-*+.)0123456789"
_MAX_NOTE_MARKS: Final[int] = 32
"""The characters read back over a note's marks (:data:`_NOTE_MARKS`) before a configuration line's first word."""


def _first_word(text: str, at: int) -> bool:
    """Rules version 17: whether ``at`` is its line's first word as a configuration file reads it: the line's start
    (:func:`_starts_a_line`), or after the marks a markdown note puts before a line it quotes or lists
    (:data:`_NOTE_MARKS`: ``> requirepass x``, ``> > user alice on >x``, ``- masterauth x``, ``1. machine h password
    x``). The marks are read back at most :data:`_MAX_NOTE_MARKS` characters and must be the only thing before ``at``
    on its line: a word (``set requirepass x``), a number that is no list marker (``6.0 masterauth x``), a ``"``
    (redis-cli's ``1) "requirepass"``) or a prompt (``sqlite> ``) before it is none."""
    if _starts_a_line(text, at):
        return True
    line, floor = at, max(0, at - _MAX_NOTE_MARKS)
    while line > floor and text[line - 1] in _NOTE_MARK_CHARS:
        line -= 1
    if not (line == 0 or text[line - 1] in "\n\x00" or text[line - 2 : line] == "\\n"):
        return False
    marks = _NOTE_OPENING.match(text, line, at)
    return marks is not None and marks.end() == at


def _opens_span(text: str, at: int) -> bool:
    """Rules version 17 (leaks32): whether ``at`` follows a markdown inline code span's opening backtick, which a
    configuration line's first word may stand after as after a line's start (``Set `requirepass x` in redis.conf``):
    one backtick (a second before it is a fence's or a double span's) with no letter, digit or ``_`` before it (a
    closing backtick ends a word: ``a`b``)."""
    if text[at - 1 : at] != "`":
        return False
    before = text[at - 2 : at - 1]
    return before == "" or not (before == "`" or before == "_" or before.isalnum())


def _span_close(text: str, at: int) -> int:
    """Rules version 17 (leaks32): where the code span holding ``at`` closes (:func:`_opens_span` opened it): the
    next backtick on ``at``'s line, as markdown closes a single backtick's span; -1 when none is on the line. The
    search stops at the next backtick, so spans opened one after another on a line are each read once."""
    close = text.find("`", at)
    if close == -1 or _LINE_BREAK.search(text, at, close) is not None:
        return -1
    return close


_LINE_BREAK = re.compile(r"[\r\n\x00]|\\n")
"""What ends a line before a code span's closing backtick: a newline, a carriage return, a NUL or a written ``\\n``."""


_AFTER_SPAN: Final[str] = ".,;:!?)"
"""What a sentence puts right after a code span, read into a bare value with the span's closing backtick
(``set `PASSWORD=x`.``)."""
_MAX_AFTER_SPAN: Final[int] = 4
"""The marks read back over before a span's closing backtick (``x`).``: two); a long run of them ends no span."""


def _before_span_marks(text: str, start: int, end: int) -> int:
    """Where a bare word ``text[start:end]`` ends before the marks of :data:`_AFTER_SPAN` that end it (at most
    :data:`_MAX_AFTER_SPAN`; ``end`` when none)."""
    floor = max(start, end - _MAX_AFTER_SPAN)
    while end > floor and text[end - 1] in _AFTER_SPAN:
        end -= 1
    return end


_LINE_STARTS = re.compile(r"[\n\x00]|\\n")
"""What :func:`_line_start` reads as a line's end: a newline, a NUL, a written ``\\n`` (one search forward, in C)."""


def _span_value(text: str, name: int, value: tuple[int, int], end: int) -> tuple[int, int] | None:
    """Rules version 17 (leaks32): a configuration name at ``name`` opening a code span (:func:`_opens_span`), its
    value ``value`` read to ``end`` (a bare word's end, or a quoted word's closing quote): the value's span when the
    span's closing backtick ends it, as a line's end ends a line's value (``requirepass x` ``: the bare word read up
    to its last character, the backtick; ``requirepass "x y"` ``: right after the quote); else None. A backtick
    inside the bare word stays in the value (``ab`cd` ``: markdown's span would close at the first, redis reads
    the word whole, so the whole is taken)."""
    if not _opens_span(text, name):
        return None
    if value[1] == end:  # a bare word, its last character the closing backtick (a sentence's marks after it)
        end = _before_span_marks(text, value[0], end)
        return (value[0], end - 1) if end - 1 > value[0] and text[end - 1] == "`" else None
    return value if text[end : end + 1] == "`" else None


_MAX_QUOTE_MARKS: Final[int] = 16
"""The characters read back over a markdown blockquote's marks before a first item's blanks or a prompt (``> > > ``:
six; blanks before the first ``>``, a quote under a list item, count too)."""


_QUOTE_MARKS = re.compile(r"(?:[ \t]*+>[ \t]?+){0,16}+")
"""A markdown blockquote's marks opening a line, as markdown reads them: each ``>`` after blanks, and one blank after
it (``>     1) "f1"``: the quote's blank, then a code block's four)."""


def _past_quote_marks(text: str, at: int, end: int) -> int:
    """Where the line at ``at`` goes on past its blockquote's marks (:data:`_QUOTE_MARKS`, read up to ``end``)."""
    marks = _QUOTE_MARKS.match(text, at, end)
    return at if marks is None else marks.end()


def _quote_opening(text: str, end: int) -> int:
    """Rules version 16: where the line opens whose markdown blockquote marks (``>``, blanks between and after them)
    end at ``end``, read back at most :data:`_MAX_QUOTE_MARKS` characters; -1 when something else stands before them
    on the line: redis-cli's prompt ends in ``> `` too, after its ``HOST:PORT`` (``127.0.0.1:6379> ``)."""
    at, floor = end, max(0, end - _MAX_QUOTE_MARKS)
    while at > floor and text[at - 1] in " \t>":
        at -= 1
    return at if at == 0 or text[at - 1] in "\n\x00" else -1


def _starts_a_line(text: str, at: int) -> bool:
    """Whether only spaces and tabs stand between ``at`` and the start of its line: the text's start, a
    newline, a NUL (texts are scanned joined by one), or a newline written as ``\\n`` in a string. Reads back
    over the spaces only, so many candidates on one line cost no rescan."""
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    return at == 0 or text[at - 1] in "\n\x00" or text[at - 2 : at] == "\\n"
