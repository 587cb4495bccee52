"""sqlite3's output: its session's modes and every mode's rows (column, line, list, quote, insert, html, tcl,
ascii), a table's schema.

docs/capture.md: "Database clients' output", "sqlite3".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import Finding, ascii_lower
from bitexact.capture.detectors.credentials.lines import _line_end, _past_carriage_returns
from bitexact.capture.detectors.credentials.names import NAME, TOKEN, holds_credential
from bitexact.capture.detectors.credentials.tables import _MAX_CSV_HEADER, _credential_column, _credential_columns


_SQLITE_PROMPT: Final[str] = "sqlite> "
_SQLITE_MORE: Final[str] = "...> "

_SQLITE_MODES: Final[frozenset[str]] = frozenset({
    "ascii", "box", "column", "csv", "html", "insert", "json", "line", "list", "markdown", "quote", "table", "tabs",
    "tcl"})
_SQLITE_DELIMITERS: Final[dict[str, str | None]] = {"csv": None, "tabs": None, "list": "|"}
"""sqlite3's modes that print a delimited table, its header first when ``.headers`` are on, and their delimiter (None:
the header's first ``,``, tab or ``;``). Rules version 13: ``list``, sqlite3's default, cells between ``|``."""
_SQLITE_LINE_MODE: Final[str] = "line"
_SQLITE_LIST_MODE: Final[str] = "list"
_SQLITE_SEPARATOR: Final[str] = "|"
"""List mode's separator, as a session opens and as ``.mode list`` sets it again (3.40.1). Rules version 14: another
set by ``.separator X`` or ``-separator X``, one character (a longer one is left), read as ``|`` is."""
_SQLITE_COLUMN_MODE: Final[str] = "column"
"""sqlite3's ``column`` mode: ``.mode column`` turns the headers on unless the session set them (3.40.1: they stay on
in the modes after it), ``-column`` on the command line does not."""
_HEADER_FLAGS_SQLITE: Final[frozenset[str]] = frozenset({"header", "headers", "noheader"})
"""sqlite3's command-line flags that set its headers (``-header`` / ``-headers`` on, ``-noheader`` off)."""
_CLIENT_TABLE: Final[str] = "client"
"""How a mysql, MariaDB or psql line's output is read (:func:`_printed_below`): a CSV or TSV header, then its rows."""
_SQLITE_SESSION: Final[tuple[str, bool]] = ("list", False)
"""The mode and the headers a sqlite3 session opens with."""

_ON: Final[frozenset[str]] = frozenset({"on", "1", "yes", "true"})


def _sqlite_flags(words: list[str], mode: str, header: bool) -> tuple[str, bool]:
    """sqlite3's output mode after its command line's ``words``: the last mode's flag (``-csv``, ``-tabs``, ``-list``,
    ``-line``, ``-box``...) and whether it prints its header (``-header``, ``-noheader``), from ``mode`` and
    ``header``."""
    for word in words:
        if word[:1] != "-":
            continue
        flag = word.lstrip("-")
        if flag in _SQLITE_MODES:
            mode = flag
        elif flag in _HEADER_FLAGS_SQLITE:
            header = flag != "noheader"
    return mode, header


# Rules version 15: the word after ``-separator`` on sqlite3's command line (as a shell reads it) or after
# ``.separator`` at its prompt (as sqlite3 reads it): quoted (``" | "``, ``' | '``: its blanks kept) or bare.
_SEPARATOR_WORD = re.compile(
    r"""(?<![^ \t])(?:\.|--?)separator[ \t]++(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|'([^'\r\n\x00]*+)'|([^\s"']++))""")


def _sqlite_separator(line: str, separator: str) -> str:
    """Rules version 14: list mode's separator after sqlite3's command line ``line`` (``-separator X``) or a
    ``.separator X`` dot command's: its word unquoted, ``\\t`` a tab; ``separator`` when none is given. Rules
    version 15: a quoted word whole, blanks inside (``-separator ' | '``; 14 split the line at its blanks)."""
    for word in _SEPARATOR_WORD.finditer(line):
        value = next(group for group in word.groups() if group is not None)
        if value:
            separator = value.replace("\\t", "\t")
    return separator


