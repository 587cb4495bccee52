"""`bitexact sessions render|unify|sanitize|compact|validate|conformance`: views of agent session logs."""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import click
from rich.markup import escape

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, console, err_console, fail, json_option, plain, print_json, tick
from bitexact.cli.progress import working
from bitexact.cli.sessions import sessions_group
from bitexact.sessions import ENGINES
from bitexact.errors import BitExactError
from bitexact.sessions.compact import compact, format_result
from bitexact.sessions.conformance import conformance_report
from bitexact.sessions.readfile import SessionFileError
from bitexact.sessions.render import render_path
from bitexact.sessions.unify import unify
from bitexact.sessions.unify.redact import Redactor, masks_from_log
from bitexact.sessions.unify.sanitize import SanitizeReport, sanitize_tree
from bitexact.sessions.unify.sources import STDIO_PATH
from bitexact.sessions.validate import validate


def _naming(path: Path, exc: Exception) -> str:
    """The error, naming PATH: a reader's message may give only the line (`line 9: invalid JSON`)."""
    message = str(exc)
    return message if str(path) in message else f"{path}: {message}"


@sessions_group.command("render")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["markdown", "text"]), default="markdown", show_default=True,
              help="markdown (headings, fenced blocks) or plain text for a terminal or a log.")
@click.option("--engine", type=click.Choice(ENGINES), help="The engine that wrote a raw log (default: detect).")
@click.option("--budget", "budget_bytes", type=click.IntRange(min=512), help="Byte budget of the output (at least 512).")
@click.option("--show-prompts", is_flag=True, help="Include user prompts (hidden by default: they are private).")
def render_command(path: Path, fmt: str, engine: str | None, budget_bytes: int | None, show_prompts: bool) -> None:
    """Summarize an agent log or aw_session.jsonl as markdown or text (UAS section 8).

    \b
    Examples:
      bitexact sessions render ~/.codex/sessions/run.jsonl
      bitexact sessions render aw_session.jsonl --format text --budget 4096

    \b
    Exit codes:
      0  rendered
      2  PATH cannot be read or is not a session log (no event, or none of --engine's), or a
         usage error
    """
    try:
        click.echo(render_path(path, fmt, engine=engine, budget_bytes=budget_bytes,  # type: ignore[arg-type]
                               show_prompts=show_prompts, require_events=True), nl=False)
    except (BitExactError, ValueError, OSError) as exc:
        fail(_naming(path, exc), code=EXIT_INPUT)


@sessions_group.command("unify")
@click.argument("artifact_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write aw_session.jsonl (written atomically).")
@json_option("Print what was written (path, records, bytes, warnings count, collection_warnings, coverage) as JSON.")
@pass_app
def unify_command(app: AppContext, artifact_dir: Path, output: Path, as_json: bool) -> None:
    """Merge an artifact directory's agent and runtime observations into aw_session.jsonl (UAS 3.5).

    \b
    Examples:
      bitexact sessions unify artifacts/ -o aw_session.jsonl
      bitexact sessions unify artifacts/ -o aw_session.jsonl --json

    Standard output is a report for people (the data is the -o file): what was written, the sources, and
    the first 30 warnings, then a line counting the others; every warning is in the file as a
    session.collection_warning record. With --json, one document (path, records, bytes, warnings: the
    count, collection_warnings: each warning as an object of code, source, component, message, and path
    and line when it has them, as in its record; coverage).

    \b
    Exit codes:
      0  written
      2  the directory cannot be read, -o cannot be written, or a usage error
    """
    app.refuse_own_file(output)
    try:
        with working(f"unifying {escape(plain(str(artifact_dir)))}", for_script=as_json):
            report = unify(artifact_dir, output)
    except (BitExactError, ValueError, OSError) as exc:
        fail(str(exc), code=EXIT_INPUT)
    if as_json:
        print_json(report.to_json())
        return
    click.echo(report.summary(), nl=False)


class SanitizeInputError(BitExactError):
    """An argument of ``sessions sanitize`` cannot be used (exit 2); the message names the path."""


class SanitizeStoppedError(BitExactError):
    """The mask pass stopped part-way: the tree may still hold unsanitized files (exit 1)."""


