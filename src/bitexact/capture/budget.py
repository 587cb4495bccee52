"""The scan budget: ``budget_ms`` for each MiB a step holds as JSON.

A step's deadline is ``budget_ms`` times its size in MiB, and never less than
one MiB's worth, so a large payload gets time in proportion and is never
withheld for its size alone (capture-controls.md, budget_ms). Detectors call
:meth:`Deadline.check` at every match, run of digits or group they consider.
The clock is injectable so tests drive the deadline without wall time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MIB = 1 << 20
DEFAULT_BUDGET_MS = 1000
MIN_BUDGET_MS = 1
MAX_BUDGET_MS = 10000

Clock = Callable[[], float]


class BudgetExhausted(Exception):
    """Internal: the scan reached its deadline before it finished."""


@dataclass
class Deadline:
    """A point on ``clock`` past which a scan stops; ``at=None`` never expires."""

    at: float | None
    clock: Clock = time.monotonic

    @classmethod
    def for_size(cls, budget_ms: int, size_bytes: int, clock: Clock | None = None) -> "Deadline":
        """The deadline for a step of ``size_bytes``, starting now on ``clock``."""
        use = clock or time.monotonic
        seconds = budget_ms / 1000.0 * max(1.0, size_bytes / MIB)
        return cls(use() + seconds, use)

    @classmethod
    def unlimited(cls) -> "Deadline":
        """A deadline that never passes (a scrub hint with the policy off)."""
        return cls(None)

    def check(self) -> None:
        """Raise :class:`BudgetExhausted` once the deadline has passed."""
        if self.at is not None and self.clock() > self.at:
            raise BudgetExhausted()

    def expired(self) -> bool:
        """Whether the deadline has passed (no exception)."""
        return self.at is not None and self.clock() > self.at