class _SqliteSession:
    """A sqlite3 session's output settings as its lines set them (:meth:`CredentialsDetector._printed_sql_tables`):
    the mode, the headers and whether the session set them (then ``.mode column`` leaves them as they are), list
    mode's separator (rules version 14), and the columns of the tables it showed created (rules version 14; kept
    across sessions, as a table's name stays in its database)."""

    __slots__ = ("mode", "header", "header_set", "separator", "tables")

    def __init__(self) -> None:
        self.tables: dict[str, list[str]] = {}
        self.restart()

    def restart(self) -> None:
        """A new session, as sqlite3 opens one (the tables known kept)."""
        self.mode, self.header = _SQLITE_SESSION
        self.header_set = False
        self.separator = _SQLITE_SEPARATOR

    def opened(self, words: list[str], line: str) -> None:
        """A new session by sqlite3's command ``line`` (its ``words`` after the client's: ``-csv``, ``-header``,
        ``-separator X``...)."""
        self.mode, self.header = _sqlite_flags(words, *_SQLITE_SESSION)
        self.separator = _sqlite_separator(line, _SQLITE_SEPARATOR)
        self.header_set = any(word.lstrip("-") in _HEADER_FLAGS_SQLITE for word in words)

    def dot_command(self, words: list[str], text: str, end: int, statement: str) -> None:
        """The settings after a dot command's ``words`` at ``sqlite> `` (its line, ``statement`` after the prompt,
        ending at ``end`` in ``text``)."""
        command = words[0]
        if command == ".mode":
            self.mode = words[1] if len(words) > 1 else self.mode  # no name: it prints the mode
            self.header = self.header or (self.mode == _SQLITE_COLUMN_MODE and not self.header_set)
            if len(words) > 1 and self.mode == _SQLITE_LIST_MODE:
                self.separator = _SQLITE_SEPARATOR
        elif command == ".separator":
            self.separator = _sqlite_separator(statement, self.separator)
        elif command == ".schema" and end < len(text):
            _schema_lines(text, end + 1, self.tables)
        elif command in (".headers", ".header"):
            self.header = len(words) > 1 and ascii_lower(words[1]) in _ON
            self.header_set = True

    def reads(self, prints: str) -> bool:
        """Whether output printed in ``prints`` (a mode, or :data:`_CLIENT_TABLE`) is read: a header to read it by,
        or a form that names its columns in each row (rules version 15: list mode's separator of any length)."""
        return self.header or prints in (_CLIENT_TABLE, _SQLITE_LINE_MODE) or (
            prints == _SQLITE_INSERT_MODE and bool(self.tables))


# Rules version 13: sqlite3's ``column`` mode (``.mode column``, ``sqlite3 -column -header``): its header's names over
# a rule of dashes, a run a column, two blanks between; each column padded to its run's width, so a row's cell is the
# text over its run (the last to the line's end).
_COLUMN_RULE = re.compile(r"-++(?:  -++)++[ \t]*+\r?+\Z")
_DASHES = re.compile(r"-++")


