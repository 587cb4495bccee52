"""`bitexact sessions parse` and `bitexact import session`: agent session logs, read and recorded.

Exit codes: 0 ok; 1 refused (bytes already imported, run id taken, nothing
may be recorded); 2 the input cannot be read (missing, not UTF-8, no
recognizable events, unsupported unified version) or a bad argument value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import (
    EXIT_FAIL,
    EXIT_INPUT,
    after_the_work,
    clipped,
    console,
    err_console,
    fail,
    glyph,
    json_option,
    plain,
    print_json,
    tick,
)
from bitexact.cli.progress import progress_bar, working
from bitexact.errors import BitExactError
from bitexact.sessions import ENGINES, canonical_json, parse
from bitexact.sessions.evidence import (
    UNIFIED,
    AlreadyImportedError,
    ImportResult,
    RunIdTakenError,
    SessionInputError,
    SessionSource,
    import_session,
    read_session,
)
from bitexact.sessions.parsers.errors import SessionParseError
from bitexact.sessions.readfile import SessionFileError, no_events_message, read_session_file
from bitexact.sessions.render.escape import shown
from bitexact.store import RecordError

_WIDTH = 64


def _warn_diagnostics(diagnostics: tuple[str, ...] | list[str], name: str) -> None:
    """The reader's skipped records, on stderr (positions and causes only)."""
    if not diagnostics:
        return
    # The file's name is stored in the run (it may come from a downloaded artifact): shown with escapes.
    err_console.print(f"[yellow]warning:[/] {len(diagnostics)} record(s) of {escape(shown(name))} skipped or not "
                      "mapped:", soft_wrap=True)
    for line in diagnostics:
        err_console.print(f"  {escape(plain(line))}", soft_wrap=True, markup=True)


def _read_text(log: Path) -> str:
    try:
        data = read_session_file(log)
    except SessionFileError as exc:
        fail(f"LOG: {exc}", code=EXIT_INPUT)
    except OSError as exc:
        fail(f"LOG: cannot read {log}: {exc.strerror or exc}", code=EXIT_INPUT)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(f"LOG: {log} is not UTF-8 text (invalid byte at offset {exc.start})", code=EXIT_INPUT)


def _check_run_id(run_id: str) -> None:
    """Exit 2 unless ``run_id`` passes the SDK's rule (`recording.journal.check_run_id`): an id such as
    ``-rf`` or ``../x y`` was recorded, and then every command given it read it as an option or a path."""
    from bitexact.recording.journal import RUN_ID_RULE, JournalError, check_run_id

    try:
        check_run_id(run_id)
    except JournalError:
        fail(f"--run-id {run_id!r}: {RUN_ID_RULE}", code=EXIT_INPUT)


def _clip(value: Any) -> str:
    return clipped(" ".join(str(value).split()), _WIDTH)


def _event_summary(event: dict[str, Any]) -> str:
    data = event.get("data", {})
    if not isinstance(data, dict):
        return ""
    for key in ("content", "toolName", "model", "message", "status"):
        if key in data:
            return _clip(f"{key}: {data[key]}")
    return _clip(", ".join(sorted(data)))


@click.group("sessions")
def sessions_group() -> None:
    """Agent session logs: engine logs read as canonical session traces.

    \b
    Examples:
      bitexact sessions parse ~/.claude/projects/app/session.jsonl --json
      bitexact sessions render session.jsonl --format text

    \b
    Exit codes:
      0  done
      1  what was read does not pass (validate, conformance) or could not all be sanitized
      2  the input cannot be read or is not a session log, or a usage error
    """


@sessions_group.command("parse")
@click.argument("log", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice(ENGINES), help="The engine that wrote the log (default: detect).")
@json_option("Print the canonical event array (UAS 3.1) as JSON.")
def parse_command(log: Path, engine: str | None, as_json: bool) -> None:
    """Parse an engine log into its canonical event trace.

    Skipped records are listed on stderr, by position and cause.

    \b
    Examples:
      bitexact sessions parse claude-session.jsonl
      bitexact sessions parse codex.jsonl --engine codex --json > trace.json

    \b
    Exit codes:
      0  parsed
      2  LOG cannot be read, is not UTF-8, holds no recognizable events or is in no known
         format, or a usage error
    """
    text = _read_text(log)
    try:
        result = parse(text, engine)
    except SessionParseError as exc:
        fail(str(exc), code=EXIT_INPUT)
    _warn_diagnostics(result.diagnostics, log.name)
    if not result.events:
        fail(no_events_message(str(log), result.diagnostics, engine), code=EXIT_INPUT)
    if as_json:
        try:
            document = canonical_json(result.events)
        except ValueError:  # a number past a double's range (1e999) reads as infinity, which JSON lacks
            fail(f"{log}: an event holds a number too large for a double (it reads as infinity), which the"
                 " canonical JSON array cannot carry; `bitexact import session` keeps such a number as text",
                 code=EXIT_INPUT)
        click.echo(document, nl=False)
        return
    dot = glyph("·")
    table = Table(title=f"{escape(shown(log.name))} {dot} {result.engine} {dot} {len(result.events)} events")  # title is markup
    table.add_column("#", justify="right")
    table.add_column("type", style="cyan")
    table.add_column("id")
    table.add_column("timestamp")
    table.add_column("summary")
    for index, event in enumerate(result.events):
        # The log is what an agent saw: its control characters and bidi overrides are shown as escapes.
        table.add_row(str(index), escape(plain(str(event.get("type")))), escape(plain(_clip(event.get("id", "")))),
                      escape(plain(str(event.get("timestamp", "")))), escape(plain(_event_summary(event))))
    console.print(table)


