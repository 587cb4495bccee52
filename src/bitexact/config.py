"""Where BitExact keeps its data, and the environment settings every layer reads."""

from __future__ import annotations

import os
from pathlib import Path


def home(explicit: Path | str | None = None) -> Path:
    """The data directory: ``explicit``, else ``BITEXACT_HOME``, else ``~/.bitexact``."""
    if explicit is not None:
        return Path(explicit).expanduser()
    env = os.environ.get("BITEXACT_HOME")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".bitexact"


def env_float(name: str, default: float) -> float:
    """A positive number from the environment, with a clear error when it is not one."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if value <= 0:
        raise ValueError(f"{name}={raw!r} must be greater than 0")
    return value


def env_int(name: str, default: int) -> int:
    """A positive whole number from the environment."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise ValueError(f"{name}={raw!r} must be greater than 0")
    return value