def _sqlite_columns(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """The credential columns' cells (:func:`_credential_column`) of the table sqlite3's ``column`` mode prints from
    ``at`` (:data:`_COLUMN_RULE` under its header), to the first row that is empty or holds no blanks where the rule
    does (the next prompt, another table). Returns where the table ends (``at`` when no table is there)."""
    head_end = text.find("\n", at, at + _MAX_CSV_HEADER)
    rule_end = text.find("\n", head_end + 1, head_end + 1 + _MAX_CSV_HEADER) if head_end != -1 else -1
    if rule_end == -1 or "\x00" in text[at:rule_end] or _COLUMN_RULE.match(text, head_end + 1, rule_end) is None:
        return at
    runs = [(dash.start() - head_end - 1, dash.end() - head_end - 1) for dash in
            _DASHES.finditer(text, head_end + 1, rule_end)]
    starts = [start for start, _ in runs]
    header = text[at:head_end]
    names = [header[start : (starts[index + 1] if index + 1 < len(starts) else len(header))].strip()
             for index, start in enumerate(starts)]
    columns = [index for index in _credential_columns(names) if names[index]]
    if not columns:
        return rule_end
    gaps = [stop for _, stop in runs[:-1]]
    row = rule_end + 1
    while row < len(text):
        deadline.check()
        end = _line_end(text, row)
        line = text[row:end].rstrip("\r")
        if len(line) <= starts[-1] or line.isspace():
            return row
        for stop in gaps:
            if line[stop : stop + 2] != "  ":  # a row holds blanks where the rule does (its cells are padded)
                return row
        for index in columns:
            start = row + starts[index]
            stop = row + (runs[index][1] if index + 1 < len(runs) else len(line))
            while stop > start and text[stop - 1] in " \t":
                stop -= 1
            if start < stop and holds_credential(text[start:stop]):
                found.append(Finding(start, stop, TOKEN, NAME))
        if end >= len(text) or text[end] == "\x00":
            return end
        row = end + 1
    return row


# Rules version 13: sqlite3's ``line`` mode (``.mode line``, ``sqlite3 -line``): a record a column a line, ``NAME =
# VALUE`` (the names right-aligned), an empty line between records; a credential column's value is the rest of its
# line (``password = pw,with|pipe``: the key-value rule's value ends at the ``,``).
_SQLITE_FIELD = re.compile(r"[ \t]*+([A-Za-z_][A-Za-z0-9_.\-]{0,63}+) = ")


def _sqlite_records(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """The credential columns' values (:func:`_credential_column`) of sqlite3's ``line`` records from ``at``, to the
    first line that is neither a field (:data:`_SQLITE_FIELD`, or another ``EXPRESSION = VALUE``) nor the one empty
    line between two records (the next prompt, a second empty line). Returns where the records end."""
    length = len(text)
    empty = True  # a record opens with a field: no empty line before the first
    while at < length and text[at] != "\x00":
        deadline.check()
        end = _line_end(text, at)
        value_end = end - 1 if text[end - 1 : end] == "\r" else end
        if (at < value_end and " = " not in text[at:value_end]) or (at == value_end and empty):
            return at
        empty = at == value_end
        field = _SQLITE_FIELD.match(text, at, value_end)
        if (field is not None and field.end() < value_end and _credential_column(field.group(1), [field.group(1)])
                and holds_credential(text[field.end() : value_end])):
            found.append(Finding(field.end(), value_end, TOKEN, NAME))
        if end >= length or text[end] == "\x00":
            return end
        at = end + 1
    return at


# Rules version 14: sqlite3's ``quote`` and ``insert`` modes (3.40.1), their values written as SQL literals: ``quote``'s
# header is its names quoted (``'id','name','password'``) and each row its values (``1,'alice','pw'``, ``NULL``, a
# number, ``X'..'``); ``insert``'s rows, with the headers on, ``INSERT INTO t(id,name,password) VALUES(1,'alice','pw');``
# (the column list only then: without it no value has a name and the row is left). A string's ``'`` is written ``''``.
_SQL_LITERAL = re.compile(r"'((?:[^'\r\n\x00]|'')*+)'|NULL|-?[0-9][0-9.eE+\-]*+|[Xx]'[0-9A-Fa-f]*+'")
_SQLITE_INSERT = re.compile(
    r"""INSERT INTO ("(?:[^"\r\n\x00]|"")*+"|[A-Za-z_][A-Za-z0-9_$]*+)(?:\(([^()\r\n\x00]*+)\))?+ VALUES\(""")
# With the headers off, ``INSERT INTO t VALUES(...);`` names no column: the columns are those of the table's ``CREATE
# TABLE`` when the session showed it (``.schema``'s lines, or the statement typed at the prompt, one line each).
_CREATE_TABLE = re.compile(
    r"""[ \t]*+CREATE[ \t]++TABLE[ \t]++(?:IF[ \t]++NOT[ \t]++EXISTS[ \t]++)?+"""
    r"""("(?:[^"\r\n\x00]|"")*+"|`[^`\r\n\x00]*+`|\[[^\]\r\n\x00]*+\]|[A-Za-z_][A-Za-z0-9_$]*+)[ \t]*+\(""",
    re.IGNORECASE)
_COLUMN_NAME = re.compile(r"""[ \t]*+("(?:[^"\r\n\x00]|"")*+"|`[^`\r\n\x00]*+`|\[[^\]\r\n\x00]*+\]|[^\s,()]++)""")
_TABLE_CONSTRAINTS: Final[frozenset[str]] = frozenset({"constraint", "primary", "unique", "check", "foreign"})
_MAX_SCHEMA_LINES: Final[int] = 256
_SQLITE_QUOTE_MODE: Final[str] = "quote"
_SQLITE_INSERT_MODE: Final[str] = "insert"
_SQLITE_HTML_MODE: Final[str] = "html"
_HTML_CELL = re.compile(r"(<TR>)?+<T([HD])>([^<\r\n\x00]*+)</T\2>\r?+\Z")
"""A line of sqlite3's ``html`` mode (3.40.1): a cell a line, ``<TH>name</TH>`` in the header's row, ``<TD>value</TD>``
in a row's (its ``<``, ``>``, ``&`` and quotes written as entities), the row's first opening with ``<TR>``; ``</TR>``
on a line of its own closes it."""
_HTML_ROW_END: Final[str] = "</TR>"
_MAX_HTML_COLUMNS: Final[int] = 256
"""The most cells a row of sqlite3's html mode is read with: each header name is judged against the others (a
``token`` beside a ``logprob``), so a header of thousands of cells would cost their square."""


def _table_key(name: str) -> str:
    """A table's name as sqlite3 compares it: its quotes taken off, in ASCII lower case."""
    if name[:1] in "\"`[" and len(name) > 1:
        name = name[1:-1]
    return ascii_lower(name)


def _create_table(line: str) -> tuple[str, list[str]] | None:
    """The table a one-line ``CREATE TABLE NAME (COLUMN TYPE, ...)`` (:data:`_CREATE_TABLE`) creates and its columns'
    names in order (a table constraint, ``PRIMARY KEY (a, b)``, is none; a type's own brackets, ``DECIMAL(10,2)``,
    are read past); None for any other line or a definition its line does not close."""
    create = _CREATE_TABLE.match(line)
    if create is None:
        return None
    columns: list[str] = []
    at, depth, start = create.end(), 0, create.end()
    while at < len(line):
        char = line[at]
        if char in "'\"`[":  # a quoted name or default: read past its closing quote
            close = line.find("]" if char == "[" else char, at + 1)
            if close == -1:
                return None
            at = close
        elif char == "(":
            depth += 1
        elif char in ",)" and depth == 0:
            name = _COLUMN_NAME.match(line, start, at)
            if name is not None and ascii_lower(name.group(1)) not in _TABLE_CONSTRAINTS:
                columns.append(_table_key(name.group(1)) if name.group(1)[:1] in "\"`[" else name.group(1))
            if char == ")":
                return _table_key(create.group(1)), columns
            start = at + 1
        elif char == ")":
            depth -= 1
        at += 1
    return None


def _definition_line(line: str) -> str:
    """A line of a ``CREATE TABLE`` written over many lines, as it is joined to the others: its ``-- note`` taken
    off when no quote stands before it (a note's comma or bracket is no column's)."""
    note = line.find("--")
    return line if note == -1 or any(quote in line[:note] for quote in "'\"`[") else line[:note]


def _schema_lines(text: str, at: int, tables: dict[str, list[str]]) -> None:
    """The tables ``.schema``'s lines from ``at`` create (:func:`_create_table`), to the next prompt (at most
    :data:`_MAX_SCHEMA_LINES` lines), added to ``tables``. Rules version 15: a ``CREATE TABLE`` over many lines (its
    columns each on a line, as typed: ``.schema`` prints a statement as it was written) read to the line ending its
    ``;``, its lines joined."""
    pending: list[str] = []  # the lines of a definition its first line did not close
    for _ in range(_MAX_SCHEMA_LINES):
        at = _past_carriage_returns(text, at)  # a raw transcript's CR (its codes read past as the text is shown)
        end = _line_end(text, at)
        line = text[at:end].rstrip("\r")
        if line.startswith(_SQLITE_PROMPT) or end >= len(text) or text[end] == "\x00":
            return
        if pending:
            pending.append(_definition_line(line))
            if line.rstrip().endswith(";"):
                line, pending = " ".join(pending), []
        table = None if pending else _create_table(line)
        if table is not None:
            tables[table[0]] = table[1]
        elif not pending and _CREATE_TABLE.match(line) is not None and not line.rstrip().endswith(";"):
            pending = [_definition_line(line)]
        at = end + 1


def _sql_literals(text: str, at: int, end: int) -> tuple[list[tuple[int, int] | None], int] | None:
    """The values of a comma-separated list of SQL literals (:data:`_SQL_LITERAL`) from ``at`` (before ``end``): each
    string's content span (None for a number, ``NULL``, a blob), and where the list ends; None when a value is none."""
    cells: list[tuple[int, int] | None] = []
    while True:
        literal = _SQL_LITERAL.match(text, at, end)
        if literal is None:
            return None
        cells.append(literal.span(1) if literal.group(1) is not None else None)
        at = literal.end()
        if text.startswith(",", at) and at < end:
            at += 1
            continue
        return cells, at


def _take_columns(text: str, cells: Sequence[tuple[int, int] | None], columns: list[int],
                  found: list[Finding]) -> None:
    """The credential ``columns``' values among a row's ``cells`` (:func:`_sql_literals`: None for a literal that is
    no string; :func:`_tcl_cells`, ascii mode's cells)."""
    for index in columns:
        span = cells[index]
        if span is not None and holds_credential(text[span[0] : span[1]]):
            found.append(Finding(span[0], span[1], TOKEN, NAME))


def _quoted_line(text: str, at: int, end: int) -> list[tuple[int, int] | None] | None:
    """The line ``text[at:end]`` read as a row of sqlite3's ``quote`` mode: its SQL literals (:func:`_sql_literals`)
    filling the line, a carriage return after them allowed; None when it is none."""
    row = _sql_literals(text, at, end)
    return None if row is None or text[row[1] : end].rstrip("\r") else row[0]


_RowReader = Callable[[str, int, int], Sequence[tuple[int, int] | None] | None]


def _rows_under_header(text: str, at: int, read: _RowReader, found: list[Finding], deadline: Deadline) -> int:
    """A table printed a row a line, its header first (sqlite3's ``quote`` and ``tcl`` modes): ``read`` finds a line's
    cells (None for a value that is no string; None for a line that is no row). The header is the line at ``at``, two
    or more names; then each line of as many cells has the credential columns' values taken, to the first line that
    is none. Returns where the rows end (``at`` when no header is there)."""
    end = _line_end(text, at)
    header = read(text, at, end)
    if header is None or None in header or len(header) < 2:
        return at
    columns = _credential_columns([text[span[0] : span[1]] for span in header if span is not None])
    length = len(text)
    while columns and end < length and text[end] == "\n":
        deadline.check()
        at = end + 1
        end = _line_end(text, at)
        row = read(text, at, end)
        if row is None or len(row) != len(header):
            return at
        _take_columns(text, row, columns, found)
    return end


def _sqlite_html(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """sqlite3's ``html`` mode from ``at``, its headers on: the header's row of ``<TH>`` cells, then each row of as
    many ``<TD>`` cells (:data:`_HTML_CELL`), the credential columns' values taken, to the first line that is neither
    a cell nor a row's ``</TR>``. Returns where what was read ends."""
    names: list[str] | None = None
    columns: list[int] = []
    cells: list[tuple[int, int]] = []
    length = len(text)
    while at < length and text[at] != "\x00":
        deadline.check()
        end = _line_end(text, at)
        if text[at:end].rstrip("\r") == _HTML_ROW_END:
            if names is None:
                names = [text[start:stop] for start, stop in cells]
                columns = _credential_columns(names)
                if not columns:
                    return end
            elif len(cells) == len(names):
                for index in columns:
                    start, stop = cells[index]
                    if holds_credential(text[start:stop]):
                        found.append(Finding(start, stop, TOKEN, NAME))
            cells = []
        else:
            cell = _HTML_CELL.match(text, at, end)
            if (cell is None or (cell.group(1) is None) == (not cells) or (cell.group(2) == "H") != (names is None)
                    or len(cells) == _MAX_HTML_COLUMNS):
                return at  # no cell, a row not opened or opened twice, a header cell in a row, too many cells
            cells.append(cell.span(3))
        if end >= length:
            return end
        at = end + 1
    return at


# Rules version 15: sqlite3's ``tcl`` mode (3.40.1, ``.mode tcl``): each cell a C string in double quotes (``\"``,
# ``\\``, ``\n``, ``\t`` and octal escapes inside), a blank between cells, a row a line, its header (the names so
# quoted) first when the headers are on.
_TCL_CELL = re.compile(r'"((?:[^"\\\r\n\x00]|\\.)*+)"')
_SQLITE_TCL_MODE: Final[str] = "tcl"
# Rules version 15: sqlite3's ``ascii`` mode (3.40.1, ``.mode ascii``, ``sqlite3 -ascii``): its cells as they are,
# the unit separator (US, 0x1F) between them, the record separator (RS, 0x1E) after each row and the header, no line
# break: the whole table and the prompt after it are one line.
_SQLITE_ASCII_MODE: Final[str] = "ascii"
_ASCII_UNIT: Final[str] = "\x1f"
_ASCII_RECORD: Final[str] = "\x1e"


def _tcl_cells(text: str, at: int, end: int) -> list[tuple[int, int]] | None:
    """The content spans of the line ``text[at:end]`` read as a row of sqlite3's ``tcl`` mode (:data:`_TCL_CELL`s
    with one blank between, a carriage return after the last allowed); None when it is none."""
    cells: list[tuple[int, int]] = []
    while True:
        cell = _TCL_CELL.match(text, at, end)
        if cell is None:
            return None
        cells.append(cell.span(1))
        at = cell.end()
        if not text.startswith(" ", at) or at >= end:
            return cells if not text[at:end].rstrip("\r") else None
        at += 1


def _sqlite_ascii(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """sqlite3's ``ascii`` mode from ``at``, its headers on: the header's record (two or more names between unit
    separators, a record separator after it), then each record of as many cells, the credential columns' values
    taken, to the first that is none (the prompt after the last separator). A record is read within its line: one
    holding a line break (a value of many lines) ends the reading. Returns where the records end."""
    end = _line_end(text, at)
    record = text.find(_ASCII_RECORD, at, end)
    if record == -1:
        return at
    names = text[at:record].split(_ASCII_UNIT)
    columns = _credential_columns(names) if len(names) > 1 else []
    at = record + 1
    while columns and (record := text.find(_ASCII_RECORD, at, end)) != -1:
        deadline.check()
        cells: list[tuple[int, int]] = []
        start = at
        while (unit := text.find(_ASCII_UNIT, start, record)) != -1 and len(cells) < len(names):
            cells.append((start, unit))
            start = unit + 1
        cells.append((start, record))
        if len(cells) != len(names):
            return at
        _take_columns(text, cells, columns, found)
        at = record + 1
    return at


def _sqlite_inserts(text: str, at: int, found: list[Finding], deadline: Deadline,
                    tables: dict[str, list[str]] | None = None) -> int:
    """sqlite3's ``insert`` mode from ``at``: each ``INSERT INTO T(COLUMNS) VALUES(...);`` line (its headers on;
    :data:`_SQLITE_INSERT`), or ``INSERT INTO T VALUES(...);`` of a table the session showed created (``tables``,
    its columns by name), the strings of its credential columns taken, to the first line that is none. Returns where
    the lines end."""
    length = len(text)
    while at < length and text[at] != "\x00":
        deadline.check()
        end = _line_end(text, at)
        insert = _SQLITE_INSERT.match(text, at, end)
        if insert is None:
            return at
        if insert.group(2) is not None:
            names = [name.strip().strip('"') for name in insert.group(2).split(",")]
        elif tables and _table_key(insert.group(1)) in tables:
            names = tables[_table_key(insert.group(1))]
        else:
            return at
        row = _sql_literals(text, insert.end(), end)
        if row is None or len(row[0]) != len(names) or text[row[1] : end].rstrip("\r") != ");":
            return at
        _take_columns(text, row[0], _credential_columns(names), found)
        if end >= length:
            return end
        at = end + 1
    return at