@click.group("import")
def import_group() -> None:
    """Bring outside evidence into the store, through the one write path.

    \b
    Examples:
      bitexact import session ~/.claude/projects/app/session.jsonl
      bitexact import session aw_session.jsonl --json

    \b
    Exit codes:
      0  imported
      1  refused or stopped: these bytes already imported, the run id taken, the store failed
      2  the log cannot be read (missing, not UTF-8, no recognizable events, an unsupported
         unified version), or a bad --run-id
    """


@import_group.command("session")
@click.argument("log", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice((*ENGINES, UNIFIED)),
              help="The engine that wrote the log (default: detect; a unified aw_session.jsonl is "
                   "recognized by its session.format header).")
@click.option("--run-id", "run_id", metavar="ID", help="Record under this run id (default: a new one).")
@json_option("Print the result as JSON.")
@pass_app
def import_session_command(app: AppContext, log: Path, engine: str | None, run_id: str | None,
                           as_json: bool) -> None:
    """Record an agent session log (or a unified aw_session.jsonl) as a sealed run.

    Each canonical event becomes one asserted entry (the log is the engine's
    word), with the file's SHA-256 in every entry; the capture policy applies
    as for any other recording. Importing the same bytes twice is refused,
    and no command removes a sealed import, so a forced --engine whose reader
    skips records that the detected engine reads is refused (exit 2) before
    anything is recorded, naming the detected engine.

    \b
    Examples:
      bitexact import session ~/.claude/projects/x/session.jsonl
      bitexact import session aw_session.jsonl --run-id ci-4711

    \b
    Exit codes:
      0  imported
      1  refused or stopped: these bytes already imported, the run id taken, the store failed
      2  the log cannot be read (missing, not UTF-8, no recognizable events, an unsupported
         unified version), --engine contradicted by the detected engine, or a bad --run-id
    """
    if run_id is not None:
        _check_run_id(run_id)  # before the log is read: a bad id is a usage error whatever the log holds
    try:
        # Read and parsed whole before the first entry is recorded: some 4 s for 50 MB, with no bar yet.
        with working(f"reading {escape(shown(log.name))}", for_script=as_json):
            source = read_session(log, engine=engine)
    except SessionInputError as exc:
        fail(str(exc), code=EXIT_INPUT)
    _warn_diagnostics(source.diagnostics, source.name)
    try:
        with progress_bar(f"importing {escape(shown(source.name))}", len(source.events),
                          for_script=as_json) as update:
            result = import_session(app.recorder(), source, run_id=run_id, progress=update)
    except AlreadyImportedError as exc:
        fail(str(exc), code=EXIT_FAIL)
    except RunIdTakenError as exc:
        fail(str(exc), code=EXIT_FAIL, hint="List runs with `bitexact runs`.")
    except RecordError as exc:
        if exc.field != "run_id":
            fail(f"import stopped: {exc}", code=EXIT_FAIL)
        fail(f"--run-id: {exc}", code=EXIT_INPUT)
    except BitExactError as exc:
        fail(f"import stopped: {exc}", code=EXIT_FAIL)
    with after_the_work(f"run {result.run_id} was imported and sealed ({result.steps} steps)"):
        _print_imported(result, source, as_json)


def _print_imported(result: ImportResult, source: SessionSource, as_json: bool) -> None:
    """What ``import session`` prints once the run is sealed."""
    if as_json:
        print_json({**result.to_json(), "source": source.describe()})
        return
    console.print(
        f"{tick()} imported [bold]{escape(shown(source.name))}[/] ({source.engine}, {result.events} events) as run "
        f"[cyan]{escape(result.run_id)}[/]: {result.steps} steps, sealed\n"
        f"  sha256 {source.sha256}\n  head   {result.head_hash}",
        soft_wrap=True,  # the run id and the hashes are copied from their lines whole: never wrapped
    )
    table = Table(show_header=True, box=None, padding=(0, 2))
    table.add_column("kind", style="cyan")
    table.add_column("entries", justify="right")
    for kind, count in sorted(result.kinds.items()):
        table.add_row(kind, str(count))
    console.print(table)
    console.print(f"[dim]Next: bitexact show {escape(result.run_id)} {glyph('·')} bitexact export {escape(result.run_id)}"
                  " -o bundle.json[/]", soft_wrap=True)
