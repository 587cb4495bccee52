"""`bitexact export` and `bitexact verify`."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.markup import escape

from bitexact.capture.clause import capture_clause
from bitexact.cli.context import AppContext, pass_app
from bitexact.config import unusable_home
from bitexact.cli.output import (
    EXIT_FAIL,
    EXIT_INPUT,
    EXIT_OK,
    console,
    fail,
    json_option,
    plain,
    print_json,
    tick,
    write_exit_code,
)
from bitexact.cli.progress import progress_bar, working
from bitexact.config import SettingError
from bitexact.errors import (
    BitExactError,
    KeyMaterialError,
    RunNotFoundError,
    StateRefusedError,
    StoreBusyError,
    StoreError,
    StrictJSONError,
)
from bitexact.evidence.export import (
    FORMATS,
    BundleTooLargeError,
    EntriesUnreadError,
    RunSource,
    UnappliedClaimError,
    export_run,
    streamed_bundle,
)
from bitexact.evidence.paths import parse_field
from bitexact.evidence.verify import (
    ClauseProviderFactory,
    InputError,
    Verdict,
    read_pins,
    verify_cli,
)
from bitexact.evidence.verify.bundle import EMPTY_CHAIN
from bitexact.evidence.verify.jsonl import verify_entries
from bitexact.evidence.verify.verdict import ascii_line, failed

if TYPE_CHECKING:
    from bitexact.capture.opening import OpeningResult
    from bitexact.crypto import SigningKey

# The capture policy, the openings and the write path's audit are imported where they are used:
# `bitexact verify FILE` needs none of them (see COMMANDS in bitexact.cli).

STORE_FORM = "store"
"""The verdict form of ``verify RUN`` when the store does not open: it fails (exit 1), the input was read."""

EXIT_NO_MATCH = 2
"""``verify --open``: the candidate was tested and is not the value."""

_HEX_KEY = re.compile(r"[0-9a-fA-F]{64}")
"""An ed25519 public key as a pin spells it: 64 hex characters (bundle spec §2.2), either case."""


@click.command("export")
@click.argument("run_id")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the bundle.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True,
              help="json: one document; jsonl: streamed entry by entry (memory flat in the run's entries; the signed header holds its checkpoints); dsse: an in-toto envelope.")
@click.option("--redact", "redact", multiple=True, metavar="STEP:PATH",
              help="Strip a value from the exported copy only (repeatable). The signature binds the "
                   "markers; a recorder-pinned verify will refuse it, as the spec requires.")
@json_option("Print the result as JSON.")
@pass_app
def export_command(app: AppContext, run_id: str, output: Path, fmt: str, redact: tuple[str, ...], as_json: bool) -> None:
    """Export a run as a signed bundle anyone can verify offline.

    \b
    Examples:
      bitexact export run-20261129T213000-1f3a9c2b -o run.bundle.json
      bitexact export RUN -o run.jsonl --format jsonl
      bitexact export RUN -o shared.json --redact 3:result.policy

    \b
    Exit codes:
      0  written
      1  refused or failed, the arguments good: redaction claims not yet applied, no recorder key
         (`bitexact keys init`) or one that does not load, the store does not open or the run
         does not read back (damaged, kept locked), the disk refused the bundle (full, an I/O error)
      2  the arguments must change: no such run; -o or --redact cannot be used (one of BitExact's
         own files, not writable, a path the run does not hold); a run too large for --format json
         or dsse (use --format jsonl)
    """
    app.refuse_own_file(output)
    try:
        from bitexact.recording.audit import pending_claims

        app.run_store.run(run_id)  # no store holds no run: said without making an empty one
        pending = pending_claims(app.store, run_id)
        if pending:
            # A claim whose values are still stored: the bundle would carry what the chain says is
            # destroyed, and fail verification for it.
            fail(f"run {run_id} has {len(pending)} redaction claim(s) not yet applied; a bundle now would "
                 "carry the claimed values", code=EXIT_FAIL, hint=f"Finish them: bitexact redact --resume {run_id}")
        source = RunSource.from_store(app.store, run_id)
        key = _signing_key(app)
        passes = 2 if fmt == "jsonl" else 1  # jsonl reads the run twice: head and markers, then the lines
        # The bar's description is markup: a run id may hold brackets.
        with progress_bar(f"exporting {escape(run_id)}", app.store.run(run_id).steps * passes,
                          for_script=as_json) as update:
            result = export_run(_counted(source, update), output, key, fmt=fmt, redact=redact)
    except RunNotFoundError:
        app.no_run(run_id)
    except UnappliedClaimError as exc:  # a redaction began after the check above, and has not landed
        fail(str(exc), code=EXIT_FAIL, hint=f"Finish it (or wait for it): bitexact redact --resume {run_id}")
    except BundleTooLargeError as exc:
        fail(str(exc), code=EXIT_INPUT, hint=f"bitexact export {run_id} -o {output.with_suffix('.jsonl')}"
                                             " --format jsonl")
    except (SettingError, StoreError):  # a setting, or a store that does not open or read back (a locked or
        raise  # damaged one): the operation failed, exit 1 as in every command (cli._Group says it)
    except StateRefusedError as exc:  # no recorder key, or one that does not load: `keys init` (its message says)
        fail(str(exc), code=EXIT_FAIL)
    except OSError as exc:  # -o cannot be used (2), or the disk refused the write: full, an I/O error (1)
        fail(str(exc), code=write_exit_code(exc))
    except (BitExactError, ValueError) as exc:  # -o or --redact cannot be used
        fail(str(exc), code=EXIT_INPUT)
    if as_json:
        print_json({"path": str(result.path), "format": result.format, "run_id": result.run_id,
                    "steps": result.steps, "head_hash": result.head_hash, "key_id": key.key_id,
                    "public_key": key.public_hex,
                    "redacted_fields": result.redacted_fields, "bytes": result.bytes_written})
        return
    console.print(
        f"{tick()} exported [cyan]{escape(run_id)}[/] ({result.steps} steps, {result.format}) to"
        f" [bold]{escape(str(result.path))}[/]"
        f"\n  head {result.head_hash}\n  signed by key {key.key_id} ({key.public_hex})"
        + (f"\n  {result.redacted_fields} field(s) redacted in this bundle (in the store or by --redact)" if result.redacted_fields else ""),
        soft_wrap=True,  # the head and the key are copied from their lines whole: never wrapped
    )


def _signing_key(app: AppContext) -> SigningKey:
    """The key a bundle is signed with: never one the store marks compromised (keys/ restored from a backup
    older than `keys rotate --compromised`). A store whose list of keys does not read (a damaged page) leaves
    the key files' current key, with one warning line on stderr, as `keys show` does: the run itself may read
    well, and refusing its bundle for the keys table's page is no help."""
    from bitexact.recording.recorder_keys import current_key

    try:
        return current_key(app.keys, app.store)
    except StoreBusyError:
        raise  # locked: said as in every command (exit 1)
    except StoreError as exc:
        click.echo(f"warning: the store's list of keys could not be read ({exc}): the bundle is signed with"
                   f" {app.keys.current_path} unchecked against the store's compromise marks; `bitexact health`"
                   " says what else is wrong", err=True)
        return app.keys.current()


