"""`bitexact redact` and `bitexact repair`: accountable changes to stored runs."""

from __future__ import annotations

import click
from rich.text import Text

from bitexact.capture import PolicyError
from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import (
    EXIT_FAIL,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    console,
    err_console,
    fail,
    json_option,
    ok,
    plain,
    print_json,
)
from bitexact.config import SettingError
from bitexact.errors import BitExactError, RunNotFoundError, StateRefusedError, StoreBusyError
from bitexact.recording.audit import (
    apply_pending,
    check_repair,
    pending_claims,
    record_claim,
    record_repair,
)
from bitexact.evidence.paths import parse_field
from bitexact.evidence.redaction import claim_token
from bitexact.recording.fold import fold_orphans
from bitexact.recording.journal import JournalError, journal_dir, marked_journals, unfolded_journals
from bitexact.recording.requests import (
    ENV_DUAL_CONTROL,
    ApprovalUnfinishedError,
    dual_control_required,
    finish_approval,
    unfinished_approval,
)


@click.command("redact")
@click.argument("run_id")
@click.option("--field", "fields", multiple=True, metavar="STEP:PATH",
              help="A committed path to destroy, e.g. 3:result.policy (repeatable).")
@click.option("--by", default="", help="Who is redacting (recorded on the chain).")
@click.option("--reason", default="", help="Why (recorded on the chain).")
@click.option("--resume", is_flag=True, help="Finish claims already on the chain whose removal did not complete.")
@json_option("Print the outcome as JSON: the fields redacted and the claim's step (with --resume: the "
             "claims applied and the approval carried out, if any).")
