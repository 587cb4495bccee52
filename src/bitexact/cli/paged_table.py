"""A table printed a page of rows at a time, drawn as rich draws a :class:`~rich.table.Table`.

A rich table measures every cell of every row before it prints its first
line, and renders each cell through its full layout machinery: `bitexact show`
of a run of 100,000 steps took 41 s and 400 MB before a row appeared. Here the
columns' widths are fixed before the first row, so rows are drawn as they are
read and never held past their page. A cell that fits its column on one line
(nearly all of them) is padded as a string; one that does not (wider than its
column, or holding a tab or a control character) is wrapped by rich's own
:meth:`~rich.text.Text.wrap`, as the table would wrap it. The title, the
header and the bottom edge are rendered by rich itself: the lines are those
of a rich table of the same columns, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment, Segments
from rich.style import Style
from rich.table import Table
from rich.text import Text

Part = tuple[str, str | Style | None]
"""A run of a cell's text and its style (None: the column's)."""

Cell = str | Sequence[Part]
"""A cell: plain text in the column's style, or runs of text each in its own style."""

ROWS_PER_PAGE = 100
"""Rows gathered before they are printed: the first page appears at once, and each print is one write."""

_PADDING = 1
"""Spaces on each side of a cell (rich's default ``padding=(0, 1)``)."""


@dataclass(frozen=True)
class Column:
    """One column: its header, its fixed width in cells, its justification and style."""

    header: str
    width: int
    justify: Literal["left", "right"] = "left"
    style: str | None = None


class PagedTable:
    """A rich-style table (``box.HEAVY_HEAD``) whose rows are printed in pages as they come.

    Use :meth:`print` with an iterable of rows: the head first, then every row, then the bottom edge.
    Rows are never held past their page, so memory is flat in their number.
    """

    def __init__(self, console: Console, title: str, columns: Sequence[Column],
                 rows_per_page: int = ROWS_PER_PAGE) -> None:
        self.console = console
        self.title = title
        self.columns = tuple(columns)
        self.rows_per_page = rows_per_page
        # The box the head is drawn with on this console: on a stream that is not UTF-8 (LANG=en_US.ISO-8859-1,
        # PYTHONIOENCODING=ascii) rich draws it in ASCII, and rows drawn with "│" printed as "\u2502" under it.
        self._box = box.HEAVY_HEAD.substitute(console.options, safe=console.safe_box)

    @property
    def width(self) -> int:
        """The table's width in cells: every column, its padding, and a border between and around them."""
        return sum(c.width + 2 * _PADDING for c in self.columns) + len(self.columns) + 1

    def print(self, rows: Iterable[Sequence[Cell]]) -> None:
        """Print the head, ``rows`` a page at a time, then the bottom edge."""
        frame = self._frame()
        self._emit(frame[:-1])
        page = _Page(self.console)
        try:
            for row in rows:
                self._add_row(page, row)
                if page.rows == self.rows_per_page:
                    self._print_page(page)
                    page = _Page(self.console)
        except BaseException:
            # The rows read before a row that cannot be (a damaged store page) are printed, the table left
            # open: no bottom edge says it is whole. The error is the caller's to say.
            self._print_page(page)
            raise
        self._print_page(page)
        self._emit(frame[-1:])

    def _frame(self) -> list[list[Segment]]:
        """The lines of an empty rich table of these columns: title, top edge, header, rule, bottom edge."""
        table = Table(title=Text(self.title))
        for column in self.columns:
            table.add_column(column.header, justify=column.justify, style=column.style, width=column.width)
        # At the table's own width: on a terminal narrower than it, rich would shrink the columns, and the
        # rows drawn here would no longer meet the head (the terminal wraps the lines instead).
        return self.console.render_lines(table, self.console.options.update_width(self.width), new_lines=True)

    # Printed uncropped: on a terminal narrower than the table (its fixed columns need some 62 cells), rich cut
    # every line at the terminal's edge, so the ts and summary columns were not shown at all; the terminal
    # wraps the lines instead, and nothing of a row is lost.
    def _emit(self, lines: list[list[Segment]]) -> None:
        self.console.print(Segments([segment for line in lines for segment in line]), end="", crop=False)

    def _print_page(self, page: _Page) -> None:
        self.console.print(page.segments(), end="", crop=False)

    def _add_row(self, page: _Page, row: Sequence[Cell]) -> None:
        cells = [self._cell_lines(column, cell) for column, cell in zip(self.columns, row)]
        height = max(len(lines) for lines in cells)
        for index in range(height):
            page.add(self._box.mid_left)
            for column, lines in zip(self.columns, cells):
                page.add(" ")
                if index < len(lines):
                    for text, style in lines[index]:
                        page.add(text, style)
                else:
                    page.add(" " * column.width)
                page.add(" ")
                page.add(self._box.mid_vertical if column is not self.columns[-1] else self._box.mid_right)
            page.add("\n")
        page.rows += 1

    def _cell_lines(self, column: Column, cell: Cell) -> list[list[Part]]:
        """``cell`` as the lines of its column, each exactly ``column.width`` cells wide."""
        parts: Sequence[Part] = [(cell, None)] if isinstance(cell, str) else cell
        parts = [(text, style if style is not None else column.style) for text, style in parts]
        plain = "".join(text for text, _ in parts)
        width = cell_len(plain)
        if width <= column.width and plain.isprintable():
            padding = (" " * (column.width - width), None)
            return [[padding, *parts] if column.justify == "right" else [*parts, padding]]
        # Wider than the column, or holding what rich would expand or strip (a tab, a control character):
        # wrapped as the table wraps a cell (rich's Column defaults: overflow "ellipsis", wrapping on).
        text = Text.assemble(*((part, style) if style is not None else part for part, style in parts))
        lines = text.wrap(self.console, column.width, justify=column.justify, overflow="ellipsis", tab_size=8)
        drawn: list[list[Part]] = []
        for line in lines:
            segments: list[Part] = [(s.text, s.style) for s in line.render(self.console)
                                    if s.text and s.text != "\n"]
            padding = (" " * max(0, column.width - line.cell_len), None)
            drawn.append([padding, *segments] if column.justify == "right" else [*segments, padding])
        return drawn or [[(" " * column.width, None)]]


class _Page:
    """A page of rows as rich segments: a run of unstyled pieces is joined into one. Printing a page as a
    rich :class:`~rich.text.Text` divided it again into a Text per line, most of the time a page took."""

    def __init__(self, console: Console) -> None:
        self.rows = 0
        self._console = console
        self._plain: list[str] = []
        self._segments: list[Segment] = []

    def add(self, text: str, style: str | Style | None = None) -> None:
        """Append ``text``, in ``style`` when one is given."""
        if style is None or not text:
            self._plain.append(text)
            return
        self._flush()
        self._segments.append(Segment(text, self._console.get_style(style) if isinstance(style, str) else style))

    def _flush(self) -> None:
        if self._plain:
            self._segments.append(Segment("".join(self._plain)))
            self._plain = []

    def segments(self) -> Segments:
        """The page, ready to print."""
        self._flush()
        return Segments(self._segments)
