"""When to mint a checkpoint: every N entries or T seconds, and always at the seal and after it."""

from __future__ import annotations

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
