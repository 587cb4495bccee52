"""`bitexact redaction`: decide a run's dual-control redaction request (approve, reject, status).

A request is filed by `bitexact capture backfill` (or the viewer). A
principal other than the requester approves it - which appends the
`redaction` claim (with `requested_by`) and destroys the values - or rejects
it, and nothing changes. Exit codes: 0 done; 1 refused (no pending request,
the requester deciding their own request, another decision recorded first,
or BITEXACT_REQUIRE_DUAL_CONTROL set: there --by is typed, not
authenticated, so decide in the viewer); 2 usage errors and a run id the
store does not hold.
"""

from __future__ import annotations

import click
from rich.markup import escape

from bitexact.cli.context import AppContext, pass_app
from bitexact.cli.output import EXIT_FAIL, EXIT_INPUT, console, fail, json_option, plain, print_json, tick
from bitexact.errors import BitExactError, RunNotFoundError
from bitexact.recording.requests import (
    ENV_DUAL_CONTROL,
    NoPendingRequestError,
    RedactionRequest,
    approve_request,
    dual_control_required,
    list_requests,
    reject_request,
    unfinished_approval,
)


@click.group("redaction")
def redaction_group() -> None:
    """Approve, reject or inspect a run's dual-control redaction request.

    \b
    Examples:
      bitexact redaction status RUN
      bitexact redaction approve RUN --by bob
      bitexact redaction reject RUN --by bob --reason "keep for the dispute"

    \b
    Exit codes:
      0  done
      1  refused or failed: no pending request, the requester deciding their own request,
         another decision recorded first, BITEXACT_REQUIRE_DUAL_CONTROL set, the store does not open
      2  no such run, or a usage error
    """


def _refuse_typed_principal(action: str) -> None:
    try:
        required = dual_control_required()
    except ValueError as exc:
        fail(f"{exc}; refusing rather than guessing", code=EXIT_FAIL)
    if required:
        fail(f"{ENV_DUAL_CONTROL} is set: --by is typed, not authenticated, so {action} the request in the viewer",
             code=EXIT_FAIL)


def _refuse_blank(action: str, by: str, reason: str | None = None) -> None:
    """An empty --by or --reason is a usage error (exit 2, as the help says and `redact` exits), refused before
    the run is read: said by the request layer (the same words), it exited 1, the code of a state that refuses."""
    if not by.strip():
        fail(f"--by must name who {action}s the request", code=EXIT_INPUT)
    if reason is not None and not reason.strip():
        fail(f"--reason is required: say why the request is {action}ed", code=EXIT_INPUT)


_NO_PENDING_HINT = ("`bitexact redaction status {run}` lists its requests; `bitexact capture backfill --run {run}"
                    " --by NAME` files one for what the capture policy removes.")
"""Under "no pending redaction request": where to look, and how a request comes to be."""


@redaction_group.command("approve")
@click.argument("run_id")
@click.option("--by", required=True, help="Who approves (must not be who requested).")
@json_option("Print as JSON.")
@pass_app
def redaction_approve(app: AppContext, run_id: str, by: str, as_json: bool) -> None:
    """Approve RUN's pending request: claim on the chain first, then destroy the values.

    \b
    Examples:
      bitexact redaction approve RUN --by dpo:bob

    \b
    Exit codes:
      0  approved (or an earlier approval completed)
      1  refused or failed: no pending request, the requester approving, another decision
         recorded first, BITEXACT_REQUIRE_DUAL_CONTROL set, the store does not open
      2  no such run, or a usage error (--by missing or empty)
    """
    _refuse_typed_principal("approve")
    _refuse_blank("approve", by)
    try:
        app.run_store.run(run_id)
        approval = approve_request(app.recorder().attach(run_id), by=by)
    except RunNotFoundError:
        app.no_run(run_id)
    except NoPendingRequestError as exc:
        fail(str(exc), code=EXIT_FAIL, hint=_NO_PENDING_HINT.format(run=run_id))
    except (BitExactError, ValueError) as exc:
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json({**approval.request.to_json(), "redacted": list(approval.redacted),
                    "already_redacted": list(approval.already), "completed_earlier_approval": approval.completed})
        return
    request = approval.request
    what = "completed the approval of" if approval.completed else "approved"
    # Names and field paths were typed by people and recorded (as `status` shows them): text, never escapes.
    console.print(f"{tick()} {_shown(request.decided_by or by)} {what} request {request.request_id} by "
                  f"{_shown(request.requested_by)}: {len(approval.redacted)} field(s) redacted on {escape(run_id)}", soft_wrap=True)
    if approval.already:
        already = _shown(", ".join(approval.already))
        console.print(f"  {len(approval.already)} field(s) were already redacted: {already}", soft_wrap=True)