def _counted(source: RunSource, update: Callable[[int], None]) -> RunSource:
    """The same run, reporting each entry read to ``update`` (a progress bar)."""
    read = 0

    def entries() -> Iterator[dict[str, Any]]:
        nonlocal read
        for entry in source.entries():
            read += 1
            update(read)
            yield entry

    refresh = source.refresh
    return RunSource(source.run_id, entries, source.checkpoints, source.anchors,
                     refresh=(lambda: _counted(refresh(), update)) if refresh is not None else None)


_SPINNER_BYTES = 16 * 1024 * 1024
"""A bundle this large (a second or more to verify) shows a spinner on a terminal while it is verified."""


def _size(target: str) -> int | None:
    """The size of the file (or directory entry) ``target`` names, or None when it names nothing on disk (a
    name the file system cannot hold, too long or with a NUL, names nothing). One ``stat``: whether TARGET is a
    file or a run id, and whether a spinner shows, were asked by two."""
    try:
        return os.stat(target).st_size
    except (OSError, ValueError):
        return None


def _verdict_json(verdict: Verdict) -> dict[str, object]:
    return {"ok": verdict.ok, "line": verdict.line, "message": verdict.message, "run_id": verdict.run_id,
            "steps": verdict.steps, "sealed": verdict.sealed, "signed": verdict.signed,
            "redacted": verdict.redacted, "prov_counts": verdict.prov_counts, "form": verdict.form,
            "scope_lines": list(verdict.scope_lines)}


