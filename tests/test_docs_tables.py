"""Every Markdown table in the docs has as many cells in each row as in its header.

A row with one cell more or less is drawn wrong by every renderer (GitHub's table parser splits a row at each
bar not escaped as ``\\|``, inside code spans too): the cells after it slide under the wrong heading, and a figure
lands under "goal" or "met?". A text pasted into a cell that holds a bar does this without a sign in the source.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
_BAR = re.compile(r"(?<!\\)\|")
_DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")


def _cells(row: str) -> int:
    """The cells GitHub's parser reads in ``row``: its unescaped bars, less a leading and a trailing one."""
    text = row.strip()
    bars = len(_BAR.findall(text))
    return bars - 1 if text.startswith("|") and text.endswith("|") else bars + 1


def _tables(path: Path) -> list[tuple[int, list[tuple[int, str]]]]:
    """Each table in ``path``: its header's line number and its rows (line number, text), fenced code skipped."""
    lines = path.read_text(encoding="utf-8").split("\n")
    tables: list[tuple[int, list[tuple[int, str]]]] = []
    fenced = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and "|" in line and index + 1 < len(lines) and _DELIMITER.match(lines[index + 1]):
            rows = [(index + 1, line)]
            index += 2
            while index < len(lines) and lines[index].strip().startswith("|"):
                rows.append((index + 1, lines[index]))
                index += 1
            tables.append((rows[0][0], rows))
            continue
        index += 1
    return tables


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_every_row_has_its_header_cells(path: Path) -> None:
    """A row's cell count is its header's, in every table of ``path``."""
    wrong = [
        f"{path.name}:{number}: {_cells(row)} cells under a header of {_cells(rows[0][1])} (line {header})"
        for header, rows in _tables(path)
        for number, row in rows[1:]
        if _cells(row) != _cells(rows[0][1])
    ]
    assert not wrong, "\n".join(wrong)


def test_a_row_with_a_bar_in_its_text_is_caught() -> None:
    """The count this test relies on: a bar inside a code span is a cell's end, an escaped one is not."""
    assert _cells("| a | b |") == 2
    assert _cells("| a | `x | y` |") == 3
    assert _cells("| a | `x \\| y` |") == 2
