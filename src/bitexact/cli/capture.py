"""`bitexact capture`: the capture policy in force, trying a policy, keys, and backfilling a run.

Exit codes: 0 done; 1 refused or failed (a policy that cannot be used, a
scan that could not finish, and every backfill refusal the contract lists:
policy off, no such run, a request already pending,
BITEXACT_REQUIRE_DUAL_CONTROL); 2 usage errors and unreadable input files.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from bitexact.capture import (
    CapturePolicy,
    PolicyError,
    ScrubFailedError,
    load_policy,
    read_policy_file,
    scrub_text,
)
from bitexact.capture.backfill import BackfillError, plan_backfill
from bitexact.capture.policy import PRESETS
from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, console, fail, print_json
from bitexact.errors import KeyMaterialError, RunNotFoundError
from bitexact.recording.requests import (
    ENV_DUAL_CONTROL,
    RequestError,
    dual_control_required,
    file_request,
    pending_request,
)


@click.group("capture")
def capture_group() -> None:
    """The capture policy: what the record keeps of each field.

    \b
    Examples:
      bitexact capture policy show
      bitexact capture policy check policy.json
      bitexact capture test "paid with 4111 1111 1111 1111"
      bitexact capture keygen -o /run/secrets/bitexact-capture.key
      bitexact capture backfill --run RUN --by alice
    """


def _policy_in_force() -> CapturePolicy:
    try:
        return load_policy()
    except PolicyError as exc:
        fail(str(exc), code=EXIT_FAIL, hint="Nothing records under a policy that cannot be used; fix "
             "BITEXACT_CAPTURE_POLICY (try `bitexact capture policy check FILE`).")


def _policy_from(source: str) -> CapturePolicy:
    """A policy file, or a preset name (default, pci, off) when no such file exists."""
    if not Path(source).exists() and (source in PRESETS or source == "off"):
        return load_policy(source)
    return read_policy_file(source)


def _summary(policy: CapturePolicy) -> dict[str, object]:
    if policy.off:
        return {"policy": "off", "digest": None}
    return {
        "policy": policy.name,
        "digest": policy.digest,
        "detectors": sorted(policy.detectors),
        "rules": len(policy.rules),
        "budget_ms": policy.budget_ms,
        "key_id": policy.key_id,
        "retired_key_ids": [k.key_id for k in policy.retired],
        "revoked_keys": dict(policy.revoked),
        "linkable_rules": [r.index for r in policy.rules if r.linkable],
    }


@capture_group.group("policy")
def policy_group() -> None:
    """Show the policy in force, or try one before it is deployed."""


@policy_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def policy_show(as_json: bool) -> None:
    """Print the policy in force: detectors, rules (a linkable rule says so), key id, digest."""
    policy = _policy_in_force()
    described = policy.describe()
    if as_json:
        print_json(described)
        return
    if policy.off:
        console.print("[yellow]capture policy: off[/] - runs keep every value as captured "
                      "(only an agent's hints make a field stricter)")
        return
    console.print(f"capture policy [bold]{escape(policy.name)}[/]  digest {policy.digest}")
    console.print(f"  detectors  {', '.join(sorted(policy.detectors))}")
    console.print(f"  budget     {policy.budget_ms} ms per MiB")
    console.print(f"  key        {policy.key_id or 'none (hash-only fields can never be opened)'}")
    for key in policy.retired:
        console.print(f"  retired    {key.key_id}")
    for key_id, date in sorted(policy.revoked.items()):
        console.print(f"  [red]revoked[/]    {key_id} from {date}")
    for rule in policy.rules:
        where = f" where {rule.to_json()['where']}" if rule.where else ""
        linkable = " [yellow](linkable: equal values give equal commitments)[/]" if rule.linkable else ""
        console.print(f"  rule {rule.index}     {escape(f'{rule.kind} {rule.path} -> {rule.mode}{where}')}{linkable}")


@policy_group.command("check")
@click.argument("source", metavar="FILE")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def policy_check(source: str, as_json: bool) -> None:
    """Load FILE as the recorder would (keys included); exit 0 usable, 1 not, naming the field."""
    try:
        policy = _policy_from(source)
    except PolicyError as exc:
        if as_json:
            print_json({"ok": False, "field": exc.field, "reason": exc.reason, "error": str(exc)})
            raise SystemExit(EXIT_FAIL) from None
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({"ok": True, **_summary(policy)})
        return
    if policy.off:
        console.print("[yellow]usable[/]: off - nothing is removed")
        return
    console.print(f"[green]✓[/] usable: {escape(source)} - digest {policy.digest}, {len(policy.rules)} rule(s), "
                  f"key {policy.key_id or 'none'}")


@policy_group.command("digest")
@click.argument("source", metavar="FILE")
def policy_digest(source: str) -> None:
    """Print FILE's digest (what run_meta records): keys named by id, never by where they are kept."""
    try:
        policy = _policy_from(source)
    except PolicyError as exc:
        fail(str(exc), code=EXIT_FAIL)
    if policy.digest is None:
        fail("the policy off has no digest (run_meta records `off`)", code=EXIT_FAIL)
    click.echo(policy.digest)