def _revoked_keys() -> dict[str, str]:
    """The policy in force's revoked capture keys, for the clause to name fields under them.

    Read from the policy document without loading any key: the verifier
    rarely holds the capture key, and naming a revoked key id needs none. A
    policy that cannot be read names no revoked key, and says so on stderr.
    """
    from bitexact.capture import PolicyError
    from bitexact.capture.policy import revoked_in_force

    try:
        return revoked_in_force()
    except PolicyError as exc:
        click.echo(f"warning: revoked capture keys not checked: {exc}", err=True)
        return {}


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _on_terminal(line: str) -> str:
    """``line`` as a terminal shows it: control characters as ``\\xNN``.

    The spec's line is ASCII by ``backslashreplace`` only, so a bundle's own
    keys can put ESC sequences in it (retitling or clearing the terminal it is
    read on). A pipe or file still gets the spec's line byte for byte, which
    is what scripts comparing verifiers read; a person's terminal never runs
    what a bundle carries.
    """
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", line)


def _print_verdict(verdict: Verdict) -> None:
    """The verdict line alone on stdout (bundle spec §12.3: exactly one line); the scope line on stderr."""
    # color=True: click would otherwise strip what looks like colour codes from a pipe, and the line is the spec's.
    click.echo(_on_terminal(verdict.line) if sys.stdout.isatty() else verdict.line, color=True)
    for line in map(ascii_line, verdict.scope_lines):
        click.echo(_on_terminal(line) if sys.stderr.isatty() else line, err=True, color=True)


@click.command("verify")
@click.argument("target")
@click.option("--expect-key", metavar="HEX", help="Require a bundle signature by this ed25519 public key.")
@click.option("--expect-recorder-key", metavar="HEX",
              help="Require checkpoints signed by this recorder key covering the head (the recorder tier).")
@click.option("--trust-file", help="A trust file (bitexact keys trust-file) listing bundle and recorder keys.")
@click.option("--expect-tsa", help="Pin the RFC 3161 timestamp authority certificate (PEM or DER).")
@click.option("--require-sealed", is_flag=True, help="Fail a run whose end is not attested (no run_end).")
@click.option("--open", "open_field_ref", metavar="STEP:PATH",
              help="Test --candidate-file against this hash-only field (needs the capture key it was committed "
                   "under). Recorded on the run's custody chain first.")
@click.option("--open-withheld", "open_withheld_step", metavar="STEP",
              help="Test the exact bytes of --candidate-file against what the gap at STEP withheld.")
@click.option("--candidate-file", type=click.Path(path_type=Path),  # a directory is refused as unreadable: exit 1
              help="The candidate: the value as JSON for --open, exact bytes for --open-withheld.")
