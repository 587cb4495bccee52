"""Tables in text: CSV and TSV, tables between pipes (markdown, psql, mysql) and box-drawn tables.

A table's credential columns and the cells under them. docs/capture.md: "Tables in text".
"""

from __future__ import annotations

import functools
import re
from typing import Final

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import Finding, ascii_lower
from bitexact.capture.detectors.ordinary import ordinary_column
from bitexact.capture.detectors.credentials.labels import _password_word
from bitexact.capture.detectors.credentials.lines import _line_at
from bitexact.capture.detectors.credentials.names import NAME, TOKEN, holds_credential, is_credential_word


# Rules version 9: CSV and TSV. A text is read as a table when its header (rules version 10: the first line of the
# text's first :data:`_CSV_HEAD_LINES` lines that holds a delimiter and reads as a header, so a command's line or a
# log line may stand above it; a text starts at its start or after a NUL: texts are scanned joined by one) is two or
# more names (:data:`_CSV_NAME`, quoted or not) separated by one delimiter, a comma, a tab or a semicolon, the first
# the line holds, and a name is a credential word (:func:`is_credential_word`: ``password``, ``api_key``,
# ``Client Secret``, ``token``; a bare ``key`` is none); the lines after it are its rows while each holds as many
# cells as the header (a quoted cell may hold the delimiter, a doubled quote or a line break). A header naming no
# credential ends the search (its rows are never read as a header). The first cell is looked for within
# :data:`_CSV_FIRST` characters, so a line of prose costs one short match. Rules version 11: the header is looked for
# in a text's first 64 lines, not 16 (a table printed below a longer preamble: a shell session, a log); each line
# read is one slice and three short tests (1 MiB of agent text: 0.06 ms against 0.03, the bound reached; without a
# bound a text of 80-character lines cost 19 ms/MiB).
_CSV_FIRST: Final[int] = 64
_CSV_HEAD_LINES: Final[int] = 64
_CSV_START = re.compile(r"\x00(?=[^\n\x00]{0,4096}+\n)")
_CSV_NAME = re.compile(r"""[ \t]*+(?:"([A-Za-z0-9_.\- ]{1,64}+)"|([A-Za-z_][A-Za-z0-9_.\-]{0,63}+))[ \t]*+\Z""")
_CSV_CELLS: Final[dict[str, re.Pattern[str]]] = {
    delimiter: re.compile(rf"""[ \t]*+(?:"((?:[^"\x00]|""){{0,65536}}+)"[ \t]*+|([^{delimiter}"\r\n\x00]*+))""")
    for delimiter in ",;\t"
}
_CSV_CELLS["|"] = re.compile(r"[ \t]*+(?:(?!)(\x00)|([^|\r\n\x00]*+))")
_LAST_PLAIN_CELL = re.compile(r"[ \t]*+(?:(?!)(\x00)|([^\r\n\x00]*+))")
"""A row's cell, up to its delimiter: quoted (its content, group 1) or plain (group 2). sqlite3's list mode quotes
nothing (group 1 never matches) and writes a value's ``|`` as it is: its last cell is the rest of its line."""


@functools.lru_cache(maxsize=32)
def _plain_cell(separator: str) -> re.Pattern[str]:
    """Rules version 14: a cell of sqlite3's list mode whose ``.separator`` is ``separator`` (other than ``|``),
    quoting nothing, as :data:`_CSV_CELLS`'s ``|``. Rules version 15: a separator of more characters (``" | "``,
    ``::``): the cell runs to its first whole separator, its blanks kept (the separator's own may open with one)."""
    if len(separator) == 1:
        return re.compile(rf"[ \t]*+(?:(?!)(\x00)|([^{re.escape(separator)}\r\n\x00]*+))")
    return re.compile(rf"(?:(?!)(\x00)|((?:(?!{re.escape(separator)})[^\r\n\x00])*+))")

