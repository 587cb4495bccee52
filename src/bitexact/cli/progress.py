"""Progress bars for long work, on stderr and only on a terminal (stdout stays clean for scripts)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)

from bitexact.cli.output import err_console

MIN_ITEMS = 2000
"""Below this many items the work is quick: no bar."""


@contextmanager
def progress_bar(description: str, total: int, *, for_script: bool = False) -> Iterator[Callable[[int], None]]:
    """Yield ``update(done)``; draws a transient bar when stderr is a terminal and the work is long.

    ``for_script`` (the command's ``--json``): no bar. A script reads the document, and its stderr, which may
    still be the terminal it was started from, is for what went wrong, not for redrawn lines.
    """
    if for_script or total < MIN_ITEMS or not err_console.is_terminal:
        yield lambda done: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)


@contextmanager
def working(description: str, *, for_script: bool = False) -> Iterator[None]:
    """A transient spinner saying ``description`` (markup) on stderr, while work of unknown length runs.

    For work that reports nothing until it is done (the session test suite, some 90 s; a large artifact
    directory unified): on a terminal a person saw no sign of life. None off a terminal or ``for_script``.
    """
    if for_script or not err_console.is_terminal:
        yield
        return
    with err_console.status(description):
        yield
