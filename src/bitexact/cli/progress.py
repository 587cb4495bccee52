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
def progress_bar(description: str, total: int) -> Iterator[Callable[[int], None]]:
    """Yield ``update(done)``; draws a transient bar when stderr is a terminal and the work is long."""
    if total < MIN_ITEMS or not err_console.is_terminal:
        yield lambda done: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)