def _mask_values(values: tuple[str, ...], files: tuple[str, ...]) -> tuple[list[str], int]:
    """Caller masks from ``--mask`` and ``--mask-file`` (stripped, blanks dropped) and the blank count."""
    raw = list(values)
    for name in files:
        if name == "-":
            data = sys.stdin.buffer.read()
            label = "standard input"
        else:
            try:
                data = Path(name).read_bytes()
            except OSError as exc:
                raise SanitizeInputError(f"--mask-file: cannot read {name}: {exc.strerror or exc}") from None
            label = name
        try:
            raw.extend(data.decode("utf-8").splitlines())
        except UnicodeDecodeError as exc:
            raise SanitizeInputError(
                f"--mask-file: {label} is not UTF-8 text (invalid byte at offset {exc.start})") from None
    masks = [m.strip() for m in raw if m.strip()]
    blank = sum(1 for m in values if not m.strip())
    return masks, blank


def _stdio_masks(root: Path, stdio: str | None) -> tuple[str, bool, list[str]]:
    """The stdio path relative to ``root``, whether it was found, and its ``::add-mask::`` values.

    An explicit ``--stdio`` must name a readable regular file inside
    ``root``: a missing one would silently drop its mask values.  The values
    are read here, before the pass rewrites stdio, only to keep them out of
    this command's own messages (the pass collects them itself).
    """
    relative = STDIO_PATH if stdio is None else stdio
    parts = PurePosixPath(relative.replace(os.sep, "/")).parts
    if not parts or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise SanitizeInputError(f"--stdio: {relative} must be a path inside {root} (relative, no '..')")
    path = root / relative
    if not (path.is_file() and not path.is_symlink()):
        if stdio is not None:
            raise SanitizeInputError(f"--stdio: {path} is not a regular file (its ::add-mask:: values are needed)")
        return relative, False, []
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise SanitizeInputError(f"--stdio: cannot read {path}: {exc.strerror or exc}") from None
    return relative, True, masks_from_log(text)


def _unreadable_dirs(root: Path, redactor: Redactor) -> list[str]:
    """Directories below ``root`` that cannot be listed (the pass cannot have sanitized them)."""
    failures: list[str] = []

    def note(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else root
        try:
            relative = where.relative_to(root).as_posix()
        except ValueError:
            relative = str(where)
        failures.append(redactor.text(relative or "."))

    for _directory, _dirs, _files in os.walk(root, onerror=note, followlinks=False):
        pass
    return failures


def _sanitize_json(root: Path, stdio: str, found: bool, report: SanitizeReport,
                   unreadable: list[str]) -> dict[str, Any]:
    return {
        "root": str(root),
        "stdio": {"path": stdio, "found": found},
        "masks": report.masks,
        "rewritten": list(report.rewritten),
        "unchanged": list(report.unchanged),
        "removed": [{"path": path, "reason": reason} for path, reason in report.removed],
        "unreadable": unreadable,
        "ok": not report.removed and not unreadable,
    }


def _print_sanitize(root: Path, stdio: str, found: bool, report: SanitizeReport, unreadable: list[str]) -> None:
    # The tree's file names are an agent's (an artifact it left): control characters are shown as escapes,
    # so a name cannot clear or retitle the terminal it is read on.
    def shown(text: str) -> str:
        return escape(plain(text))

    mark = tick() if not report.removed and not unreadable else "[yellow]![/]"
    console.print(
        f"{mark} sanitized [bold]{shown(str(root))}[/]: {len(report.rewritten)} rewritten, "
        f"{len(report.unchanged)} unchanged, {len(report.removed)} removed; "
        f"{report.masks} mask(s) applied, plus credential patterns", soft_wrap=True)
    source = "read" if found else "not found, no ::add-mask:: values read"
    console.print(f"  stdio {shown(stdio)} ({source})", soft_wrap=True)
    for path in report.rewritten:
        console.print(f"  [cyan]rewritten[/]  {shown(path)}", soft_wrap=True)
    for path, reason in report.removed:
        console.print(f"  [yellow]removed[/]    {shown(path)} ({shown(reason)})", soft_wrap=True)
    for path in unreadable:
        console.print(f"  [red]unreadable[/] {shown(path)} (directory could not be listed; not sanitized)",
                      soft_wrap=True)


@sessions_group.command("sanitize")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--mask", "mask_values", metavar="VALUE", multiple=True,
              help="A secret to replace with *** (repeatable). Visible in process listings: "
                   "prefer --mask-file.")
