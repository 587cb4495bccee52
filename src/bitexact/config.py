"""Where BitExact keeps its data, and the environment settings every layer reads."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final


class SettingError(ValueError):
    """An environment setting BitExact cannot use; the message names the variable and holds no agent data."""


_PINNED: dict[str, Path] = {}
"""Each ``BITEXACT_HOME`` value this process read, and the absolute directory it named when first read."""


def home(explicit: Path | str | None = None) -> Path:
    """The data directory, absolute: ``explicit``, else ``BITEXACT_HOME``, else ``~/.bitexact``.

    A relative ``explicit`` is taken from the working directory now, as any path argument is. A relative
    ``BITEXACT_HOME`` is made absolute once, the first time this process reads that value, and the same
    directory is returned after any ``chdir``: an agent that changed directory between two runs wrote the
    second into another data directory (another store, keys and journals), and `bitexact repair` or
    `health` run from elsewhere looked at a third.

    ``BITEXACT_HOME`` holding only spaces raises :class:`SettingError`, as ``bitexact --home " "`` is refused."""
    if explicit is not None:
        return Path(explicit).expanduser().absolute()
    env = os.environ.get("BITEXACT_HOME")
    if env:
        if not env.strip():  # Path("  ") is a directory in the working directory: the store and keys would land there
            raise SettingError("BITEXACT_HOME is empty: name the data directory (or leave it unset for ~/.bitexact)")
        pinned = _PINNED.get(env)
        if pinned is None:
            # Path.absolute, not resolve: a symlinked data directory keeps its name (the host key sits beside it).
            pinned = _PINNED.setdefault(env, Path(env).expanduser().absolute())
        return pinned
    return (Path.home() / ".bitexact").absolute()


def dangling(path: Path | str) -> str | None:
    """``"a symlink to TARGET, which does not exist"`` when ``path`` is a link to nothing (an unmounted
    volume): what no mkdir or file creation can go through, and what "no such file" would hide; else None."""
    if os.path.islink(path) and not os.path.exists(path):
        return f"a symlink to {os.readlink(path)}, which does not exist"
    return None


def _unmakeable(home: Path) -> str | None:
    """Why the data directory, not there yet, can never be made by a recording: the nearest ancestor that
    is there is a file, or a symlink to nowhere (an unmounted volume); None when it can be, or is there."""
    if os.path.lexists(home):
        return None
    for ancestor in Path(os.path.abspath(home)).parents:
        if not os.path.lexists(ancestor):
            continue
        if ancestor.is_dir():
            return None
        link = dangling(ancestor)
        return f"{ancestor} is {link}" if link else f"{ancestor} is a file, not a directory"
    return None


def unusable_home(home: Path) -> str | None:
    """Why nothing can be recorded in or read from the data directory ``home``, in a sentence that says
    what to do; None when it is a directory or can be made as one.

    A symlink to nowhere (an unmounted volume) is no empty data directory: a command that read it as one
    listed no runs, then a recording failed on a bare "No such file or directory".
    """
    if home.exists() and not home.is_dir():
        return (f"the data directory {home} is a file, not a directory: nothing can be recorded or read until"
                " BITEXACT_HOME (or --home) names a directory")
    link = dangling(home)
    if link is not None:
        # Not a directory still to make: mkdir cannot make one where a link is, so nothing ever records.
        return (f"the data directory {home} is {link}: nothing can be recorded or read until it does (create"
                " it, or point BITEXACT_HOME or --home at a directory)")
    blocked = _unmakeable(home)
    if blocked is not None:
        return (f"the data directory {home} cannot be made: {blocked}, so nothing can be recorded or read until"
                " it is (or BITEXACT_HOME or --home names a directory that can be)")
    return None


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
