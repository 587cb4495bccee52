"""Terminal output: rich tables and colour for people, JSON for scripts."""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console, ConsoleDimensions
from rich.text import Text

UNWRAPPED_WIDTH = 10_000
"""The width of output that is not read on a terminal (a pipe, a file, a CI log): wide enough that no
run id, step path or command is ever broken across lines, narrow enough that rich's layout stays cheap."""


class _Console(Console):
    """A rich console that wraps to the terminal's width on a terminal, and not at all elsewhere.

    Off a terminal rich assumes 80 columns: ``bitexact health | cat`` split a run id in two and a
    ``bitexact repair RUN --by NAME --note TEXT`` hint over four lines, which no script (nor a person
    copying from a CI log) can use. There it is :data:`UNWRAPPED_WIDTH` wide instead: a table is as wide
    as its content. ``COLUMNS``, when set, still says how wide.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if "width" not in options:
            # rich fixes the width from COLUMNS once, here; read when printing, it follows the environment the
            # command runs in (a console made at import time serves every command a process runs).
            self._width = None

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        columns = self._environ.get("COLUMNS")
        if self._width is None and not self.is_terminal and not (columns and columns.isdigit()):
            return ConsoleDimensions(UNWRAPPED_WIDTH, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    reader_may_leave: bool = False
    """Set by :func:`after_the_work` while a command prints what it did: a closed stdout then raises
    :class:`StdoutClosed` rather than rich's silent exit 1."""

    def on_broken_pipe(self) -> None:
        if self.reader_may_leave:
            raise StdoutClosed()
        super().on_broken_pipe()


class StdoutClosed(Exception):
    """The reader of standard output went away (``| head -1``) while a command printed."""


F = TypeVar("F", bound=Callable[..., Any])

# No emoji codes: recorded text such as "ops:a: note" would print ":a:" as an emoji.
console = _Console(highlight=False, emoji=False)
err_console = _Console(stderr=True, highlight=False, emoji=False)

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130
"""Ctrl-C: 128 + SIGINT, as a shell reports a command it stopped."""

_WRITE_FAILED = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO})
"""A write the disk refused: the same command works once there is room (or the disk is mended)."""


def write_exit_code(exc: OSError) -> int:
    """The exit code of an ``-o`` that could not be written: 1 when the disk failed the write (full, over quota,
    an I/O error: the arguments were good), 2 when the path cannot be used (not writable, not a file, no such
    directory: another -o is needed)."""
    return EXIT_FAIL if exc.errno in _WRITE_FAILED else EXIT_INPUT


