"""Database clients' output: the client that printed a table (sqlite3, mysql, MariaDB, psql), mysql's ``\\G``
and psql's expanded records.

docs/capture.md: "Database clients' output".
"""

from __future__ import annotations

import re
from typing import Final

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import Finding, ascii_lower
from bitexact.capture.detectors.credentials.lines import _line_end, _past_carriage_returns
from bitexact.capture.detectors.credentials.names import NAME, TOKEN, holds_credential
from bitexact.capture.detectors.credentials.sqlite import (
    _CLIENT_TABLE,
    _SQLITE_ASCII_MODE,
    _SQLITE_COLUMN_MODE,
    _SQLITE_DELIMITERS,
    _SQLITE_HTML_MODE,
    _SQLITE_INSERT_MODE,
    _SQLITE_LINE_MODE,
    _SQLITE_LIST_MODE,
    _SQLITE_QUOTE_MODE,
    _SQLITE_TCL_MODE,
    _quoted_line,
    _rows_under_header,
    _sqlite_ascii,
    _sqlite_columns,
    _sqlite_html,
    _sqlite_inserts,
    _sqlite_records,
    _tcl_cells,
)
from bitexact.capture.detectors.credentials.tables import (
    _MAX_CSV_HEADER,
    _PIPE_NULL,
    _credential_column,
    _csv_table,
    _prints_table,
)


# Rules version 12 also: a database client printing CSV or TSV with its header - ``sqlite3 -csv -header DB "select
# ..."`` (``-tabs`` too), a statement at ``sqlite> `` after ``.mode csv`` and ``.headers on`` (or a ``sqlite3 -csv
# -header`` that opened the session), ``mysql -B`` / ``--batch`` / ``-e`` (tab-separated, a header first, unless
# ``-N``), ``psql --csv`` and ``psql -c "copy ... to stdout ... header"`` in any case. Each line is found by one search
# for ``sql`` opening with its ``q`` (0.44 ms/MiB on agent text; a search opening with ``sql``'s three characters
# costs 1.3: ``s`` is frequent), each hit first tested to be inside ``sqlite``, ``mysql`` or ``psql`` (``postgresql``
# is passed by three ``startswith``, not a line's read: a MiB of ``sql`` lines cost 750 ms, 280 with the test); the
# command must open its line (after a prompt ending ``$``, ``#``, ``>`` or ``%``, or
# ``sudo``), so prose naming the flags is left.
_PRINTED_SQL = re.compile(r"q(?<=sq)l")

_SQL_CLIENTS: Final[frozenset[str]] = frozenset({"sqlite3", "mysql", "psql", "mariadb"})

# Rules version 13: MariaDB's client, ``mariadb``, prints as mysql does; its line is found by a second search, from
# the ``b`` it ends with (0.34-0.65 ms/MiB: ``b`` is rare in agent text; an alternation with the ``sql`` search cost 6).
_PRINTED_MARIADB = re.compile(r"b(?<=mariadb)")


def _sql_client(line: str) -> tuple[str, list[str]] | None:
    """The client (:data:`_SQL_CLIENTS`) a shell line runs and the words after it, when its word opens the line or
    follows a prompt (a word ending ``$``, ``#``, ``>`` or ``%``), ``sudo``, ``|``, ``&&`` or ``;``; None for any
    other line (prose)."""
    words = line.split()
    for index, word in enumerate(words):
        name = ascii_lower(word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]).removesuffix(".exe")
        if name in _SQL_CLIENTS:
            before = words[index - 1] if index else ""
            if not before or before[-1] in "$#>%" or before in ("sudo", "|", "&&", ";"):  # a prompt, a pipe
                return name, words[index + 1:]
            return None
    return None


def _line_head(text: str, at: int, reach: int = _MAX_CSV_HEADER) -> tuple[int, bool]:
    """Where the line holding ``at`` starts (after its newline or NUL, looked for at most ``reach`` characters back)
    and whether that start was found there or is the text's own: a client's printing line read whole, for the
    searches that find such a line from a word inside it."""
    floor = max(0, at - reach)
    start = max(text.rfind("\n", floor, at), text.rfind("\x00", floor, at)) + 1
    return start, start > 0 or floor == 0


def _client_prints_header(client: str, words: list[str]) -> bool:
    """Whether mysql's or psql's command line (``words`` after the client) prints a CSV or TSV table with its header:
    mysql in batch mode (``-B``, ``--batch``, or ``-e`` / ``--execute``: its output when no terminal reads it) without
    ``-N`` / ``--skip-column-names``; psql with ``--csv`` without ``-t`` / ``--tuples-only``, or a ``COPY`` to
    standard output with its ``HEADER`` (any case)."""
    batch = False
    for word in words:
        if word in ("-N", "--skip-column-names", "-t", "--tuples-only"):
            return False
        if client in ("mysql", "mariadb"):
            batch = batch or word in ("-B", "--batch") or word.startswith(("-e", "--execute")) or (
                word[:1] == "-" and word[1:2] != "-" and word[1:].isalpha() and "B" in word and "N" not in word)
        else:
            batch = batch or word == "--csv"
    return batch or (client == "psql" and _prints_table(" ".join(words), False))