_MAX_CSV_HEADER: Final[int] = 4096
_CSV_MARKS: Final[tuple[str, ...]] = (",", "\t", ";")


def _csv_header(line: str, delimiter: str | None = None) -> tuple[str, list[str]] | None:
    """The delimiter and the names of ``line`` when it reads as a CSV header (:data:`_CSV_NAME` cells, two or
    more); None for any other line (prose, a command, a row of values). The delimiter is the first ``,``, tab or
    ``;`` the line holds, or ``delimiter`` when given (sqlite3's ``|``)."""
    first = line[: _CSV_FIRST + len(delimiter or ",")]
    marks = [(first.find(mark), mark) for mark in (_CSV_MARKS if delimiter is None else (delimiter,)) if mark in first]
    if not marks:
        return None
    at, delimiter = min(marks)  # the first the line holds
    if _CSV_NAME.match(line, 0, at) is None:  # the first cell: a line of prose is left after one short match
        return None
    names: list[str] = []
    for cell in line.split(delimiter):
        name = _CSV_NAME.match(cell)
        if name is None:
            return None
        names.append(name.group(1) or name.group(2))
    return delimiter, names


# Rules version 12: a CSV or TSV header anywhere in a text (below its 64th line too) when the line right above it
# prints a table: a command printing files named ``*.csv`` / ``*.tsv`` (``$ cat users.csv``, ``head -n 5
# users.tsv``, PowerShell's ``Get-Content users.csv``: the command word, then only options, numbers and such files,
# one ending the line) or psql's ``COPY ... TO STDOUT ... HEADER`` / ``\copy ... to stdout ... header``. Each such
# line is found by a search for a literal (:data:`_PRINTED_TABLE_SEARCHES`): each search opens with one character, a
# scan in C that costs 0.4 ms/MiB on agent text holding none of them (a ``str.find`` of ``.csv`` costs 0.7, and an
# alternation of them 7: the regex engine tests every character); ``\copy``'s only in a text holding a backslash
# (a memchr). Completed (session 21): ``copy`` in any case typed at psql's prompt (``app=# copy users to stdout with
# csv header;``, ``app=> copy ...``), found from the prompt's ``=`` (0.35 ms/MiB on agent text, in a text holding one;
# a search for ``copy`` in lower case anywhere would cost 0.6 to 0.8).
_PRINTED_FILE = re.compile(r"\.[ctCT][sS][vV]")
_PRINTED_TABLE_SEARCHES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (_PRINTED_FILE, ""), (re.compile("COPY"), "COPY"), (re.compile(r"\\copy"), "\\"),
    (re.compile(r"=[#>] [cC][oO][pP][yY]\b"), "="))
"""Each search for a line that may print a table, and a character a text must hold for it to run ("" for none)."""
_PRINTING_COMMANDS: Final[frozenset[str]] = frozenset(
    {"cat", "head", "tail", "more", "less", "bat", "batcat", "type", "Get-Content", "gc"})
_COPY_TO_STDOUT: Final[str] = "to stdout"
_PASSING_COMMANDS: Final[frozenset[str]] = frozenset({"head", "cat", "more", "less", "bat", "batcat"})


def _table_file(word: str) -> bool:
    """Whether a command's ``word`` names a ``*.csv`` or ``*.tsv`` file (a quote around it allowed; the extension
    in any case, ``USERS.CSV``)."""
    bare = word.strip("'\"")
    return len(bare) > 4 and bare[-4] == "." and ascii_lower(bare[-3:]) in ("csv", "tsv")


def _passes_table_on(segment: str) -> bool:
    """Whether a pipeline's ``segment`` after a line printing a table passes its first lines on unchanged: a
    command of :data:`_PASSING_COMMANDS` and only options and numbers (``| head -n 5``, ``| less``)."""
    words = segment.split()
    return bool(words) and words[0] in _PASSING_COMMANDS and all(
        word[:1] == "-" or word.lstrip("+").isdigit() for word in words[1:])