_ESCAPED = re.compile("[\x7f-\x9f\ud800-\udfff\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Written as JSON escapes: lone surrogates (no UTF-8 reader takes them raw), and what JSON may carry raw
that a terminal acts on: C1 controls (a CSI as U+009B), line separators and bidirectional overrides
(recorded data must not drive or reorder what a reviewer reads on a terminal)."""


class _JsonDoor:
    """Whether the running command was asked for ``--json``, and whether it has printed its document.

    Set by :func:`note_json_request` and by the printers below; read by :func:`error_document`, so that a
    script asking for JSON gets one document on stdout whatever ends the command.
    """

    requested: bool = False
    printed: bool = False


def note_json_request(args: list[str]) -> None:
    """A command line starts (tests run many in one process): whether it asks for ``--json`` anywhere
    before a ``--``. Read from the whole line, so an error found before the command's own options are
    parsed (an unusable ``--home``, a path that does not exist) ends in a JSON document too."""
    options = args[: args.index("--")] if "--" in args else args
    _JsonDoor.requested = "--json" in options
    _JsonDoor.printed = False


def json_option(help: str) -> Callable[[F], F]:
    """A command's ``--json`` flag (passed as ``as_json``), with ``help`` saying what the document holds."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def print_json(value: Any) -> None:
    """Machine-readable output on stdout, one document.

    A lone surrogate (which evidence may hold) is written as its JSON escape,
    so the document stays valid JSON that any UTF-8 reader takes; so is a
    bidirectional override, which would reorder the terminal's text. On a stream
    that is not UTF-8 (a Windows console, ``PYTHONIOENCODING=cp1252``) every
    character past ASCII is a JSON escape: the stream's own fallback would
    write Python escapes, which are not JSON.
    """
    _JsonDoor.printed = True
    click.echo(_json_text(value))


def _json_text(value: Any) -> str:
    """``value`` as :func:`print_json` writes it (without the final newline)."""
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    text = json.dumps(value, indent=2, ensure_ascii=encoding != "utf8", sort_keys=False)
    return _ESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


_ITEM_INDENT = "\n    "
"""What starts each line of an item of an array that is a member of the top-level object, indented by 2."""


def print_json_streamed(value: dict[str, Any], key: str, items: Iterable[Any], *, per_write: int = 256) -> None:
    """``print_json({**value, key: list(items)})``, the same text, written ``per_write`` items at a time.

    ``key`` is the last member of the document, and ``items`` are never held
    as a list: a run of 100,000 steps printed as JSON holds one page of them.
    """
    _JsonDoor.printed = True  # a document cut short by an error is still the one this command printed
    empty = _json_text({**value, key: []})
    closing = "[]\n}"
    assert empty.endswith(closing), empty  # the array is the last member
    opening = empty[: -len(closing)] + "["
    chunk: list[str] = [opening]
    count = 0
    try:
        for item in items:
            # An item's own lines, indented as json.dumps indents it inside the document: a JSON text holds
            # no raw newline but between its tokens, so each one starts a line.
            chunk.append(("," if count else "") + _ITEM_INDENT + _json_text(item).replace("\n", _ITEM_INDENT))
            count += 1
            if count % per_write == 0:
                click.echo("".join(chunk), nl=False)
                chunk = []
    except BaseException:
        # The items read before one that cannot be (a damaged store page) are written; the document stays
        # unclosed, so no JSON reader takes it for the whole. The error is the caller's to say.
        if count:
            click.echo("".join(chunk), nl=False)
        raise
    if not count:  # what json.dumps writes for an empty array
        click.echo(empty)
        return
    chunk.append("\n  ]\n}")
    click.echo("".join(chunk))


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Control characters (but tab and newline) and bidirectional overrides, written as escapes in a message."""


def plain(text: str) -> str:
    """``text`` with control characters (but tab and newline) and bidirectional overrides as escapes.

    Messages and tables quote recorded data (an entry's keys, a page an agent
    read): it must not clear, recolour or reorder the terminal it is read on.
    """
    return _UNSAFE.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)


@contextmanager
def after_the_work(done: str) -> Iterator[None]:
    """Printing what a command did once its work is done (a run imported and sealed).

    A reader that closes standard output early (``bitexact import session LOG | head -1``) made rich exit 1
    without a word, as if the work had failed. Here the rest of the output is dropped, one note on stderr
    says that stdout closed and what was done (``done``), and the command exits 0: the work stands.
    """
    console.reader_may_leave = True
    try:
        yield
    except (StdoutClosed, BrokenPipeError):
        # Whatever is still buffered for stdout goes nowhere, so the interpreter's last flush cannot fail too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        console.quiet = True
        err_console.print(Text(f"note: standard output was closed before all was printed; {done}"), soft_wrap=True)
        sys.exit(EXIT_OK)
    finally:
        console.reader_may_leave = False


def error_document(message: str, *, code: int, hint: str | None = None) -> None:
    """Under ``--json``, when the command has printed no document yet: ``{"error": MESSAGE, "exit": CODE}``
    (and ``"hint"``) on stdout, so a script reads every outcome as JSON. Otherwise nothing."""
    if _JsonDoor.requested and not _JsonDoor.printed:
        print_json({"error": message, "exit": code, **({"hint": hint} if hint else {})})


def fail(message: str, *, code: int = EXIT_FAIL, hint: str | None = None) -> NoReturn:
    """Print an error (and what to do) to stderr and exit with ``code``.

    ``message`` and ``hint`` are printed as plain text: they quote what the user
    typed (run ids, paths, field names), and a ``[`` in those is not markup;
    control characters and bidirectional overrides in them are written as escapes.
    ``message`` is one line: a line break in it (a path's, a value's) is written
    ``\\n`` too, so a line of its own can never pass for another error or a verdict.

    Under ``--json`` stdout gets the :func:`error_document` too.
    """
    error_document(message, code=code, hint=hint)
    one_line = plain(message).replace("\n", "\\n")  # plain() already writes \r as an escape
    err_console.print(Text.assemble(("error:", "bold red"), " ", one_line), soft_wrap=True)
    if hint:
        err_console.print(Text(plain(hint), style="dim"), soft_wrap=True)
    sys.exit(code)


def kept_whole(values: Iterable[str], others: int) -> bool:
    """Whether a table column of ``values`` (run ids) can hold each on one line (``no_wrap``) while the
    other columns keep the ``others`` cells of width they need at the least (their cells, padding and
    borders). When it cannot, the column folds: kept whole past that, it took the other columns' width
    (their cells printed empty) or was cut with "…"."""
    return max(map(len, values), default=0) + others <= console.width


GLYPHS: dict[str, str] = {"✓": "ok", "·": "-", "×": "x", "…": "...", "→": "->"}
"""The glyphs the command line prints of its own, each with the ASCII it is written as on a stream that
cannot carry it (``PYTHONIOENCODING=ascii``, ``LANG=C`` with a non-UTF-8 locale), as rich draws its
tables' borders in ASCII there."""


def glyph(char: str, *, on: Console | None = None) -> str:
    """``char`` (one of :data:`GLYPHS`) if the stream of ``on`` (stdout's console by default) can encode
    it, else its ASCII stand-in.

    The streams are set to ``backslashreplace``, so recorded data a stream cannot carry prints as escapes
    (deliberately: what was recorded stays legible and exact); our own ticks and arrows printed as
    ``\\u2713`` and ``\\u2192`` there, which says nothing to a reader.
    """
    return char if _carries((on or console).encoding, char) else GLYPHS[char]


@functools.lru_cache(maxsize=64)
def _carries(encoding: str, char: str) -> bool:
    """Whether ``encoding`` can write ``char``: asked once per pair (``show`` asks it for every row)."""
    try:
        char.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def clipped(text: str, width: int) -> str:
    """``text`` if it holds at most ``width`` characters, else cut to ``width`` ending in an ellipsis
    (``...`` where the stream cannot carry ``…``, still ``width`` characters in all)."""
    if len(text) <= width:
        return text
    ellipsis = glyph("…")
    return text[: width - len(ellipsis)] + ellipsis


def ok(message: str) -> None:
    """A success line: a green tick, then ``message`` as plain text (it may quote run ids and paths)."""
    console.print(Text.assemble((glyph("✓"), "green"), " ", plain(message)), soft_wrap=True)


def tick() -> str:
    """The green tick that opens a success line, as rich markup (``ok`` in ASCII where ``✓`` cannot print)."""
    return f"[green]{glyph('✓')}[/]"
