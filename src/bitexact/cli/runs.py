"""`bitexact runs` and `bitexact show`."""

from __future__ import annotations

import re
from typing import Any

import click
from rich.cells import cell_len
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import console, glyph, json_option, kept_whole, plain, print_json, print_json_streamed
from bitexact.cli.paged_table import Column, PagedTable, Part
from bitexact.cli.summary import SUMMARY_WIDTH, clock_of, summarize
from bitexact.errors import RunNotFoundError
from bitexact.evidence.vocabulary import PROVENANCES


_OTHER_COLUMNS = 48
"""The width the `runs` table's other columns need at the least (cells, padding and borders)."""


@click.command("runs")
@json_option("Print the runs as JSON.")
@pass_app
def runs_command(app: AppContext, as_json: bool) -> None:
    """List recorded runs, newest first: run, steps, sealed, started, kinds.

    \b
    Examples:
      bitexact runs
      bitexact runs --json | jq -r '.[].run_id'

    \b
    Exit codes:
      0  listed (no runs too)
      1  the store does not open (damaged, kept locked) or the data directory cannot be used
      2  a usage error, or BITEXACT_HOME (--home) is empty or a file
    """
    try:
        runs = app.run_store.runs()
    except RunNotFoundError:  # a data directory holding no store holds no run: said, and nothing made
        runs = []
    if as_json:
        print_json(
            [
                {"run_id": r.run_id, "steps": r.steps, "sealed": r.sealed, "started_at": r.started_at,
                 "updated_at": r.updated_at, "head_hash": r.head_hash, "kinds": r.kinds, "meta": r.meta}
                for r in runs
            ]
        )
        return
    if not runs:
        console.print(f"No runs in {escape(str(app.home))} yet. Record one with [bold]bitexact demo[/].", soft_wrap=True)
        return
    table = Table(title=Text(f"Runs in {app.home}"))
    # A run id stays on one line while that leaves the other columns room, else it folds. A kind longer
    # than its column folds too: "human_decision×2" cut short lost its count.
    whole = kept_whole((r.run_id for r in runs), _OTHER_COLUMNS)
    table.add_column("run", style="cyan", no_wrap=whole, overflow="fold")
    table.add_column("steps", justify="right", no_wrap=True)
    table.add_column("sealed", no_wrap=True)
    table.add_column("started", overflow="fold")  # cut with "…", a narrow terminal lost the time and the day
    table.add_column("kinds", overflow="fold")
    for r in runs:
        kinds = ", ".join(f"{k}{glyph('×')}{n}" if n > 1 else k for k, n in sorted(r.kinds.items()))
        table.add_row(Text(r.run_id), str(r.steps), "[green]yes[/]" if r.sealed else "[yellow]no[/]",
                      r.started_at[:19].replace("T", " "), escape(kinds))
    console.print(table)


_WHOLE = re.compile(r"-?[0-9]+")


class _Count(click.ParamType):
    """A step number or a number of steps: a whole decimal number, 0 or more (click exits 2 naming the option)."""

    name = "count"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        if _WHOLE.fullmatch(text) is None:
            self.fail(f"{value!r} is not a whole number: give 0 or more (a step, or a number of steps)", param, ctx)
        if int(text) < 0:
            self.fail(f"{value} is negative: give 0 or more (steps are numbered from 0)", param, ctx)
        return int(text)


_COUNT = _Count()


@click.command("show")
@click.argument("run_id")
@click.option("--from", "start", type=_COUNT, default=0, metavar="STEP",
              help="The first step shown (default 0). Past the run's last step: nothing shown, exit 0.")
@click.option("--limit", type=_COUNT, default=None, metavar="N",
              help="Show at most N steps (default: every step from --from to the end).")
