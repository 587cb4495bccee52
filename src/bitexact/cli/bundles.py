"""`bitexact export` and `bitexact verify`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import EXIT_INPUT, console, fail, print_json
from bitexact.errors import BitExactError, RunNotFoundError
from bitexact.evidence.export import FORMATS, RunSource, bundle_document, export_run
from bitexact.evidence.verify import InputError, Pins, Verdict, load_trust_file, verify_bundle, verify_cli
from bitexact.evidence.verify.verdict import failed


@click.command("export")
@click.argument("run_id")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the bundle.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True,
              help="json: one document; jsonl: streamed, constant memory; dsse: an in-toto envelope.")
@click.option("--redact", "redact", multiple=True, metavar="STEP:PATH",
              help="Strip a value from the exported copy only (repeatable). The signature binds the "
                   "markers; a recorder-pinned verify will refuse it, as the spec requires.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_app
def export_command(app: AppContext, run_id: str, output: Path, fmt: str, redact: tuple[str, ...], as_json: bool) -> None:
    """Export a run as a signed bundle anyone can verify offline.

    \b
    Examples:
      bitexact export run-20261129T213000-1f3a9c2b -o run.bundle.json
      bitexact export RUN -o run.jsonl --format jsonl
      bitexact export RUN -o shared.json --redact 3:result.account
    """
    try:
        source = RunSource.from_store(app.store, run_id)
        key = app.keys.current()
        result = export_run(source, output, key, fmt=fmt, redact=redact)
    except RunNotFoundError:
        fail(f"no run {run_id!r} in {app.home}", code=EXIT_INPUT, hint="List runs with `bitexact runs`.")
    except (BitExactError, ValueError, OSError) as exc:
        fail(str(exc), code=EXIT_INPUT)
    if as_json:
        print_json({"path": str(result.path), "format": result.format, "run_id": result.run_id,
                    "steps": result.steps, "head_hash": result.head_hash, "key_id": key.key_id,
                    "redacted_fields": result.redacted_fields, "bytes": result.bytes_written})
        return
    console.print(
        f"[green]✓[/] exported [cyan]{run_id}[/] ({result.steps} steps, {result.format}) to [bold]{result.path}[/]"
        f"\n  head {result.head_hash}\n  signed by key {key.key_id} ({key.public_hex})"
        + (f"\n  {result.redacted_fields} field(s) redacted in this copy" if result.redacted_fields else "")
    )


def _verdict_json(verdict: Verdict) -> dict[str, object]:
    return {"ok": verdict.ok, "line": verdict.line, "message": verdict.message, "run_id": verdict.run_id,
            "steps": verdict.steps, "sealed": verdict.sealed, "signed": verdict.signed,
            "redacted": verdict.redacted, "prov_counts": verdict.prov_counts, "form": verdict.form}


@click.command("verify")
@click.argument("target")
@click.option("--expect-key", metavar="HEX", help="Require a bundle signature by this ed25519 public key.")
@click.option("--expect-recorder-key", metavar="HEX",
              help="Require checkpoints signed by this recorder key covering the head (the recorder tier).")
@click.option("--trust-file", help="A trust file (bitexact keys trust-file) listing bundle and recorder keys.")
@click.option("--expect-tsa", help="Pin the RFC 3161 timestamp authority certificate (PEM or DER).")
@click.option("--require-sealed", is_flag=True, help="Fail a run whose end is not attested (no run_end).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@pass_app
def verify_command(app: AppContext, target: str, expect_key: str | None, expect_recorder_key: str | None,
                   trust_file: str | None, expect_tsa: str | None, require_sealed: bool, as_json: bool) -> None:
    """Verify a bundle file (or a run in the store) and print the verdict.

    TARGET is a bundle file (json, jsonl or dsse), a bag directory, or a run id
    in the store. Prints exactly one OK:/FAIL: line, the same line any
    conforming verifier prints. Exit codes: 0 verifies, 1 does not, 2 cannot
    read the input (a missing or unreadable bundle, trust file or TSA pin).

    \b
    Examples:
      bitexact verify run.bundle.json --trust-file trust.json --require-sealed
      bitexact verify run.jsonl --expect-key 3b6a27bc...
    """
    options = {"expect_key": expect_key, "expect_recorder_key": expect_recorder_key, "trust_file": trust_file,
               "expect_tsa": expect_tsa, "require_sealed": require_sealed}
    if not Path(target).exists() and _in_store(app, target):
        verdict = _verify_stored(app, target, **options)
    else:
        verdict = verify_cli(target, **options)
    if as_json:
        print_json(_verdict_json(verdict))
    else:
        click.echo(verdict.line)
    sys.exit(EXIT_INPUT if verdict.form == "input" else verdict.exit_code())


def _in_store(app: AppContext, run_id: str) -> bool:
    try:
        app.store.run(run_id)
    except RunNotFoundError:
        return False
    return True


def _verify_stored(app: AppContext, run_id: str, *, expect_key: str | None, expect_recorder_key: str | None,
                   trust_file: str | None, expect_tsa: str | None, require_sealed: bool) -> Verdict:
    """A stored run, exported in memory and verified with the same pins a file would get."""
    try:
        trust = load_trust_file(Path(trust_file)) if trust_file else None
        tsa = Path(expect_tsa).read_bytes() if expect_tsa else None
    except InputError as exc:
        return failed(str(exc), form="input")
    except OSError as exc:
        return failed(f"no such file: {expect_tsa} ({exc.strerror})", form="input")
    pins = Pins.from_options(expect_key=expect_key, expect_recorder_key=expect_recorder_key, trust=trust,
                             tsa_cert=tsa, require_sealed=require_sealed)
    return verify_bundle(bundle_document(RunSource.from_store(app.store, run_id), app.keys.current()), pins)