def _prints_table(line: str, file: bool) -> bool:
    """Whether ``line`` prints a CSV or TSV table on the lines below it: with ``file``, a command printing ``*.csv``
    / ``*.tsv`` files (the line's last word one, a quote around it allowed; between the command's word and it only
    options, numbers and such files); else psql's ``COPY`` to standard output with its ``HEADER`` (``COPY`` or
    ``\\copy``, then ``TO STDOUT``, then ``HEADER``, in any case)."""
    if not file:
        lower = ascii_lower(line)
        to = lower.find(_COPY_TO_STDOUT)
        return to != -1 and "copy" in lower[:to] and "header" in lower[to:]
    printing, *piped = line.split("|")  # rules version 12: ``cat users.csv | head -n 5`` prints its header too
    if not all(_passes_table_on(segment) for segment in piped):
        return False
    words = printing.split()
    if not words or not _table_file(words[-1]):
        return False
    for word in reversed(words[:-1]):
        if word[:1] == "-" or word.lstrip("+").isdigit() or _table_file(word):
            continue  # head's -n 5, tail's +2, another file
        return word.rsplit("/", 1)[-1] in _PRINTING_COMMANDS  # /bin/cat too
    return False


def _credential_column(name: str, names: list[str]) -> bool:
    """Whether a table's column ``name`` (``names``: every column's) holds credentials: a credential word
    (:func:`is_credential_word`; mysql's ``authentication_string`` among them) not made ordinary by the columns beside
    it."""
    return is_credential_word(name) and not ordinary_column(name, names)


def _credential_columns(names: list[str]) -> list[int]:
    """The indexes of ``names`` that are credential columns (:func:`_credential_column`), each distinct name judged
    once: a header of many ``token`` columns read the whole header once per column (``x,token,token,...`` in a 4 KiB
    line: 1,364 ms/MiB at 6ae0a3d; rules version 14's html, quote and insert rows have no line's bound)."""
    judged: dict[str, bool] = {}
    for name in names:
        if name not in judged:
            judged[name] = _credential_column(name, names)
    return [index for index, name in enumerate(names) if judged[name]]


def _csv_table(text: str, start: int, end: int, found: list[Finding], deadline: Deadline,
               delimiter: str | None = None, plain: bool = False) -> int:
    """Where the table whose header is the line ``text[start:end]`` ends (:func:`_csv_rows`; the header's end when
    it names no credential column), or -1 when the line reads as no CSV or TSV header (:func:`_csv_header`, its
    ``delimiter`` when given); the cells of its credential columns are added to ``found``. ``plain``: sqlite3's list
    mode's cells (:func:`_plain_cell`), as its ``|`` always is."""
    header = _csv_header(text[start:end].rstrip("\r"), delimiter)
    if header is None:
        return -1
    delimiter, names = header
    columns = _credential_columns(names)
    if columns:
        return _csv_rows(text, end + 1, delimiter, columns, len(names), found, deadline, plain or delimiter == "|")
    return end


def _csv_rows(text: str, at: int, delimiter: str, columns: list[int], width: int, found: list[Finding],
              deadline: Deadline, plain: bool = False) -> int:
    """The cells of ``columns`` in each row from ``at``, while a row holds ``width`` cells (:data:`_CSV_CELLS`).
    Returns where the rows end: the start of the first line that is none (a text's end or NUL)."""
    cell = _CSV_CELLS[delimiter] if delimiter == "|" or not plain else _plain_cell(delimiter)
    length = len(text)
    while at < length and text[at] not in "\x00":
        deadline.check()
        row = at
        spans: list[tuple[int, int]] = []
        for index in range(width):
            match = (_LAST_PLAIN_CELL if plain and index == width - 1 else cell).match(text, at)
            assert match is not None  # every part is optional
            group = 1 if match.group(1) is not None else 2
            if index in columns and match.start(group) < match.end(group):
                spans.append(match.span(group))
            at = match.end()
            if index < width - 1:
                if not text.startswith(delimiter, at):
                    return row  # fewer cells than the header: no row
                at += len(delimiter)  # rules version 15: sqlite3's separator of more characters
        while at < length and text[at] == "\r":  # a terminal's transcript writes a CSV row's CRLF as CR CR LF
            at += 1
        if at < length and text[at] not in "\n\x00":
            return row  # more cells than the header (or a quote left open): no row
        for start, end in spans:
            value = text[start:end].strip(" \t")
            if holds_credential(value):
                found.append(Finding(start, end, TOKEN, NAME))
        if at >= length or text[at] == "\x00":
            return at
        at += 1
    return at