@click.option("--by", "by", help="Who is testing the candidate (recorded on the custody chain).")
@json_option("Print the verdict as JSON.")
@pass_app
def verify_command(app: AppContext, target: str, expect_key: str | None, expect_recorder_key: str | None,
                   trust_file: str | None, expect_tsa: str | None, require_sealed: bool,
                   open_field_ref: str | None, open_withheld_step: str | None, candidate_file: Path | None,
                   by: str | None, as_json: bool) -> None:
    """Verify a bundle file (or a run in the store) and print the verdict.

    TARGET is a bundle file (json, jsonl or dsse), a bag directory, or a run id
    in the store. Prints exactly one OK:/FAIL: line on stdout, the line any
    conforming verifier prints; when the run declares what its capture policy
    did, a capture clause ends it and the verdict's scope follows on stderr.

    With --open STEP:PATH (or --open-withheld STEP), --candidate-file F and
    --by NAME, TARGET is a run in the store: once it verifies, the test is
    recorded on its custody chain, then made.

    \b
    Examples:
      bitexact verify run.bundle.json --trust-file trust.json --require-sealed
      bitexact verify run.jsonl --expect-key "$(bitexact keys show --json | jq -r '.[0].public_key')"
      bitexact verify RUN --open 4:on_behalf_of --candidate-file candidate.json --by alice

    \b
    Exit codes:
      0  verifies
      1  does not verify, or the store does not open (a locked or damaged store)
      2  cannot read the input: a missing or unreadable bundle, trust file or TSA pin, a key pin
         that is not 64 hex characters, a TARGET that is neither a file nor a stored run, a
         recorder key on this host that does not load
    With --open:
      0  the candidate matches
      1  the run does not verify, or the test cannot be made (not hash-only, committed with no
         capture key, the key not held, the record not written, an opening option missing, a
         --candidate-file that cannot be read, is over 256 MiB, is not JSON for --open, or is a
         named pipe nothing was written into)
      2  the candidate does not match (only that: 2 is not "cannot read the input" here)
    """
    opening = open_field_ref is not None or open_withheld_step is not None
    if not target.strip():
        # Path("") is the working directory: it would be verified as a bag nobody named.
        _refuse_argument("TARGET is empty: name a bundle file, a bag directory or a run id", opening, as_json)
    for flag, pin in (("--expect-key", expect_key), ("--expect-recorder-key", expect_recorder_key)):
        if pin is not None and _HEX_KEY.fullmatch(pin) is None:
            # Not a key at all (a truncated paste): a verdict would read "not the trusted key", as if the
            # bundle were someone else's.
            _refuse_argument(f"{flag} {pin!r} is not an ed25519 public key: give its 64 hex characters", opening,
                             as_json)
    options: dict[str, Any] = {"expect_key": expect_key, "expect_recorder_key": expect_recorder_key, "trust_file": trust_file,
               "expect_tsa": expect_tsa, "require_sealed": require_sealed}
    clauses = [capture_clause(_revoked_keys)]
    refused: str | None = None
    if not opening and (candidate_file is not None or by is not None):
        # Never silently ignored: a test the user asked for would look made.
        message = "--candidate-file and --by test a field: give them with --open STEP:PATH or --open-withheld STEP"
        if not as_json:
            fail(message, code=EXIT_FAIL)
        refused = message  # --json: still one document, the verdict with the reason no test was made
    if opening:
        try:
            withheld_step = _check_opening_options(open_field_ref, open_withheld_step, candidate_file, by)
            if not _in_store(app, target):
                raise _OpeningRefused(f"--open tests a run in the store (its custody chain is there); {target!r} is"
                                      f" not a run in {app.home}")
        except (SettingError, StoreBusyError):  # reported as in every command (exit 1)
            raise
        except (_OpeningRefused, StoreError) as exc:  # StoreError: the store exists and does not open
            if not as_json:
                fail(str(exc), code=EXIT_FAIL)
            refused = str(exc)  # --json: still one document, the verdict with the reason no test was made
    # --open tests a stored run's field, so it is the stored run that is verified, whatever file
    # happens to share its name in the working directory.
    size = None if opening and refused is None else _size(target)
    try:
        stored = (opening and refused is None) or (size is None and _in_store(app, target))
    except (SettingError, StoreBusyError):  # a setting, or a store another process keeps locked (as it is
        raise  # upgraded on open): reported as in every command (exit 1), never as "no such file"
    except StoreError as exc:  # a store that does not open cannot say TARGET is no run: its error is the reason
        # Exit 1, as every command reports a store that does not open: the input was read, the store failed.
        verdict = failed(f"no such file: {target}, nor a run that can be looked up: {exc}", form=STORE_FORM)
    else:
        if stored:
            verdict = _verify_stored(app, target, clauses=clauses, for_script=as_json, **options)
        else:
            # The file verifier reports nothing until its verdict: some 2 s per 46 MiB of JSONL.
            with working(f"verifying {escape(plain(target))}", for_script=as_json or (size or 0) < _SPINNER_BYTES):
                verdict = verify_cli(target, clauses=clauses, **options)
    if refused is not None:
        print_json({**_verdict_json(verdict), "opening": None, "error": refused})
        sys.exit(EXIT_FAIL)
    if not opening:
        if as_json:
            print_json(_verdict_json(verdict))
        else:
            _print_verdict(verdict)
        sys.exit(EXIT_INPUT if verdict.form == "input" else verdict.exit_code())
    if not verdict.ok:
        if as_json:
            print_json({**_verdict_json(verdict), "opening": None,
                        "error": "the run does not verify, so no test was made"})
        else:
            _print_verdict(verdict)
        sys.exit(EXIT_FAIL)
    if not as_json:
        _print_verdict(verdict)
    assert candidate_file is not None and by is not None
    try:
        result = _open(app, target, open_field_ref, withheld_step, candidate_file, by)
    except (BitExactError, ValueError) as exc:  # the test cannot be made: exit 1, the verdict still printed
        if as_json:
            print_json({**_verdict_json(verdict), "opening": None, "error": str(exc)})
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({**_verdict_json(verdict), "opening": result.to_json()})
    else:
        what = f"step {result.step} {result.path}" if result.path is not None else \
            f"the content the gap at step {result.step} withheld"
        word = "MATCH" if result.matched else "NO MATCH"
        click.echo(f"{word}: the candidate {'is' if result.matched else 'is not'} {what}"
                   f" (capture key {result.key_id}; test recorded as custody record {result.custody_seq},"
                   f" by {by})")
    sys.exit(EXIT_OK if result.matched else EXIT_NO_MATCH)


