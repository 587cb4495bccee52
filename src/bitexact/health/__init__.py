"""``bitexact health``: checks that say what needs attention, each a small function.

A check takes a :class:`HealthContext` and returns a list of
:class:`Finding` (level ``warn`` or ``critical``, a name, a message). The
report exits 0 healthy, 1 with warnings only, 2 with anything critical.
Checks are grouped by area: the capture checks, then the recording checks
(journals a stopped recording left), then the redaction check (a claim
whose removal did not finish); another area adds its tuple to
:data:`CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bitexact.health.capture import CAPTURE_CHECKS
from bitexact.health.context import CollectorSent, HealthContext, RunCapture, scan_run
from bitexact.health.findings import CRITICAL, WARN, Finding, HealthReport
from bitexact.health.recording import RECORDING_CHECKS
from bitexact.health.redaction import REDACTION_CHECKS

Check = Callable[[HealthContext], list[Finding]]

CHECKS: tuple[Check, ...] = (*CAPTURE_CHECKS, *RECORDING_CHECKS, *REDACTION_CHECKS)
"""Every check ``bitexact health`` runs, in order."""


def run_health(ctx: HealthContext, checks: Iterable[Check] = CHECKS) -> HealthReport:
    """Run ``checks`` and gather their findings into one report.

    A check that raises is itself a critical finding (``health-check-failed``)
    rather than a crash, so one broken check never hides the others.
    """
    findings: list[Finding] = []
    for check in checks:
        try:
            findings.extend(check(ctx))
        except Exception as exc:  # noqa: BLE001 - reported, never swallowed
            findings.append(Finding(CRITICAL, "health-check-failed",
                                    f"{getattr(check, '__name__', check)} raised {type(exc).__name__}: {exc}"))
    return HealthReport.of(findings)


__all__ = [
    "CHECKS",
    "CRITICAL",
    "WARN",
    "Check",
    "CollectorSent",
    "Finding",
    "HealthContext",
    "HealthReport",
    "RunCapture",
    "run_health",
    "scan_run",
]
