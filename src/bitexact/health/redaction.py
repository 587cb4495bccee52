"""The redaction check of ``bitexact health``: a store redaction whose claim landed but whose removal did not.

``bitexact redact`` is write-ahead: the ``redaction`` claim is appended
first, then the values are removed. A redaction stopped in between (a full
disk, a kill, a store kept locked) leaves a claim whose values are still
stored: ``bitexact verify RUN`` fails the run, ``bitexact export`` refuses
it, and ``bitexact redact --resume RUN`` finishes it. What is pending is
decided by :func:`bitexact.recording.audit.pending_claims`, the rule those
commands use.

Only runs the store counts a ``redaction`` entry for are read, and of
those only the entries back to their first claim and the entries claimed.

A dual-control approval (``bitexact redaction approve``) records the
approval on the run's custody records, then appends the claim: stopped in
between, the values are still stored and nothing on the chain says they are
to go. Each run's custody records are read for that (its entries only when
an approved request is found): ``bitexact redact --resume RUN`` carries it
out.
"""

from __future__ import annotations

from typing import Final

from bitexact.errors import BitExactError
from bitexact.health.context import HealthContext
from bitexact.health.findings import WARN, Finding, listed
from bitexact.recording.audit import PendingClaim, pending_claims
from bitexact.recording.requests import RedactionRequest, unclaimed_approval

LISTED: Final[int] = 5
"""How many fields a message names before saying how many more (``details`` holds them all)."""


def _finding(run_id: str, pending: list[PendingClaim]) -> Finding:
    fields = [f"{claim.step}:{claim.path}" for claim in pending]
    steps = sorted({claim.claim_step for claim in pending})
    claims = (f"the redaction claim at step {steps[0]} is" if len(steps) == 1
              else f"the redaction claims at steps {', '.join(map(str, steps))} are")
    values = (f"the value of {fields[0]} is" if len(fields) == 1
              else f"the values of {len(fields)} claimed fields are")
    return Finding(
        WARN, "redaction-pending",
        f"{claims} recorded but not applied: {values} still stored"
        f"{f' ({listed(fields, LISTED)})' if len(fields) != 1 else ''}. A redaction stopped between its claim"
        " and the removal (a full disk, a kill); `bitexact verify` fails the run and `bitexact export` refuses"
        f" it until `bitexact redact --resume {run_id}` removes them",
        run_id=run_id, details={"fields": fields, "claim_steps": steps},
    )


def _unclaimed_finding(run_id: str, request: RedactionRequest, fields: tuple[str, ...]) -> Finding:
    values = f"the value of {fields[0]} is" if len(fields) == 1 else f"the values of {len(fields)} fields are"
    return Finding(
        WARN, "redaction-pending",
        f"redaction request {request.request_id} (by {request.requested_by}) was approved by {request.decided_by}"
        f" at {request.decided_at}, but not carried out: {values} still stored"
        f"{f' ({listed(list(fields), LISTED)})' if len(fields) != 1 else ''} and no claim is on the chain, so"
        " `bitexact verify` passes and `bitexact export` carries them. An approval stopped before its claim"
        f" (a kill, a full disk); `bitexact redact --resume {run_id}` carries it out under that approval",
        run_id=run_id, details={"fields": list(fields), "request": request.request_id,
                                "approved_by": request.decided_by},
    )


def check_pending_redactions(ctx: HealthContext) -> list[Finding]:
    """redaction-pending, per run: the run holds a redaction claim whose values are still stored, or a
    dual-control approval recorded whose claim never landed (its values still stored, nothing on the chain
    saying so)."""
    if ctx.store is None:
        return []
    findings: list[Finding] = []
    for info in ctx.runs():
        try:
            # Approvals are custody records, not entries: a run is read for them whatever its kinds.
            unclaimed = unclaimed_approval(ctx.store, info.run_id)
            pending = pending_claims(ctx.store, info.run_id) if info.kinds.get("redaction") else []
        except BitExactError:
            continue  # a damaged run, or one removed meanwhile: store-unreadable says so
        if unclaimed is not None:
            findings.append(_unclaimed_finding(info.run_id, *unclaimed))
        if pending:
            findings.append(_finding(info.run_id, pending))
    return findings


REDACTION_CHECKS = (check_pending_redactions,)
"""The redaction checks, in the order ``bitexact health`` runs them."""