def _refuse_argument(message: str, opening: bool, as_json: bool) -> NoReturn:
    """An argument verify cannot use: exit 2, "cannot read the input" (with --json, the FAIL verdict as JSON).
    Under --open, 2 means "tested, no match", so it is 1 there, and with --json still one document: the verdict
    with the reason no test was made."""
    if not opening:
        # The FAIL verdict, as for a trust file that cannot be read: one line on stdout (bundle spec §12.3),
        # or with --json that verdict as JSON.
        verdict = failed(message, form="input")
        if as_json:
            print_json(_verdict_json(verdict))
        else:
            _print_verdict(verdict)
        sys.exit(EXIT_INPUT)
    if as_json:
        print_json({**_verdict_json(failed(message, form="input")), "opening": None, "error": message})
        sys.exit(EXIT_FAIL)
    fail(message, code=EXIT_FAIL)


class _OpeningRefused(Exception):
    """An opening option that is wrong or missing: exit 1 (under --open, 2 means "tested, no match")."""


def _check_opening_options(field_ref: str | None, withheld_step: str | None, candidate: Path | None,
                           by: str | None) -> int | None:
    """The --open-withheld step, once every opening option is checked (:class:`_OpeningRefused` if one is not)."""
    # Refused with exit 1, never click's usage exit 2: under --open, 2 means "tested, no match".
    if field_ref is not None and withheld_step is not None:
        raise _OpeningRefused("give --open or --open-withheld, not both")
    if candidate is None:
        raise _OpeningRefused("--open and --open-withheld need --candidate-file FILE")
    if by is None or not by.strip():
        raise _OpeningRefused("--open and --open-withheld need --by NAME: every test is recorded on the custody"
                              " chain under it")
    if field_ref is not None:
        try:
            parse_field(field_ref)
        except ValueError as exc:
            raise _OpeningRefused(f"--open {exc}") from None
        return None
    assert withheld_step is not None
    try:
        step, _ = parse_field(f"{withheld_step}:gap")
    except ValueError:
        raise _OpeningRefused(f"--open-withheld {withheld_step!r}: the step must be a plain decimal index like 9") from None
    return step


def _open(app: AppContext, run_id: str, field_ref: str | None, withheld_step: int | None, candidate_file: Path,
          by: str) -> OpeningResult:
    """Make the test; raises ``BitExactError``/``ValueError`` when it cannot be made."""
    from bitexact.capture import load_policy
    from bitexact.capture.opening import open_hash_only, open_withheld_gap, parse_candidate, read_candidate_bytes

    policy = load_policy()
    raw = read_candidate_bytes(candidate_file)
    if field_ref is not None:
        step, path = parse_field(field_ref)
        return open_hash_only(app.store, run_id, step, path, parse_candidate(raw, str(candidate_file)),
                              by=by, policy=policy)
    assert withheld_step is not None
    return open_withheld_gap(app.store, run_id, withheld_step, raw, by=by, policy=policy)


