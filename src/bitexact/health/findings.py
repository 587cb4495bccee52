"""Health findings and the report they add up to.

A check is a small function that returns findings; a finding has a level
(``warn`` or ``critical``), a name from the contract (``capture-key-missing``
...), a message a person can act on, and, for a finding about one run, the
run's id. The report's exit code is what ``bitexact health`` exits with:
0 healthy, 1 warnings only, 2 anything critical.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

Level = Literal["warn", "critical"]
WARN: Final[Level] = "warn"
CRITICAL: Final[Level] = "critical"

EXIT_HEALTHY: Final[int] = 0
EXIT_WARNINGS: Final[int] = 1
EXIT_CRITICAL: Final[int] = 2


def listed(names: Sequence[str], limit: int) -> str:
    """The first ``limit`` names, comma-separated, and how many more (a finding's ``details`` holds them all)."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


@dataclass(frozen=True)
class Finding:
    """One thing ``bitexact health`` reports."""

    level: Level
    name: str
    message: str
    run_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.level not in (WARN, CRITICAL):
            raise ValueError(f"a finding's level is warn or critical, not {self.level!r}")
        if not self.name:
            raise ValueError("a finding names its check")

    def to_json(self) -> dict[str, Any]:
        """For ``bitexact health --json``."""
        out: dict[str, Any] = {"level": self.level, "name": self.name, "message": self.message}
        if self.run_id is not None:
            out["run_id"] = self.run_id
        if self.details:
            out["details"] = self.details
        return out


@dataclass(frozen=True)
class HealthReport:
    """Every finding of one ``bitexact health``, critical ones first."""

    findings: tuple[Finding, ...]

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> HealthReport:
        ordered = sorted(findings, key=lambda f: (f.level != CRITICAL, f.name, f.run_id or ""))
        return cls(tuple(ordered))

    @property
    def status(self) -> str:
        """``healthy``, ``warnings`` or ``critical``."""
        if any(f.level == CRITICAL for f in self.findings):
            return "critical"
        return "warnings" if self.findings else "healthy"

    def exit_code(self) -> int:
        """0 healthy, 1 warnings only, 2 anything critical."""
        return {"healthy": EXIT_HEALTHY, "warnings": EXIT_WARNINGS, "critical": EXIT_CRITICAL}[self.status]

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "findings": [f.to_json() for f in self.findings]}