@click.option("--mask-file", "mask_files", metavar="FILE", multiple=True,
              help="Secrets, one per line ('-' reads standard input; repeatable).")
@click.option("--stdio", metavar="PATH", default=None,
              help=f"Agent stdio log inside DIR whose ::add-mask:: values are collected first "
                   f"[default: {STDIO_PATH}, skipped if absent; an explicit path must exist].")
@json_option("Print what was done as JSON (paths and counts, no values).")
@pass_app
def sanitize_command(app: AppContext, directory: Path, mask_values: tuple[str, ...], mask_files: tuple[str, ...],
                     stdio: str | None, as_json: bool) -> None:
    """Redact runtime masks in every file below DIR before it is uploaded (UAS T-UAS-060).

    The ::add-mask:: values of the agent stdio log are collected before
    anything changes; they, the --mask/--mask-file values and the recognized
    credential shapes (GitHub, GitLab, OpenAI/Anthropic, Stripe, AWS, Slack,
    Google keys, JSON Web Tokens, bearer tokens, PEM private keys: the
    table the capture policy scrubs too) become *** in every file: JSONL
    per line and JSON on decoded strings (untouched lines stay
    byte-identical), other files as text. Symbolic links are never followed:
    they are removed, as is any file that cannot be redacted, so an upload
    cannot publish it. Mask values are never printed or written anywhere.
    Surrounding whitespace of a mask is ignored, as for ::add-mask::.

    DIR must not be BitExact's data directory, lie inside it or hold it,
    nor hold the host key or a capture key file in force: such a DIR is
    refused before anything is read (exit 2), since rewriting the store or
    a key as text destroys them. Sanitize a copy of the artifacts instead.

    \b
    Examples:
      bitexact sessions sanitize /tmp/gh-aw
      echo "$TOKEN" | bitexact sessions sanitize /tmp/gh-aw --mask-file -
      bitexact sessions sanitize out/ --stdio logs/agent-stdio.log --json

    \b
    Exit codes:
      0  every file is sanitized
      1  something could not be sanitized: it was removed (listed), a
         directory could not be read, or the pass stopped (then do not upload)
      2  unusable input: DIR missing, DIR holding BitExact's own files, a mask
         file unreadable, a bad --stdio
    """
    try:
        if not directory.is_dir():
            state = "not a directory" if directory.exists() else "no such directory"
            raise SanitizeInputError(f"DIR: {directory}: {state}")
        conflict = app.own_tree_conflict(directory)
        if conflict is not None:  # refused whole, before the --mask-file or stdio is read
            raise SanitizeInputError(f"DIR: {conflict}; sanitizing it would rewrite them as text and destroy them."
                                     " Nothing was changed: sanitize a directory that holds only the artifacts"
                                     " to upload (copy them out, or point BITEXACT_HOME elsewhere)")
        masks, blank = _mask_values(mask_values, mask_files)
        relative, found, stdio_masks = _stdio_masks(directory, stdio)
    except SanitizeInputError as exc:
        fail(str(exc), code=EXIT_INPUT)
    if blank:
        err_console.print(f"[yellow]warning:[/] --mask: {blank} blank value(s) ignored")
    redactor = Redactor([*masks, *stdio_masks])
    try:
        with working(f"sanitizing {escape(plain(str(directory)))}", for_script=as_json):
            report = sanitize_tree(directory, masks, stdio=relative)
    except KeyboardInterrupt as exc:
        # Said as the stop on an error is: "interrupted" alone let a person take the tree for sanitized.
        exc.add_note(f"{plain(str(directory))} may still hold unsanitized files - do not upload it; run the"
                     " same command again to finish")
        raise
    except OSError as exc:
        where = f" at {redactor.text(os.path.relpath(exc.filename, directory))}" if exc.filename else ""
        raise SanitizeStoppedError(
            f"sanitize stopped{where}: {exc.strerror or type(exc).__name__}; {directory} may still hold "
            f"unsanitized files - do not upload it") from None
    unreadable = _unreadable_dirs(directory, redactor)
    if as_json:
        print_json(_sanitize_json(directory, relative, found, report, unreadable))
    else:
        _print_sanitize(directory, relative, found, report, unreadable)
    if report.removed or unreadable:
        if as_json:
            sys.exit(EXIT_FAIL)
        problems = []
        if report.removed:
            problems.append(f"{len(report.removed)} path(s) could not be sanitized and were removed")
        if unreadable:
            problems.append(f"{len(unreadable)} directory(ies) could not be read and were not sanitized")
        fail("; ".join(problems), code=EXIT_FAIL)


