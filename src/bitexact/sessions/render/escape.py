"""Hostile-text handling for publication (T-UAS-049, 8.4, 8.5).

Source text is untrusted: it must not close the generated code fences or
disclosure containers, become HTML structure, or be read as a GitHub
Actions workflow command (``::add-mask::``, ``::set-output``, ``##[...]``)
when a view is written to a job log.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
# The runner trims all leading Unicode whitespace (.NET TrimStart: no-break, em, ideographic spaces ...)
# before it looks for a command, so any whitespace but the line break may precede the markers.
_COMMAND_LINE = re.compile(r"^([^\S\n]*)(::|##\[)", re.M)
# Control characters and the bidirectional marks, embeddings, overrides and isolates: a U+202E in a log
# reversed the rest of its line in the views (``shown`` escapes the same set in console reports).
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ZWSP = "\u200b"
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def fence_for(*texts: str) -> str:
    """A backtick fence longer than any backtick run in ``texts`` (at least 3)."""
    longest = max((len(m.group()) for t in texts for m in _BACKTICKS.finditer(t)), default=0)
    return "`" * max(3, longest + 1)


def escape_html(text: str) -> str:
    """Escape text placed in Markdown outside code (no HTML can take effect)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def neutralize_commands(text: str) -> str:
    """Break workflow-command syntax at line starts with a zero-width space.

    A runner only honours ``::command::`` / ``##[command]`` at the start of a
    line; a zero-width space between the markers keeps the text readable
    while making it inert.
    """
    return _COMMAND_LINE.sub(lambda m: f"{m.group(1)}{m.group(2)[0]}{_ZWSP}{m.group(2)[1:]}", text)


def single_line(text: str) -> str:
    """A one-line display form: line breaks shown as ``⏎``, control characters and bidi controls as ``�``."""
    text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    return _CONTROL.sub("\ufffd", text)


def printable(text: str) -> str:
    """Multiline display form: control characters other than newline/tab, and bidi controls, replaced."""
    return _CONTROL.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))


def shown(text: str) -> str:
    """A name or message from a file for a console report: control characters (line breaks included)
    and bidirectional overrides written as escapes, so it can neither drive the terminal nor fake a line."""
    return _UNSHOWN.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)