# Rules version 10: a table of cells between pipes - markdown's (``| user | password |`` over ``|---|---|``), psql's
# (`` user | password `` over ``------+----------``) and the mysql client's (its header between two
# ``+------+----------+`` borders). A rule line (:data:`_TABLE_RULE` finds one; only ``-``, ``:``, ``|``, ``+`` and
# blanks, three dashes in a row, as many cells as the header) stands right under the header; the header's cells are
# names (:data:`_PIPE_NAME`, blanks inside allowed: ``API Key``), one a credential word, as a CSV header's are; the
# lines under the rule are its rows while each holds as many cells (a border or rule line among them is skipped). A
# markdown table's cell that reads as prose is left (:func:`_prose_cell`).
_TABLE_RULE = re.compile(r"-{3,}+:?[ \t]*+[|+]|[|+][ \t]*+:?-{3}")
_RULE_CHARS: Final[frozenset[str]] = frozenset("-:|+ \t\r")
_PIPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\- ]{0,63}+")
_MARKED_NAME = re.compile(
    r"(\*{1,3}+|_{1,3}+|`)(.{1,64}?)\1"
    r"|<([A-Za-z][A-Za-z0-9]{0,15}+)(?:[ \t][^<>]{0,256}+)?+>(.{1,64}?)</\3[ \t]*+>"
    r"|\[([^\[\]]{1,64}+)\](?:\([^()\s]{0,256}+(?:[ \t]++\"[^\"]{0,256}+\")?+\)|\[[^\[\]]{0,64}+\])"
)
"""A header cell in markdown's emphasis (``**``, ``*``, ``__``, ``_``, the same marks both sides) or code marks;
under rules version 12 also an HTML element (``<b>Password</b>``, ``<strong>``, ``<code>``, ``<span title=...>``:
the same name opening and closing it) or a link (``[Password](#pw)``, ``[Password](#pw "title")``, a reference's
``[Password][pw]``), its text the name."""
_MARKED_GROUPS: Final[tuple[int, ...]] = (2, 4, 5)
"""The group of :data:`_MARKED_NAME` holding the marked text, in each alternative."""
_MAX_MARKS: Final[int] = 3
"""How many marks are read through: code inside emphasis (``**`password`**``, ``**<code>secret</code>**``), a
link's text in either (``[**Password**](#pw)``)."""
_CELL_ELEMENT = re.compile(r"<([A-Za-z][A-Za-z0-9]{0,15}+)(?:[ \t][^<>]{0,256}+)?+>([^<>]{1,4096}+)</\1[ \t]*+>")
"""A markdown table's cell that is one HTML element (``<code>x</code>``, ``<kbd>``): its text read as the cell is
(rules version 12), the element's tags left."""
_PIPE_NULL: Final[str] = "NULL"
"""The mysql client's empty cell: no password."""