@pass_app
def redact_command(app: AppContext, run_id: str, fields: tuple[str, ...], by: str, reason: str, resume: bool,
                   as_json: bool) -> None:
    """Destroy stored values, accountably: the claim lands on the chain first.

    The redaction entry is appended (and checkpointed) before any value is
    removed, so a crash in between leaves a claim that `bitexact verify`
    reports as not applied until `bitexact redact --resume RUN` completes it.
    --resume also carries out a dual-control approval that was recorded but
    stopped before its claim (`bitexact redaction status RUN` says
    "approved, not carried out"), under the approver who gave it.
    A removal that fails after the claim landed (a full disk, a store kept
    locked) exits 1, saying the claim is recorded and naming --resume.
    Commitments and hashes never change; audit entries cannot be redacted.
    Under BITEXACT_REQUIRE_DUAL_CONTROL it refuses (exit 1): a second
    principal must approve a request instead.

    \b
    Examples:
      bitexact redact RUN --field 3:result.policy --by dpo:alice --reason "erasure request 118"
      bitexact redact RUN --resume
      bitexact redact RUN --field 3:result.excess_eur --by dpo:alice --reason "118" --json

    \b
    Exit codes:
      0  redacted (with --resume: pending claims applied or an approval carried out, or none
         pending - nothing is left to finish, which is what --resume is run for, so it is not refused)
      1  refused or failed, the arguments good (the same command works once the state changes):
         BITEXACT_REQUIRE_DUAL_CONTROL, claims to finish first (--resume), journals to fold
         first (`bitexact repair RUN`), the store kept locked or damaged, a removal that did not
         finish after its claim landed
      2  the arguments must change: no such run; a field that cannot be redacted (an audit
         entry, a path the step does not commit, one already redacted); --reason missing;
         --field with --resume
      130  Ctrl-C
    """
    try:
        app.run_store.run(run_id)
        if resume:
            if fields:
                fail("--resume finishes existing claims; do not name new fields with it", code=EXIT_INPUT)
            # An approval killed before its claim landed: the custody records say it was given, the chain
            # says nothing yet. Carried out first (claim, then removal), under the approver who gave it.
            finished = finish_approval(app.recorder().attach(run_id)) if unfinished_approval(app.store, run_id) else None
            done = apply_pending(app.store, run_id)
            if as_json:
                print_json({"run_id": run_id, "applied": [claim_token(c.step, c.path) for c in done],
                            "approval": None if finished is None else {
                                "request_id": finished.request.request_id,
                                "requested_by": finished.request.requested_by,
                                "approved_by": finished.request.decided_by,
                                "redacted": list(finished.redacted)}})
                return
            if finished is not None:
                ok(f"finished the approval of request {finished.request.request_id} (by"
                   f" {finished.request.requested_by}, approved by {finished.request.decided_by}):"
                   f" {len(finished.redacted)} field(s) redacted on {run_id}")
            if done:
                ok(f"{len(done)} pending redaction(s) applied on {run_id}")
            elif finished is None:
                console.print(Text(f"nothing pending on {run_id}"))
            return
        if dual_control_required():
            fail(f"{ENV_DUAL_CONTROL} is set: a redaction needs a second principal, and --by is typed, not "
                 "authenticated, so request the redaction in the viewer", code=EXIT_FAIL)
        missing = [option for option, given in (("--field STEP:PATH", fields), ("--by NAME", by.strip()),
                                                ("--reason TEXT", reason.strip())) if not given]
        if len(missing) > 1:
            # Named one at a time, `bitexact redact RUN` took three tries to learn what a redaction needs.
            fail(f"give {', '.join(missing[:-1])} and {missing[-1]}: a redaction names the fields it destroys, who destroys them and"
                 " why (or give --resume alone, to finish claims already on the chain)", code=EXIT_INPUT)
        if not reason.strip():
            fail("--reason is required: say why the values are destroyed", code=EXIT_INPUT)
        waiting = pending_claims(app.store, run_id)
        if waiting:
            # A redaction whose removal did not finish (a full disk, a kill): running it again would put a
            # second claim for the same values on the chain, and still leave the first one to resume.
            fail(f"run {run_id} has {len(waiting)} redaction claim(s) not yet applied "
                 f"({', '.join(claim_token(c.step, c.path) for c in waiting[:5])}); finish them first",
                 code=EXIT_FAIL, hint=f"bitexact redact --resume {run_id}")
        writer = app.recorder().attach(run_id)
        tokens = record_claim(writer, list(fields), by=by, reason=reason)
        claim_step = writer.steps - 1
        _remove_claimed(app, run_id, tokens)
    except RunNotFoundError:
        app.no_run(run_id)
    except (SettingError, PolicyError):  # a setting, not an argument: exit 1 as in every command (cli._Group)
        raise
    except (StateRefusedError, ApprovalUnfinishedError) as exc:  # the same command works after `repair`, or once
        fail(str(exc), code=EXIT_FAIL)                          # the store lets go (exit 1)
    except ValueError as exc:  # a field, a --by or a --note that cannot be used (EvidenceError, RecordError)
        fail(str(exc), code=EXIT_INPUT)
    # Any other BitExactError (a store kept locked, a full disk before the claim lands, a key that does not
    # load) is an operation that failed: cli._Group prints it and exits 1, as every command does.
    if as_json:
        print_json({"run_id": run_id, "redacted": tokens, "claim_step": claim_step})
    else:
        ok(f"redacted {len(tokens)} field(s) on {run_id}: {', '.join(tokens)}")
    _note_keyed(app, run_id, tokens)  # on stderr: with --json too


def _note_keyed(app: AppContext, run_id: str, tokens: list[str]) -> None:
    """Say on stderr which redacted fields were hash-only: their keyed commitments stay in the chain."""
    for token in tokens:
        step, path = parse_field(token)
        fields = (app.store.entry(run_id, step).get("capture") or {}).get("fields") or {}
        declared = fields.get(path)
        if isinstance(declared, dict) and declared.get("mode") == "hash-only" and declared.get("key_id"):
            err_console.print(Text(plain(
                f"note: {token} was hash-only: its keyed commitment stays in the chain (the entry's hash covers"
                f" it), so whoever holds capture key {declared['key_id']} can still test guesses at it;"
                " `verify --open` refuses it from now on, and revoking that key and destroying its file makes"
                " it untestable everywhere (`revoked_keys`, docs/capture.md, The policy file)"), style="yellow"), soft_wrap=True)