@capture_group.command("test")
@click.argument("text", required=False)
@click.option("--file", "file", type=click.Path(dir_okay=False, path_type=Path), help="Read the text from a file.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def capture_test(text: str | None, file: Path | None, as_json: bool) -> None:
    """Show what the policy in force scrubs from TEXT (or --file): the text as stored, and counts.

    Exit 0 scanned, 1 the policy cannot be used or the scan could not finish.
    """
    if (text is None) == (file is None):
        fail("give TEXT or --file, one of them", code=EXIT_INPUT)
    if file is not None:
        try:
            text = file.read_bytes().decode("utf-8")
        except OSError as exc:
            fail(f"--file {file}: cannot read: {exc.strerror}", code=EXIT_INPUT)
        except UnicodeDecodeError as exc:
            fail(f"--file {file}: not UTF-8 text ({exc.reason} at byte {exc.start})", code=EXIT_INPUT)
    assert text is not None
    policy = _policy_in_force()
    try:
        scrubbed, found = scrub_text(policy, text)
    except ScrubFailedError as exc:
        fail(f"the text could not be scanned: {exc}; the policy would withhold it", code=EXIT_FAIL)
    if as_json:
        print_json({"policy": policy.run_meta_value, "text": scrubbed, "found": found})
        return
    click.echo(scrubbed)
    detail = ", ".join(f"{name} {n}" for name, n in found.items())
    click.echo(f"-- {sum(found.values())} found ({detail})" if found else "-- nothing found", err=True)


@capture_group.command("keygen")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the key (64 hex characters, owner-only); never overwritten.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def capture_keygen(output: Path, as_json: bool) -> None:
    """Make a capture key file: 32 random bytes as 64 hex characters, mode 0600.

    Keep it apart from the evidence (never under the data directory): it is
    what makes a hash-only field unguessable. Name it in the policy's
    hash_only_key, or in BITEXACT_CAPTURE_KEY.
    """
    from bitexact.crypto.keysources import generate_key_file

    try:
        key_id = generate_key_file(output)
    except KeyMaterialError as exc:
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({"path": str(output), "key_id": key_id})
        return
    console.print(f"[green]✓[/] capture key written to {escape(str(output))} (owner-only)\n  key id {key_id}")


@capture_group.command("backfill")
@click.option("--run", "run_id", required=True, help="The recorded run to check against the policy in force.")
@click.option("--by", required=True, help="Who requests the redaction (a different principal approves it).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@pass_app
def capture_backfill(app: AppContext, run_id: str, by: str, as_json: bool) -> None:
    """File one dual-control redaction request for what the policy in force removes from RUN.

    Never rewrites the run: the request names every stored field the policy
    keeps hash-only or a detector finds something in, by STEP:PATH, and
    `bitexact redaction approve RUN --by OTHER` destroys them. Exit 0 filed
    (or nothing to request), 1 refused: the policy is off, the run does not
    exist, a request is already pending, or BITEXACT_REQUIRE_DUAL_CONTROL is
    set (there --by is typed, not authenticated: request it in the viewer).
    """
    try:
        required = dual_control_required()
    except ValueError as exc:
        fail(f"{exc}; refusing rather than guessing", code=EXIT_FAIL)
    if required:
        fail(f"{ENV_DUAL_CONTROL} is set: --by is typed, not authenticated, so request the redaction in the viewer",
             code=EXIT_FAIL)
    if not by.strip():
        fail("--by must name who requests the redaction", code=EXIT_FAIL)
    policy = _policy_in_force()
    if policy.off:
        fail("the capture policy is off: there is nothing to backfill against", code=EXIT_FAIL)
    try:
        waiting = pending_request(app.store, run_id)
        if waiting is not None:
            fail(f"run {run_id} already has a pending redaction request ({waiting.request_id}, by"
                 f" {waiting.requested_by}); approve or reject it first (`bitexact redaction status {run_id}`)",
                 code=EXIT_FAIL)
        plan = plan_backfill(app.store, run_id, policy)
        if not plan.fields:
            if as_json:
                print_json({"run_id": run_id, "policy": policy.digest, "request": None, "fields": []})
            else:
                console.print(f"nothing to request: {escape(run_id)} holds nothing the capture policy in force removes")
            return
        request = file_request(app.store, run_id, plan.tokens, by=by, reason=plan.reason)
    except RunNotFoundError:
        fail(f"no run {run_id!r} in {app.home}", code=EXIT_FAIL, hint="List runs with `bitexact runs`.")
    except (BackfillError, RequestError) as exc:
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({"run_id": run_id, "policy": policy.digest, "request": request.request_id,
                    "fields": [{"field": f.token, "why": f.why} for f in plan.fields]})
        return
    console.print(f"[green]✓[/] redaction request {request.request_id} filed on {escape(run_id)} by {escape(by)}: "
                  f"{len(plan.fields)} field(s) (policy {policy.digest})")
    for item in plan.fields:
        console.print(f"  {escape(item.token)}  [dim]{escape(item.why)}[/]")
    console.print(f"Nothing changes until a different principal approves: `bitexact redaction approve {escape(run_id)} "
                  "--by NAME` (or `bitexact redaction reject ...`).")
