"""`bitexact demo`."""

from __future__ import annotations

import shlex

import click
from rich.markup import escape
from rich.table import Table

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import console, err_console, glyph, json_option, print_json
from bitexact.cli.summary import summarize
from bitexact.demo import run_demo


@click.command("demo")
@json_option("Print the result as JSON.")
@pass_app
def demo_command(app: AppContext, as_json: bool) -> None:
    """Record a sample claims-agent run, export it signed, and verify it.

    The run has an identity, a context, a tool call, a real HTTP call to a
    claims API served on 127.0.0.1, a human decision, a marker and the seal.

    \b
    Examples:
      bitexact demo
      BITEXACT_HOME=/tmp/bx-demo bitexact demo --json

    \b
    Exit codes:
      0  recorded, exported and verified
      1  the sample run does not verify, or could not be recorded (the store does not open, the
         data directory cannot be used)
      2  a usage error, or BITEXACT_HOME (--home) is empty or a file
    """
    if as_json:
        result = run_demo(app.store, app.home)  # stdout holds the one document, nothing else
    else:
        with err_console.status(f"recording a claims-agent run{glyph('…', on=err_console)}"):
            result = run_demo(app.store, app.home)
    if as_json:
        print_json({"run_id": result.run_id, "bundle": str(result.export.path), "verdict": result.verdict.line,
                    "ok": result.verdict.ok, "public_key": result.public_key})
        raise SystemExit(result.verdict.exit_code())
    table = Table(title=f"{result.run_id}")
    for column in ("step", "kind", "prov", "summary"):
        table.add_column(column)
    for entry in app.store.entries(result.run_id):
        table.add_row(str(entry["step"]), entry["kind"], entry["prov"], escape(summarize(entry)))
    console.print(table)
    colour = "green" if result.verdict.ok else "red"
    # The verdict and the command are meant to be copied whole: never wrap them.
    console.print(f"[{colour}]{escape(result.verdict.line)}[/]", soft_wrap=True)
    path = str(result.export.path)
    console.print(f"bundle: [bold]{escape(path)}[/]", soft_wrap=True)
    # Quoted as a shell reads it: a data directory with a space (or a bracket) still copies whole.
    console.print(f"verify it anywhere: bitexact verify {escape(shlex.quote(path))} --expect-key {result.public_key} "
                  f"--expect-recorder-key {result.public_key} --require-sealed", soft_wrap=True)
    raise SystemExit(result.verdict.exit_code())