@json_option("Print every step with its data as JSON.")
@pass_app
def show_command(app: AppContext, run_id: str, start: int, limit: int | None, as_json: bool) -> None:
    """Show a run's steps: step, kind, prov, ts and a one-line summary.

    Rows are printed as they are read from the store, a page at a time: the
    first appear at once however long the run, and memory stays flat. --from
    and --limit show a slice of the run (the table or the JSON's "steps").

    \b
    Examples:
      bitexact show run-20261129T213000-1f3a9c2b
      bitexact show RUN --from 5000 --limit 100
      bitexact show RUN --json | jq '.steps[] | select(.kind == "tool_call")'
      bitexact show RUN --json --from 100000 --limit 1000

    \b
    Exit codes:
      0  shown (a --from past the end shows no step)
      1  the store does not open or the run does not read back (damaged, kept locked); the steps
         before a damaged one are printed, and with --json the document stops there, incomplete
      2  no such run, or a usage error (--from or --limit negative or not an integer)
    """
    try:
        info = app.run_store.run(run_id)
    except RunNotFoundError:
        app.no_run(run_id)
    # Fixed at the head read above, as the title says: steps a writer appends meanwhile are not shown.
    first = min(start, info.steps)
    stop = info.steps if limit is None else min(info.steps, first + limit)
    entries = app.store.entries(run_id, first, stop) if first < stop else iter(())
    if as_json:
        print_json_streamed(
            {"run_id": run_id, "sealed": info.sealed, "head_hash": info.head_hash}, "steps",
            ({"step": e["step"], "kind": e["kind"], "prov": e["prov"], "ts": e["ts"], "ctx": e.get("ctx"),
              "summary": summarize(e, printed=False), "data": e.get("data", {}), "redacted": e.get("redacted", [])}
             for e in entries))
        return
    dot = glyph("·")
    title = f"{run_id} {dot} {info.steps} steps {dot} {'sealed' if info.sealed else 'unsealed'}"
    if first >= stop:
        why = f"--limit {limit} shows none" if start < info.steps else \
            f"no step from step {start}" + (f" (its steps are 0 to {info.steps - 1})" if info.steps else "")
        console.print(Text(f"{title}: {why}"), soft_wrap=True)
        return
    if first > 0 or stop < info.steps:
        title += f" {dot} showing {first} to {stop - 1}"
    _steps_table(title, info.kinds, stop - 1, "redaction" in info.kinds).print(
        (str(e["step"]), plain(str(e["kind"])), plain(str(e["prov"])), clock_of(e["ts"]), _summary_cell(e))
        for e in entries)


_PROV_WIDTH = max(map(len, PROVENANCES))
_TS_WIDTH = len("10:15:30.123")
_REDACTED_ROOM = len(" (99 redacted)")


def _steps_table(title: str, kinds: dict[str, int], last_step: int, redactions: bool) -> PagedTable:
    """The table of `show`, its widths fixed before any row is read: from the run's own bookkeeping (its
    last step, its kinds) and the bounds of the other columns (a summary is clipped to 72 characters). A
    cell wider than its column (a ts that is not ISO, wide characters) wraps inside it."""
    fixed = [
        Column("step", max(len("step"), len(str(last_step))), justify="right"),
        Column("kind", max([len("kind"), *(cell_len(plain(k)) for k in kinds)]), style="cyan"),
        Column("prov", _PROV_WIDTH),
        Column("ts", _TS_WIDTH),
    ]
    borders = sum(c.width + 3 for c in fixed) + 4  # each column's padding and border, the summary's, the edge
    natural = SUMMARY_WIDTH + (_REDACTED_ROOM if redactions else 0)
    # On a terminal the summary takes what is left of its width, as rich's table did, and wraps past it.
    summary = max(len("summary"), min(natural, console.width - borders))
    return PagedTable(console, title, [*fixed, Column("summary", summary)])


def _summary_cell(entry: dict[str, Any]) -> list[Part]:
    """The summary, and how many of the entry's fields redaction removed (in magenta)."""
    cell: list[Part] = [(summarize(entry), None)]
    if entry.get("redacted"):
        cell.append((f" ({len(entry['redacted'])} redacted)", "magenta"))
    return cell