def _remove_claimed(app: AppContext, run_id: str, tokens: list[str]) -> None:
    """Step 2 of ``redact``: remove the values whose claim has just landed.

    Whatever stops it (a full disk, a store kept locked, Ctrl-C) leaves the claim on the chain and values
    still stored, which the error's own words ("disk is full", with exit 2 for bad input) would not tell:
    the operator is told the claim is recorded, why the removal failed, and how to finish it. Exit
    1 (an operation that failed, as a refused redaction exits), never 2: the input was good.
    """
    try:
        apply_pending(app.store, run_id)
        return
    except StoreBusyError:  # its "nothing was written" is not so: the claim is on the chain
        why, code = "another process kept the store locked", EXIT_FAIL
    except KeyboardInterrupt:
        why, code = "interrupted", EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - any failure, not only the store's: the claim is there all the same
        why, code = (str(exc) if isinstance(exc, BitExactError) else f"{type(exc).__name__}: {exc}"), EXIT_FAIL
    # "Did not finish", not "nothing was removed": a rewrite may have landed before the failure (the WAL left).
    fail(f"the redaction of {', '.join(tokens)} is recorded on {run_id} (its claim is on the chain), but the removal"
         f" of the values did not finish: {why}", code=code,
         hint=f"Once the cause is fixed, `bitexact redact --resume {run_id}` finishes it; until then a value still"
              " stored fails `bitexact verify` and `bitexact health` reports the run as redaction-pending.")


def _left_unfolded(app: AppContext, run_id: str) -> list[str]:
    """The run's journal files a repair left: not folded (journals, slots files holding a slot) or not settled."""
    try:
        marked = [p.name for p in marked_journals(journal_dir(app.home, run_id))]
    except JournalError:
        marked = []
    return unfolded_journals(app.home, run_id) + marked


@click.command("repair")
@click.argument("run_id")
@click.option("--by", required=True, help="The operator accepting the history as it stands.")
@click.option("--note", required=True, help="What is accepted, and why.")
@json_option("Print the outcome as JSON: the repair's step, the journals folded and any kept unfolded, "
             "and redaction claims still pending.")
@pass_app
def repair_command(app: AppContext, run_id: str, by: str, note: str, as_json: bool) -> None:
    """Record an operator's explicit acceptance of a truncated or damaged history.

    Use it for a run whose process died before sealing. First, every orphan
    journal the SDK left (large entries whose calls returned but whose write
    did not finish) is folded into the chain in record order, with a repair
    entry naming them. Then a repair entry records who accepted that the
    record ends where it does. It never invents a seal.

    \b
    Examples:
      bitexact repair RUN --by ops:alice --note "host lost power at 02:10"
      bitexact repair RUN --by ops:alice --note "host lost power at 02:10" --json

    \b
    Exit codes:
      0  recorded (a sealed run with nothing to fold too: a repair may follow a seal, accepting
         a history found damaged, so "nothing to repair" is not refused)
      1  refused or failed, the arguments good: a live process still recording the run, its
         journals directory unusable, orphans of a sealed run not in its chain, the store kept
         locked or damaged, a setting or the capture policy unusable
      2  the arguments must change: no such run, --by or --note empty, or a usage error
    """
    try:
        check_repair(by, note)  # before the fold writes anything
        app.run_store.run(run_id)
        pending = pending_claims(app.store, run_id)
        recorder = app.recorder()
        folded = fold_orphans(recorder, run_id, home=app.home, by=by)
        writer = recorder.attach(run_id)
        step = record_repair(writer, by=by, note=note, extra={"journals_folded": folded} if folded else None)
    except RunNotFoundError:
        app.no_run(run_id)
    except (SettingError, PolicyError):  # a setting, not an argument: exit 1 as in every command (cli._Group)
        raise
    except ValueError as exc:  # a field, a --by or a --note that cannot be used (EvidenceError, RecordError)
        fail(str(exc), code=EXIT_INPUT)
    # Any other BitExactError (a store kept locked, a full disk before the claim lands, a key that does not
    # load) is an operation that failed: cli._Group prints it and exits 1, as every command does.
    left = _left_unfolded(app, run_id)
    if as_json:
        print_json({"run_id": run_id, "step": step, "folded": folded, "not_folded": left,
                    "pending_redactions": [claim_token(c.step, c.path) for c in pending]})
        return
    if folded:
        ok(f"{len(folded)} orphan journal(s) folded into {run_id}: {', '.join(folded)}")
    ok(f"repair recorded at step {step} of {run_id}")
    if left:
        # Kept, not folded (sealed under another host key, damaged, another run's): their entries may be calls
        # that returned, still outside the chain, so the operator is told which rather than a bare success.
        console.print(Text.assemble(("!", "yellow"), f" {len(left)} journal file(s) could not be folded and are"
                                    f" kept (the repair entry names why): {', '.join(left)}"), soft_wrap=True)
    if pending:
        console.print(Text.assemble(("!", "yellow"), f" {len(pending)} redaction claim(s) are still pending: run "
                                    f"`bitexact redact --resume {run_id}`"), soft_wrap=True)
