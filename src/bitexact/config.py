"""Where BitExact keeps its data, and the environment settings every layer reads."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final


class SettingError(ValueError):
    """An environment setting BitExact cannot use; the message names the variable and holds no agent data."""


def home(explicit: Path | str | None = None) -> Path:
    """The data directory: ``explicit``, else ``BITEXACT_HOME``, else ``~/.bitexact``.

    ``BITEXACT_HOME`` holding only spaces raises :class:`SettingError`, as ``bitexact --home " "`` is refused."""
    if explicit is not None:
        return Path(explicit).expanduser()
    env = os.environ.get("BITEXACT_HOME")
    if env:
        if not env.strip():  # Path("  ") is a directory in the working directory: the store and keys would land there
            raise SettingError("BITEXACT_HOME is empty: name the data directory (or leave it unset for ~/.bitexact)")
        return Path(env).expanduser()
    return Path.home() / ".bitexact"


def inside(path: Path | str, directory: Path | str) -> bool:
    """True when ``path`` is ``directory`` or lies below it, symlinks on both sides followed.

    For "is this inside the data directory?": a file a symlink leads into
    it counts, one a symlink leads out of it does not. ``os.path.realpath``
    rather than ``Path.resolve``: a symlink loop on either side is a name
    left as it is, never a ``RuntimeError``.
    """
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(directory))


def env_float(name: str, default: float) -> float:
    """A positive number from the environment, with a clear error when it is not one."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value):  # "nan" would silently turn a time-based rule off, "inf" wait for ever
        raise SettingError(f"{name}={raw!r} must be a finite number")
    if value <= 0:
        raise SettingError(f"{name}={raw!r} must be greater than 0")
    if value > _LONGEST_WAIT:  # past what a wait can be given (threading.TIMEOUT_MAX): refused, never a crash
        raise SettingError(f"{name}={raw!r} must be at most {_LONGEST_WAIT:g} seconds")
    return value


_LONGEST_WAIT: Final[float] = 1e6
"""Seconds: about eleven days, far past any sensible bound, and well within every platform's timed wait."""


def env_int(name: str, default: int, *, env: Mapping[str, str] | None = None) -> int:
    """A positive whole number from ``env`` (default: the environment), ``default`` when unset or empty."""
    raw = (os.environ if env is None else env).get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise SettingError(f"{name}={raw!r} must be greater than 0")
    return value


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def env_flag(name: str, default: bool = False, *, env: Mapping[str, str] | None = None) -> bool:
    """A yes/no setting from ``env`` (default: the environment): 1/true/yes/on, 0/false/no/off in any case,
    ``default`` when unset or empty; anything else raises :class:`SettingError` rather than being taken as off."""
    raw = (os.environ if env is None else env).get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingError(f"{name}={raw!r} is not one of 1, true, yes, on, 0, false, no, off")
