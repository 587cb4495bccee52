"""``NAME=VALUE``, ``"NAME": VALUE`` and ``NAME: VALUE`` in text, and the readers of their values.

The patterns of a pair (the name, the quoted name, the value, a header or YAML line) and the helpers that read a
value past its opening (a bracketed value, a YAML block, an escaped blank). docs/capture.md: "`NAME=VALUE` and
`NAME: VALUE` in text" and "Object keys and JSON".
"""

from __future__ import annotations

import re
from typing import Final

from bitexact.capture.detectors.credentials.names import COMPOUND_ENDINGS, CREDENTIAL_NAMES, TOOL_SECRET_NAMES


_EQ = re.compile("=")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_%.-")
_MAX_NAME = 96
# A quoted value reads to its closing quote, past an escaped quote and across lines (a .env or shell
# value, as "NAME": "..." reads); a quote never closed (a line cut short) still opens a value. A quote
# may follow a "b": Python's repr of bytes (password=b'x') is the quoted value, not the "b" before it.
_VALUE = re.compile(
    r"""[ \t]*(?:[bB]?"((?:[^"\\\x00]|\\.)*)"|[bB]?'((?:[^'\\\x00]|\\.)*)'|["']?((?:\\[ \t]|[^\s&;,"'<>#)\]}\x00])++))"""
)
# A quoted name, then JSON's white space, then the colon: pretty printers write `"password" : "x"`.
_DQ_COLON = re.compile('"[ \t\r\n]*:')
_SQ_COLON = re.compile("'[ \t\r\n]*:")
# A name may be quoted as \"NAME\": a JSON document held in a JSON string in text (body="{\"password\": ...}").
_QUOTED_NAME = re.compile(r"""(\\?["'])([A-Za-z0-9_%.\-]{1,96})\1\Z""")
# Rules version 7: its words separated by one blank each, "API Key": "x", as a form or a password manager labels one.
# Tried only where _QUOTED_NAME finds none and a blank stands between the quotes before the colon: as the only
# search it cost a third more on every "...": of JSON in text.
_BLANK_QUOTED_NAME = re.compile(r"""(\\?["'])([A-Za-z0-9_%.\-]{1,48}(?: [A-Za-z0-9_%.\-]{1,48}){1,3})\1\Z""")
# What stands between an escaped name's colon and its value: white space, as written or escaped (\n).
_ESCAPED_SPACE = re.compile(r"(?:[ \t\r\n]|\\[nrt])*")
_ESCAPED_UNQUOTED = re.compile(r"""[^\s&;,"'<>#)\]}\x00\\]+""")
# As _VALUE; a value opening an object, array or tuple ("(", Python's other array) is read by _bracketed.
_COLON_VALUE = re.compile(
    r"""[ \t\r\n]*(?:[bB]?"((?:[^"\\\x00]|\\.)*)"|[bB]?'((?:[^'\\\x00]|\\.)*)'|["']?(?!\()([^\s,;}\])"'\x00{\[]+))"""
)
_HEADER_FLAGS = re.ASCII | re.IGNORECASE
# A YAML sequence item ("- password: x") opens with "- ": the name after it is a mapping key all the same;
# so does a header curl -v prints ("> X-Api-Key: x" sent, "< Set-Cookie: x" received), or a quoted line.
# Group 1 is what stands before the name (its column), group 2 the value on the line, if any. The name
# may be dotted, its last part compared, as in NAME=VALUE (db.password: x in .properties, tls.key: in YAML).
# Each dotted part is bounded (a name is at most _MAX_NAME characters, as in NAME=VALUE): unbounded,
# every line start of a long word was read to its end, about 7 us per 1,000 characters, on the hot
# path of every recorded call.
# The name's last dotted part ends as a credential name can (the lookbehinds, one per ending: each
# must be of fixed width); whether it is one (in the table, or a compound name) is checked after.
_ALL_ENDS = CREDENTIAL_NAMES | TOOL_SECRET_NAMES | set(COMPOUND_ENDINGS)
NAME_ENDS = "|".join(f"(?<={re.escape(ending)})" for ending in sorted(  # the shortest: each implies the rest
    e for e in _ALL_ENDS if not any(e != other and e.endswith(other) for other in _ALL_ENDS)))
