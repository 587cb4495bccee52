"""When to mint a checkpoint: every N entries or T seconds, and always at the seal and after it."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from bitexact.config import env_float, env_int

DEFAULT_EVERY = 64
"""Entries between checkpoints by default: a checkpoint per append (the spec's
producer advice) would make a million-entry bundle carry a million checkpoints."""


@dataclass(frozen=True)
class CheckpointPolicy:
    """Mint a checkpoint once ``every`` entries or ``seconds`` have passed since the last one.

    The seal and every audit entry after it always get one, so a sealed run's
    head is always recorder-attested (the sealed-tail rule of §6).
    """

    every: int = DEFAULT_EVERY
    seconds: float = 2.0

    def __post_init__(self) -> None:
        # As the environment's settings are refused (config.env_int/env_float): a NaN would silently turn
        # the time rule off, 0 or less would checkpoint every append, text would fail at the first append.
        if isinstance(self.every, bool) or not isinstance(self.every, int) or self.every < 1:
            raise ValueError(f"checkpoint every: a whole number of entries of 1 or more, not {self.every!r}")
        if (isinstance(self.seconds, bool) or not isinstance(self.seconds, (int, float))
                or not math.isfinite(self.seconds) or self.seconds < 0):
            raise ValueError(f"checkpoint seconds: a finite number of seconds of 0 or more, not {self.seconds!r}")

    @classmethod
    def from_env(cls) -> CheckpointPolicy:
        """``BITEXACT_CHECKPOINT_EVERY`` entries and ``BITEXACT_CHECKPOINT_SECONDS`` seconds."""
        return cls(
            every=env_int("BITEXACT_CHECKPOINT_EVERY", DEFAULT_EVERY),
            seconds=env_float("BITEXACT_CHECKPOINT_SECONDS", 2.0),
        )

    def due(self, *, steps_since: int, last_at: float, sealed: bool, now: float | None = None) -> bool:
        """Whether the append about to happen should carry a checkpoint."""
        if sealed or steps_since >= self.every:
            return True
        return (now if now is not None else time.monotonic()) - last_at >= self.seconds
