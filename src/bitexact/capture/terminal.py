"""A text as a terminal shows it: its escape sequences taken out, and a way back to where each character stood.

A tool's output captured with colour or from a pty holds ANSI escape sequences between the characters a terminal
shows: ``ESC[32mDATABASE_PASSWORD ESC[0m: x`` (heroku config colours its keys), ``ESC[1mpassword ESC[0m: x``.
Read as written, a code between a credential's name and its value, or inside either, hides it from every rule.
The scanner (:meth:`bitexact.capture.scan.Scanner.findings`) runs the detectors over the text as written and, when
it holds ESC, once more over :func:`shown` text, and :meth:`Shown.span` places each finding of that second pass
back in the text as written.

Taken out (ECMA-48, as xterm and VTE read them): CSI ``ESC [ params intermediates final``; the string sequences
OSC ``ESC ]``, DCS ``ESC P``, SOS ``ESC X``, PM ``ESC ^`` and APC ``ESC _``, each up to BEL or ST (``ESC \\``)
(a window title, a hyperlink's URL: never shown as text); and every other escape sequence, ``ESC``, any
intermediates (``(``, ``#``...) and a final (``ESC ( B``, ``ESC 7``, ``ESC M``, ``ESC c``). A string sequence
with no terminator before a line break, a NUL or the next ESC is taken out as its two-character introducer only,
and a lone ESC (before a control, another ESC or the text's end) alone: the text as shown holds no ESC, so showing it
again changes nothing (what one removal joins, ``ESC ESC[0m [``, is no new sequence).

Left as written, and why:

* C1 controls as one character (U+009B for CSI, U+009D for OSC): a UTF-8 terminal (VTE, kitty, xterm's default
  in UTF-8) reads U+009B as a character, not as CSI, and programs write the 7-bit forms; taking them out would
  read text no terminal reads so, and cost a second search of every text.
* A carriage return or a backspace that overwrites what was written before it: showing it needs a terminal's
  model of the screen (where the cursor stands, what a later write covers), and what a screen no longer shows
  is still in the record, which keeps every byte: the rules read it as written (leaks23's rules read past a CR at
  a line's start, where a pty's transcript holds one).
* A code's meaning: cursor movement (``ESC[5C``) is taken out as colour is, not drawn as the blanks it moves over.

The cost is bounded: :data:`_CODE` is one pass, each character read by one attempt at most (a sequence's body
stops at the next ESC), so a text of codes alone is linear; the positions of the codes are kept only when the
second pass found something, in two arrays of one integer per code.
"""

from __future__ import annotations

import bisect
import re
from array import array
from dataclasses import dataclass, field
from typing import Final

ESC: Final[str] = "\x1b"

_CODE: Final = re.compile(
    r"\x1b(?:"
    r"\[[0-?]*+[ -/]*+[@-~]"  # CSI: parameters, intermediates, a final
    r"|[\]PX^_][^\x07\x1b\n\r\x00]*+(?:\x07|\x1b\\)"  # OSC, DCS, SOS, PM, APC: a body up to BEL or ST
    r"|[ -/]*+[0-~]"  # any other: intermediates, a final (an unterminated string's introducer too)
    r"|"  # a lone ESC (before a control, another ESC, the text's end): a terminal shows none
    r")"
)


@dataclass(frozen=True)
class Shown:
    """A text with its escape sequences taken out (``text``), and where they stood in the text as written."""

    written: str
    text: str
    _at: array[int] = field(default_factory=lambda: array("q"), repr=False)
    """For each code, in order: the index in ``text`` of the character it stood before."""
    _shift: array[int] = field(default_factory=lambda: array("q"), repr=False)
    """For each code, the length of it and of every code before it: what a character after it moved by."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where ``text[start:end]`` stands in the text as written: from its first character to its last, so the
        codes between its characters are inside it and the codes next to it (before it, after it) are not."""
        if start >= end:
            at = self._written_at(start) if start < len(self.text) else len(self.written)
            return at, at
        return self._written_at(start), self._written_at(end - 1) + 1

    def _written_at(self, index: int) -> int:
        """The index in the text as written of ``text[index]``: moved by every code before it."""
        before = bisect.bisect_right(self._at, index)
        return index + (self._shift[before - 1] if before else 0)


def shown(text: str) -> str:
    """``text`` as a terminal shows it (its escape sequences taken out), in one pass of the regex engine."""
    return _CODE.sub("", text)


def mapped(written: str, text: str) -> Shown:
    """The way back from ``text`` (:func:`shown` of ``written``) to ``written``: one read of its codes."""
    at: array[int] = array("q")
    shift: array[int] = array("q")
    removed = 0
    for code in _CODE.finditer(written):
        start, end = code.span()
        at.append(start - removed)
        removed += end - start
        shift.append(removed)
    return Shown(written, text, at, shift)
