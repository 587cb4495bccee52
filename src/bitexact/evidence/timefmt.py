"""Instants as the bundle spec wants them written (§0)."""

from __future__ import annotations

from datetime import datetime, timezone


def now_iso() -> str:
    """The current UTC instant, ``+00:00`` form with microseconds."""
    return datetime.now(timezone.utc).isoformat()