@redaction_group.command("reject")
@click.argument("run_id")
@click.option("--by", required=True, help="Who rejects (must not be who requested).")
@click.option("--reason", required=True, help="Why (recorded on the custody chain).")
@json_option("Print as JSON.")
@pass_app
def redaction_reject(app: AppContext, run_id: str, by: str, reason: str, as_json: bool) -> None:
    """Reject RUN's pending request; nothing on the run changes.

    \b
    Examples:
      bitexact redaction reject RUN --by dpo:bob --reason 'the field is needed for the audit'

    \b
    Exit codes:
      0  rejected
      1  refused or failed: no pending request, the requester rejecting, another decision
         recorded first, BITEXACT_REQUIRE_DUAL_CONTROL set, the store does not open
      2  no such run, or a usage error (--by or --reason missing or empty)
    """
    _refuse_typed_principal("reject")
    _refuse_blank("reject", by, reason)
    try:
        request = reject_request(app.run_store, run_id, by=by, reason=reason)
    except RunNotFoundError:
        app.no_run(run_id)
    except NoPendingRequestError as exc:
        fail(str(exc), code=EXIT_FAIL, hint=_NO_PENDING_HINT.format(run=run_id))
    except (BitExactError, ValueError) as exc:
        fail(str(exc), code=EXIT_FAIL)
    if as_json:
        print_json(request.to_json())
        return
    console.print(f"{tick()} {_shown(by)} rejected request {request.request_id} by {_shown(request.requested_by)}"
                  f" on {escape(run_id)}; nothing changed", soft_wrap=True)


def _shown(text: object) -> str:
    """Names, reasons and field paths are what people typed and what the run recorded (its keys): shown as
    text, never as markup or escape sequences."""
    return escape(plain(str(text)))


def _show(request: RedactionRequest, run_id: str, unfinished: bool) -> None:
    shown = _shown
    colour = {"pending": "yellow", "approved": "green", "rejected": "red"}.get(request.status, "dim")
    status = "approved, not carried out" if unfinished else request.status
    colour = "yellow" if unfinished else colour
    console.print(f"[{colour}]{status}[/] request {shown(request.request_id)} by {shown(request.requested_by)}"
                  f" at {shown(request.requested_at)} ({shown(request.source)}): {len(request.fields)} field(s)", soft_wrap=True)
    console.print(f"  reason  {shown(request.reason)}", soft_wrap=True)
    if request.decided_by:
        extra = f" - {shown(request.decision_reason)}" if request.decision_reason else ""
        console.print(f"  {request.status} by {shown(request.decided_by)} at {shown(request.decided_at)}{extra}", soft_wrap=True)
    if request.status == "pending" or unfinished:
        for token in request.fields:
            console.print(f"  {shown(token)}", soft_wrap=True)
    if unfinished:
        # An approval stopped before its redaction finished: the values are still stored.
        console.print(f"  its values are not all removed yet: `bitexact redact --resume {escape(plain(run_id))}`"
                      " carries it out under this approval", soft_wrap=True)


@redaction_group.command("status")
@click.argument("run_id")
@json_option("Print as JSON.")
@pass_app
def redaction_status(app: AppContext, run_id: str, as_json: bool) -> None:
    """Show RUN's redaction requests: the pending one with its fields, and those decided.

    An approval recorded but stopped before its values were all removed (a
    kill, a full disk) shows as "approved, not carried out", with its fields
    and `bitexact redact --resume RUN`, which finishes it (--json:
    "unfinished" names the request, "finish" the command, and each approved
    request has "carried_out").

    \b
    Examples:
      bitexact redaction status RUN
      bitexact redaction status RUN --json

    \b
    Exit codes:
      0  shown (no requests too)
      1  the store does not open
      2  no such run, or a usage error
    """
    try:
        requests = list_requests(app.run_store, run_id)
        unfinished = unfinished_approval(app.run_store, run_id)
    except RunNotFoundError:
        app.no_run(run_id)
    unfinished_id = unfinished.request_id if unfinished is not None else None
    if as_json:
        print_json({"run_id": run_id, "pending": next((r.request_id for r in requests if r.status == "pending"), None),
                    "unfinished": unfinished_id,
                    "finish": f"bitexact redact --resume {run_id}" if unfinished_id else None,
                    "requests": [{**r.to_json(), **({"carried_out": r.request_id != unfinished_id}
                                                    if r.status == "approved" else {})} for r in requests]})
        return
    if not requests:
        console.print(f"no redaction requests on {escape(run_id)}", soft_wrap=True)
        return
    for request in requests:
        _show(request, run_id, request.request_id == unfinished_id)