# Rules version 13: names whose value is one line, never a YAML block: mysql's vertical ``\G`` output prints each column
# as ``NAME: VALUE``, its names right-aligned, so an empty ``authentication_string: `` (an ``auth_socket`` user's) stands
# above the next column's line, indented deeper. The hash is never written over lines.
_ONE_LINE_NAMES: Final[frozenset[str]] = frozenset({"authentication_string"})


def _one_line_name(name: str) -> bool:
    """Whether a ``NAME: VALUE`` line's ``name`` is one of :data:`_ONE_LINE_NAMES` (its empty value opens no YAML
    block), in any case."""
    return ascii_lower(name) in _ONE_LINE_NAMES


def _printed_below(text: str, end: int, mode: str, read: set[int], found: list[Finding], deadline: Deadline,
                   separator: str = "|", tables: dict[str, list[str]] | None = None) -> int:
    """The table a client's line ending at ``end`` prints below it, read as its ``mode`` says (sqlite3's ``line``
    records, :func:`_sqlite_records`; a delimited header and its rows, :func:`_csv_table`, for ``csv``, ``tabs`` and
    ``list`` and a client's :data:`_CLIENT_TABLE`); any other mode is left. Returns where what was read ends (``end``
    when nothing was). ``separator``: list mode's (rules version 14: ``.separator ;``, ``-separator ;``); ``tables``:
    the columns of the tables the session showed created (insert mode with its headers off)."""
    below = _past_carriage_returns(text, end + 1)  # a raw transcript's carriage return
    if mode == _SQLITE_LINE_MODE:
        return _sqlite_records(text, below, found, deadline)
    if mode == _SQLITE_COLUMN_MODE:
        return max(end, _sqlite_columns(text, below, found, deadline))
    if mode == _SQLITE_QUOTE_MODE:  # rules version 14
        return max(end, _rows_under_header(text, below, _quoted_line, found, deadline))
    if mode == _SQLITE_INSERT_MODE:
        return max(end, _sqlite_inserts(text, below, found, deadline, tables))
    if mode == _SQLITE_HTML_MODE:
        return max(end, _sqlite_html(text, below, found, deadline))
    if mode == _SQLITE_TCL_MODE:  # rules version 15
        return max(end, _rows_under_header(text, below, _tcl_cells, found, deadline))
    if mode == _SQLITE_ASCII_MODE:
        return max(end, _sqlite_ascii(text, below, found, deadline))
    listed = mode == _SQLITE_LIST_MODE  # read as list mode even when read as a CSV (a ';' in a value, its last cell)
    if (mode not in _SQLITE_DELIMITERS and mode != _CLIENT_TABLE) or (below in read and not listed):
        return end
    head_end = text.find("\n", below, below + _MAX_CSV_HEADER)
    if head_end == -1 or "\x00" in text[below:head_end]:
        return end
    rows = _csv_table(text, below, head_end, found, deadline, separator if listed else _SQLITE_DELIMITERS.get(mode),
                      listed)
    if rows == -1:
        return end
    read.add(below)  # the search goes on past its rows: a client's line among them is a row
    return rows


# Rules version 10: psql's expanded display (``\\x``): ``-[ RECORD 1 ]---`` then a line a column, ``NAME | VALUE``
# (the names padded to one width), to the next record's line, an empty line or ``(N rows)``; a line with no name
# (``         | more``) goes on the value above it (psql wraps a long or multi-line value so).
_PSQL_RECORD = "-[ RECORD "
_EXPANDED_ROW = re.compile(r"[ \t]*+([A-Za-z_][A-Za-z0-9_.\-]{0,63}+(?: [A-Za-z0-9_.\-]{1,63}+){0,3}+)?+[ \t]*+\| ?+")


def _expanded_records(text: str, deadline: Deadline, found: list[Finding]) -> None:
    """psql's expanded display's credential fields (:data:`_EXPANDED_ROW`): the value after ``|`` on each line whose
    name is a credential word, and the lines that go on it. Each record's line is found once, and each line under it
    read once."""
    at = text.find(_PSQL_RECORD)
    while at != -1:
        deadline.check()
        position = _line_end(text, at)
        taking = False
        while position < len(text) and text[position] == "\n":
            deadline.check()
            row = _EXPANDED_ROW.match(text, position + 1)
            end = _line_end(text, position + 1)
            if row is None or row.end() > end:
                break
            name = row.group(1)
            if name is not None:
                taking = _credential_column(name, [name])
            value_end = end
            while value_end > row.end() and text[value_end - 1] in " \t\r+":  # psql's "+": the value goes on below
                value_end -= 1
            value = text[row.end() : value_end]
            if taking and value and value != _PIPE_NULL and holds_credential(value):
                found.append(Finding(row.end(), value_end, TOKEN, NAME))
            position = end
        at = text.find(_PSQL_RECORD, max(position, at + 1))