# Rules version 13: a table drawn with box-drawing characters - sqlite3's ``.mode box`` (``│ user │ password │``
# between ``┌──┬──┐`` / ``├──┼──┤`` lines), psql's ``\\pset linestyle unicode`` (`` user │ password `` over
# ``──────┼──────``), double lines too - read as the same table drawn with ``|``, ``-`` and ``+`` is: the text's box
# characters are translated one for one (the spans stay the text's), only in a text holding ``│``, ``┃`` or ``║`` (an
# ASCII or Latin-1 text is never searched: Python answers from its width that it cannot hold one).
_BOX_VERTICALS: Final[tuple[str, ...]] = ("│", "┃", "║")
_BOX_CHARS: Final[dict[int, str]] = str.maketrans(
    {**dict.fromkeys("│┃║", "|"), **dict.fromkeys("─━═", "-"),
     **dict.fromkeys("┼┬┴├┤┌┐└┘╭╮╰╯╋┳┻┣┫┏┓┗┛╬╦╩╠╣╔╗╚╝╪╫╞╡╤╧╥╨╟╢", "+")})


def _boxed(text: str) -> bool:
    """Whether ``text`` holds a box-drawing vertical line (:data:`_BOX_VERTICALS`): a table may be drawn in it."""
    return any(vertical in text for vertical in _BOX_VERTICALS)


def _unboxed(text: str) -> str:
    """``text`` with its box-drawing characters translated to ``|``, ``-`` and ``+`` (:data:`_BOX_CHARS`), one
    character for one; ``text`` itself when it holds no vertical line (:func:`_boxed`)."""
    return text.translate(_BOX_CHARS) if _boxed(text) else text


def _is_rule(text: str, start: int, end: int) -> bool:
    """Whether the line ``text[start:end]`` is a table's rule or border line (``|---|:--:|``, ``-----+-----``,
    ``+----+----+``)."""
    line = text[start:end]
    return "---" in line and _RULE_CHARS.issuperset(line)


def _pipe_cells(text: str, start: int, end: int, rule: bool = False, escaped: bool = False) -> list[tuple[int, int]]:
    """The spans of the cells of the line ``text[start:end]`` split at ``|`` (at ``+`` too for a ``rule``), blanks
    around each and the outer pipes (or a border's ``+``) left out; with ``escaped`` (a markdown table's line, rules
    version 11) never at an escaped ``\\|``, which is part of its cell. Split in C (``str.split``): a text of rule
    lines asks this of every line."""
    line = text[start:end]
    if rule:
        line = line.replace("+", "|")
    elif escaped and "\\|" in line:
        line = line.replace("\\|", "\x01\x01")  # as long as what it stands for: the spans stay the text's
    body = line.rstrip(" \t\r")
    offset = len(body) - len(body.lstrip(" \t"))
    body = body[offset:]
    if body[:1] == "|":
        body = body[1:]
        offset += 1
    if body[-1:] == "|":
        body = body[:-1]
    spans: list[tuple[int, int]] = []
    at = start + offset
    for cell in body.split("|"):
        lead = len(cell) - len(cell.lstrip(" \t"))
        spans.append((at + lead, at + len(cell.rstrip(" \t"))))
        at += len(cell) + 1
    return spans


def _ruled_cells(text: str, start: int, end: int, joints: list[int]) -> list[tuple[int, int]]:
    """The cells of a database client's row ``text[start:end]`` split where its table's rule line has its ``+``
    (``joints``, offsets in the line): mysql, psql and sqlite3 pad each column to one width and write a value's ``|``
    as it is, so a row holding one more ``|`` than the header is split at the rule's joints; none (an empty list)
    when a joint of the row holds no ``|`` (a row of another shape: the table's end)."""
    line = text[start:end].rstrip("\r")
    if not joints or joints[-1] >= len(line) or any(line[joint] != "|" for joint in joints):
        return []
    bounds = [-1, *joints, len(line)]
    spans: list[tuple[int, int]] = []
    for index, (left, right) in enumerate(zip(bounds, bounds[1:])):
        cell = line[left + 1 : right]
        if (index == 0 and left == -1 and right == 0) or (index == len(bounds) - 2 and left == len(line) - 1):
            continue  # the outer border's: mysql's "| a | b |" opens and closes its line with one
        lead = len(cell) - len(cell.lstrip(" \t"))
        spans.append((start + left + 1 + lead, start + left + 1 + len(cell.rstrip(" \t"))))
    return spans


