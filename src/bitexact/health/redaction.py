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
"""

from __future__ import annotations

from typing import Final

from bitexact.errors import BitExactError
from bitexact.health.context import HealthContext
from bitexact.health.findings import WARN, Finding, listed
from bitexact.recording.audit import PendingClaim, pending_claims

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


def check_pending_redactions(ctx: HealthContext) -> list[Finding]:
    """redaction-pending, per run: the run holds a redaction claim whose values are still stored."""
    if ctx.store is None:
        return []
    findings: list[Finding] = []
    for info in ctx.runs():
        if not info.kinds.get("redaction"):
            continue  # never redacted: nothing of the run is read
        try:
            pending = pending_claims(ctx.store, info.run_id)
        except BitExactError:
            continue  # a damaged run, or one removed meanwhile: store-unreadable says so
        if pending:
            findings.append(_finding(info.run_id, pending))
    return findings


REDACTION_CHECKS = (check_pending_redactions,)
"""The redaction checks, in the order ``bitexact health`` runs them."""