def _in_store(app: AppContext, run_id: str) -> bool:
    """Whether ``run_id`` names a stored run. No store holds none: a file path that does not exist must
    still read as a missing file, and never make a store. A store that exists but does not open raises
    its :class:`StoreError`: whether it holds the run is unknown, so it is never "no such file". A data
    directory that cannot be (a file in its way) holds no store either."""
    if unusable_home(app.home) is not None:
        return False
    try:
        app.run_store.run(run_id)
    except RunNotFoundError:
        return False
    return True


def _verify_stored(app: AppContext, run_id: str, *, expect_key: str | None, expect_recorder_key: str | None,
                   trust_file: str | None, expect_tsa: str | None, require_sealed: bool,
                   clauses: Sequence[ClauseProviderFactory] = (), for_script: bool = False) -> Verdict:
    """A stored run, verified as the JSON-form bundle it exports as, with the same pins a file would get.

    Its entries stream from the store into the verifier: nothing is held in proportion to the run but
    its checkpoints and redaction markers, as for a JSONL file. On a terminal a long run draws a progress
    bar as `export` does (a run of 1,000,000 steps takes some 20 s), unless ``for_script`` (--json)."""
    try:
        pins = read_pins(expect_key=expect_key, expect_recorder_key=expect_recorder_key, trust_file=trust_file,
                         expect_tsa=expect_tsa, require_sealed=require_sealed)
    except InputError as exc:
        return failed(str(exc), form="input")
    # Signed when this host holds the recorder key; an auditor's copy of the store without it still
    # verifies (the checkpoints carry the recorder's signatures), as an unsigned bundle.
    from bitexact.crypto.keystore import CompromisedCurrentKeyError
    from bitexact.recording.recorder_keys import current_key

    try:
        key = current_key(app.keys, app.store) if app.keys.exists() else None
    except CompromisedCurrentKeyError:
        # A `keys rotate --compromised` cut short, or keys/ restored from a backup older than one (the store's
        # mark): the key must never sign again, but the run needs no new
        # signature to be verified (its checkpoints carry the recorder's): unsigned, as on an auditor's copy.
        # Refusing here failed `verify` of every stored run (exit 2) until the rotation was finished.
        key = None
    except StoreError:  # the store's keys do not read (a damaged page): whether the key leaked is unknown, so
        key = None  # unsigned; reading the run below says what is wrong with the store, if the run is hit
    except KeyMaterialError as exc:  # a key file that does not load: a verdict (--json included), not a bare error
        return failed(str(exc), form="input", run_id=run_id)
    try:
        source = RunSource.from_store(app.store, run_id)
        steps = app.store.run(run_id).steps
        if steps == 0:  # created, never written: what a verifier says of an empty chain
            return failed(EMPTY_CHAIN, form="json")
        # The JSON-form bundle the run exports as, its entries streamed from the store page by page into
        # the streaming verifier (the one a JSONL file gets): memory flat in the run's size, the verdict
        # that document gets. The store's own errors pass through it, to be said as below.
        # The bar's description is markup: a run id may hold brackets.
        with progress_bar(f"verifying {escape(run_id)}", steps, for_script=for_script) as update:
            bundle = streamed_bundle(_counted(source, update), key)  # one pass over the entries
            try:
                return verify_entries(bundle.header, bundle.entries, pins, form="json", clauses=clauses,
                                      passthrough=(EntriesUnreadError,))
            except EntriesUnreadError as exc:
                raise exc.error from None
    except SettingError:
        raise
    except StoreError as exc:  # a step missing, a damaged page: the run does not verify, said as a verdict
        return failed(_of_run(run_id, str(exc)), form="json", run_id=run_id)
    except StrictJSONError as exc:  # a stored entry that no longer parses
        return failed(f"run {run_id}: a stored entry does not read back: {exc}", form="json", run_id=run_id)


def _of_run(run_id: str, message: str) -> str:
    """``message`` naming the run it is about (docs/verifier.md: ``FAIL: run RUN: ...``): the store's own
    words for a damaged page name only its file."""
    prefix = f"run {run_id}: "
    return message if message.startswith(prefix) else prefix + message
