"""`bitexact runs` and `bitexact show`."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import console, kept_whole, print_json
from bitexact.cli.summary import clock_of, summarize
from bitexact.errors import RunNotFoundError


_OTHER_COLUMNS = 48
"""The width the `runs` table's other columns need at the least (cells, padding and borders)."""


@click.command("runs")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
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
    table.add_column("started")
    table.add_column("kinds", overflow="fold")
    for r in runs:
        kinds = ", ".join(f"{k}×{n}" if n > 1 else k for k, n in sorted(r.kinds.items()))
        table.add_row(Text(r.run_id), str(r.steps), "[green]yes[/]" if r.sealed else "[yellow]no[/]",
                      r.started_at[:19].replace("T", " "), escape(kinds))
    console.print(table)


@click.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print every step with its data as JSON.")
@pass_app
def show_command(app: AppContext, run_id: str, as_json: bool) -> None:
    """Show a run's steps: step, kind, prov, ts and a one-line summary.

    \b
    Examples:
      bitexact show run-20261129T213000-1f3a9c2b
      bitexact show RUN --json | jq '.steps[] | select(.kind == "tool_call")'

    \b
    Exit codes:
      0  shown
      1  the store does not open or the run does not read back (damaged, kept locked)
      2  no such run, or a usage error
    """
    try:
        info = app.run_store.run(run_id)
    except RunNotFoundError:
        app.no_run(run_id)
    entries = app.store.entries(run_id)
    if as_json:
        print_json(
            {"run_id": run_id, "sealed": info.sealed, "head_hash": info.head_hash,
             "steps": [{"step": e["step"], "kind": e["kind"], "prov": e["prov"], "ts": e["ts"],
                        "ctx": e.get("ctx"), "summary": summarize(e), "data": e.get("data", {}),
                        "redacted": e.get("redacted", [])} for e in entries]}
        )
        return
    table = Table(title=Text(f"{run_id} · {info.steps} steps · {'sealed' if info.sealed else 'unsealed'}"))
    table.add_column("step", justify="right")
    table.add_column("kind", style="cyan")
    table.add_column("prov")
    table.add_column("ts")
    table.add_column("summary")
    for e in entries:
        redacted = f" [magenta]({len(e['redacted'])} redacted)[/]" if e.get("redacted") else ""
        table.add_row(str(e["step"]), e["kind"], e["prov"], escape(clock_of(e["ts"])), escape(summarize(e)) + redacted)
    console.print(table)