def _header_name(cell: str) -> str | None:
    """A table's header cell as a column's name (:data:`_PIPE_NAME`), read through markdown's emphasis and code
    marks (rules version 11: ``**Password**``, ``_Token_``, `` `api_key` ``, ``**`password`**``), an HTML element
    and a link (rules version 12: ``<b>Password</b>``, ``[Password](#pw)``, ``**<code>secret</code>**``); None for a
    cell that is no name."""
    for _ in range(_MAX_MARKS):  # the marks first: _PIPE_NAME reads `_Token_` as a name
        marked = _MARKED_NAME.fullmatch(cell)
        if marked is None:
            break
        cell = next(text for text in map(marked.group, _MARKED_GROUPS) if text is not None)
    return cell if _PIPE_NAME.fullmatch(cell) is not None else None


def _prose_cell(value: str) -> bool:
    """Whether a markdown table's cell under a credential column is prose, not a secret: words with a blank between
    (``API key in a header``, ``(a: int) -> str``), or a word a password's label is followed by when it names none
    (:func:`_password_word`: ``yes``, ``required``, ``string``, ``<token>``, ``f(x)``). A database client's table
    (psql's, mysql's) holds data: its cells are taken whatever they say."""
    return " " in value or "\t" in value or _password_word(value) != len(value)


def _pipe_table(text: str, rule_start: int, rule_end: int, found: list[Finding], deadline: Deadline) -> int:
    """The rows of the table whose rule line is ``text[rule_start:rule_end]``, when the line above it is a header
    naming a credential column: its cells taken. Returns where the table's rows end (the rule's end when none)."""
    if rule_start < 2 or text[rule_start - 1] != "\n":
        return rule_end
    head_start, head_end = _line_at(text, rule_start - 1)
    if head_start == -1 or _RULE_CHARS.issuperset(text[head_start:head_end]):  # no line, a rule or a border above
        return rule_end
    prose = "+" not in text[rule_start:rule_end]  # markdown's rule: a table written in prose, not a client's output
    cells = _pipe_cells(text, head_start, head_end, escaped=prose)
    if len(cells) < 2 or len(_pipe_cells(text, rule_start, rule_end, rule=True)) != len(cells):
        return rule_end
    names: list[str] = []
    for left, right in cells:
        name = _header_name(text[left:right])
        if name is None:
            return rule_end
        names.append(name)
    columns = _credential_columns(names)
    if not columns:
        return rule_end
    joints = [] if prose else [index for index, char in enumerate(text[rule_start:rule_end]) if char == "+"]
    at = rule_end
    while at < len(text) and text[at] == "\n":
        deadline.check()
        start, end = _line_at(text, at + 1)
        if start != at + 1 or end <= start:  # an empty line, the text's end or a line too long: the table's end
            return at
        if not _is_rule(text, start, end):
            row = _pipe_cells(text, start, end, escaped=prose)
            if len(row) != len(cells) and not prose:  # rules version 13: a value holding "|" (a client's table)
                row = _ruled_cells(text, start, end, joints)
            if len(row) != len(cells):
                return at
            for index in columns:
                left, right = row[index]
                value = text[left:right]
                if prose and _prose_cell(value):
                    element = _CELL_ELEMENT.fullmatch(value)  # rules version 12: <code>x</code>, its text
                    if element is None or _prose_cell(element.group(2)):
                        continue
                    left, right = left + element.start(2), left + element.end(2)
                    value = element.group(2)
                if value != _PIPE_NULL and holds_credential(value):
                    found.append(Finding(left, right, TOKEN, NAME))
        at = end
    return at