@sessions_group.command("compact")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option("Print the compact projection as JSON.")
def compact_command(path: Path, as_json: bool) -> None:
    """The bounded, lossy metadata view of a unified session (UAS 3.8).

    \b
    Examples:
      bitexact sessions compact aw_session.jsonl
      bitexact sessions compact aw_session.jsonl --json

    \b
    Exit codes:
      0  shown
      2  PATH cannot be read or is not a unified session (its first record is not the collector's
         session.format header, or a record is not JSON), or a usage error
    """
    try:
        result = compact(path)
    except (BitExactError, ValueError, OSError) as exc:
        fail(_naming(path, exc), code=EXIT_INPUT)
    if as_json:
        print_json(result)
    else:
        click.echo(format_result(result), nl=False)


@sessions_group.command("validate")
@click.argument("kind", type=click.Choice(["agent", "unified"]))
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option("Print the counts and diagnostics as one JSON document on stdout (diagnostics still go to "
             "stderr too).")
def validate_command(kind: str, path: Path, as_json: bool) -> None:
    """Check a canonical trace (agent) or a unified file against its JSON Schema.

    Record counts go to stdout, diagnostics to stderr; no payload is printed.

    \b
    Examples:
      bitexact sessions validate agent trace.json
      bitexact sessions validate unified aw_session.jsonl
      bitexact sessions validate unified aw_session.jsonl --json | jq .valid

    \b
    Exit codes:
      0  every record is valid
      1  a record fails (or the file does not read as one)
      2  no such file, or a usage error
    """
    try:
        report = validate(kind, path)  # type: ignore[arg-type]
    except SessionFileError as exc:  # a device, a FIFO, a directory, a file over 1 GiB: nothing was read
        fail(str(exc), code=EXIT_INPUT)
    if as_json:
        print_json(report.to_json())
    else:
        click.echo(report.stdout(), nl=False)
    if report.stderr():
        click.echo(report.stderr(), err=True, nl=False)
    sys.exit(report.exit_code)


@sessions_group.command("conformance")
@click.option("--tests", "tests_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=Path),
              help="Run this suite instead of the checkout's tests/sessions (its conftest.py and tests are "
                   "executed: name only a suite you trust).")
@json_option("Print the report as one JSON document: claims, every requirement's outcome and counts, "
             "failing tests, unavailable coverage and \"complete\".")
def conformance_command(tests_dir: Path | None, as_json: bool) -> None:
    """Run the session test suite and print the conformance report (class, engines, every requirement).

    The suite is the tests/sessions of the source checkout this bitexact
    runs from, never the current directory's (running it executes its
    code); --tests DIR names another one.

    \b
    Examples:
      bitexact sessions conformance
      bitexact sessions conformance --tests ./tests/sessions
      bitexact sessions conformance --json > conformance.json

    \b
    Exit codes:
      0  every claimed requirement has a test that ran, and every test passes
      1  a requirement fails, or a claimed requirement has no test or none ran
         (listed under "Unavailable coverage")
      2  the suite could not run (none in this installation, or it stopped)
    """
    try:
        # The suite runs in a pytest process of its own and reports when it is done: a minute or more.
        with working("running the session test suite (a minute or more)", for_script=as_json):
            report = conformance_report(tests_dir)
    except (RuntimeError, OSError) as exc:  # the suite could not run at all: said in one line
        fail(f"the session test suite could not run: {exc}", code=EXIT_INPUT)
    if as_json:
        print_json(report.to_json())
    else:
        click.echo(report.text(), nl=False)
    sys.exit(0 if report.complete else EXIT_FAIL)
