"""`bitexact sessions render|unify|compact|validate|conformance`: views of agent session logs."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, fail, print_json
from bitexact.cli.sessions import sessions_group
from bitexact.errors import BitExactError
from bitexact.sessions.compact import compact, format_result
from bitexact.sessions.conformance import conformance_report
from bitexact.sessions.render import render_path
from bitexact.sessions.unify import unify
from bitexact.sessions.validate import validate


@sessions_group.command("render")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["markdown", "text"]), default="markdown", show_default=True)
@click.option("--engine", help="The engine that wrote a raw log (default: detect).")
@click.option("--budget", "budget_bytes", type=click.IntRange(min=256), help="Byte budget of the output.")
@click.option("--show-prompts", is_flag=True, help="Include user prompts (hidden by default: they are private).")
def render_command(path: Path, fmt: str, engine: str | None, budget_bytes: int | None, show_prompts: bool) -> None:
    """Summarize an agent log or aw_session.jsonl as markdown or text (UAS section 8)."""
    try:
        click.echo(render_path(path, fmt, engine=engine, budget_bytes=budget_bytes, show_prompts=show_prompts),  # type: ignore[arg-type]
                   nl=False)
    except (BitExactError, ValueError, OSError) as exc:
        fail(str(exc), code=EXIT_INPUT)


@sessions_group.command("unify")
@click.argument("artifact_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write aw_session.jsonl (written atomically).")
def unify_command(artifact_dir: Path, output: Path) -> None:
    """Merge an artifact directory's agent and runtime observations into aw_session.jsonl (UAS 3.5)."""
    try:
        report = unify(artifact_dir, output)
    except (BitExactError, ValueError, OSError) as exc:
        fail(str(exc), code=EXIT_INPUT)
    click.echo(report.summary(), nl=False)


@sessions_group.command("compact")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the compact projection as JSON.")
def compact_command(path: Path, as_json: bool) -> None:
    """The bounded, lossy metadata view of a unified session (UAS 3.8)."""
    try:
        result = compact(path)
    except (BitExactError, ValueError, OSError) as exc:
        fail(str(exc), code=EXIT_INPUT)
    if as_json:
        print_json(result)
    else:
        click.echo(format_result(result), nl=False)


@sessions_group.command("validate")
@click.argument("kind", type=click.Choice(["agent", "unified"]))
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def validate_command(kind: str, path: Path) -> None:
    """Check a canonical trace (agent) or a unified file against its JSON Schema.

    Record counts go to stdout, diagnostics to stderr; no payload is printed.
    Exits non-zero when any record fails.
    """
    report = validate(kind, path)  # type: ignore[arg-type]
    click.echo(report.stdout(), nl=False)
    if report.stderr():
        click.echo(report.stderr(), err=True, nl=False)
    sys.exit(report.exit_code)


@sessions_group.command("conformance")
def conformance_command() -> None:
    """Run the session test suite and print the conformance report (class, engines, every requirement)."""
    report = conformance_report()
    click.echo(report.text(), nl=False)
    sys.exit(0 if report.ok else EXIT_FAIL)