"""Lookbehinds, one per ending, for "a name read up to here ends as a credential name can" (a pattern piece;
the name is then asked :func:`is_credential_text_name`)."""
_HEADER_REST = (
    # The colon is looked for first: most line starts hold none, and the lookbehinds (one per ending) are the cost.
    rf"([ \t]*(?:[-<>][ \t]+)?)(?:[A-Za-z0-9_-]{{1,96}}+\.){{0,8}}(?P<name>[A-Za-z0-9_-]{{1,96}}+)(?=[ \t]*:)"
    rf"(?:{NAME_ENDS})"
    rf"[ \t]*:[ \t]*(?P<value>[^\r\n\x00]*[^\s\x00])?"
)
# A YAML block scalar's header ("|", ">-", "|2+"), perhaps with a comment: its value is the lines below.
_BLOCK_HEADER = re.compile(r"[|>](?:[1-9][+-]?|[+-][1-9]?)?(?:[ \t]+#[^\r\n\x00]*)?")
_LINE = re.compile(r"([ \t]*)([^\n\x00]*)(\n|(?=\x00)|\Z)")
_HEADER_NL = re.compile(r"\n" + _HEADER_REST, _HEADER_FLAGS)
_HEADER_NUL = re.compile(r"\x00" + _HEADER_REST, _HEADER_FLAGS)
_HEADER_START = re.compile(_HEADER_REST, _HEADER_FLAGS)


_BARE_LITERALS: Final[frozenset[str]] = frozenset({"true", "false", "null", "True", "False", "None"})
"""JSON's and Python's booleans and null, unquoted: a credential member holding one holds no secret (rules
version 11 leaves them in text, as the walk always left them in data)."""
_JSON_SCALAR = re.compile(r"[ \t\r\n]*+(true|false|null|-?[0-9][0-9.eE+\-]{0,63}+)")
"""A JSON member's value after its key's colon when it is neither a string nor a container (rules version 9)."""


_MAX_BRACKETED: Final[int] = 4096
"""How far a credential's object or array value is followed to its closing bracket, at most; one still
open there is replaced up to that point."""


def _bracketed(text: str, start: int) -> tuple[int, int] | None:
    """The span of the ``[...]``, ``{...}`` or ``(...)`` value at ``start`` (after white space), quotes skipped."""
    at = start
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    if at >= len(text) or text[at] not in "[{(":
        return None
    depth, quote, escaped = 0, "", False
    limit = min(len(text), at + _MAX_BRACKETED)
    for index in range(at, limit):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return at, index + 1
    return at, limit


def _indented_block(text: str, at: int, column: int) -> tuple[int, int] | None:
    """The span of the lines after the line ending at ``at`` that are indented past ``column`` (blank lines
    among them included, and sequence items at ``column``), from the first one's first character to the last
    one's last; None when there is none."""
    newline = text.find("\n", at)
    if newline == -1 or "\x00" in text[at:newline]:
        return None
    start = end = -1
    position = newline + 1
    while position < len(text):
        line = _LINE.match(text, position)
        assert line is not None  # the pattern matches at every position
        content = line.group(2).rstrip("\r \t")
        if content:
            depth = len(line.group(1))
            # A line no deeper than the name ends the value, but a sequence item at the name's own column
            # (YAML writes "key:\n- a") is one of its entries.
            if depth < column or (depth == column and not (content == "-" or content.startswith(("- ", "-\t")))):
                break
            if start < 0:
                start = line.start(2)
            end = line.start(2) + len(content)
        if line.group(3) != "\n":
            break  # the end of the text, or of one text joined with others (NUL)
        position = line.end()
    return None if start < 0 else (start, end)


def _escaped_value(text: str, at: int, quote: str) -> tuple[int, int] | None:
    """The span of the value opening with an escaped quote (``\\"``) at ``at``, in a JSON document held in a
    JSON string: to the escaped quote that closes it, read as the document reads it (``\\\\`` is its
    backslash, ``\\\\\\"`` its escaped quote); one never closed up to where an unquoted value ends. None
    when it is empty."""
    start = position = at + 2
    inner_escape = False  # the document's own backslash came last: its next character is escaped
    while position < len(text) and text[position] != "\x00":
        char = text[position]
        if char == "\\" and position + 1 < len(text):
            following = text[position + 1]
            if following == quote and not inner_escape:
                return (start, position) if position > start else None
            position += 2
            char = following if following == "\\" else ""
        else:
            position += 1
        inner_escape = not inner_escape and char == "\\"
    unquoted = _ESCAPED_UNQUOTED.match(text, start)
    return (start, unquoted.end()) if unquoted else None
