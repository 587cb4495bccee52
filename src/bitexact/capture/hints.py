"""Custody hints: what an agent may ask of a field's custody, stricter only.

An event's top-level ``custody`` maps a path (``KEY`` or ``KEY.SUBKEY``, the
committed-path spelling) to one of (protocol vectors, ``custody_hints``):

* ``scrub`` - run the detectors on the field;
* ``hash-only`` - keep only a keyed commitment to it;
* ``scrubbed-upstream`` or ``scrubbed-upstream:TOOL`` - the agent's claim that
  it cleaned the value before BitExact saw it (TOOL: a letter or digit, then
  letters, digits and ``._-``, up to 64 characters), declared as the claim it
  is and never counted as a scrub.

A hint on a key covers what is under it. A hint only ever makes a field
stricter than the policy; it never keeps what the policy removes. Anything
else is not a hint: the entry is withheld and an ``invalid_argument`` gap
declared, since a value kept without the custody it asked for could be
stored where it must not be. The event field ``capture`` is the collector's
alone; a source that sets it is refused the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from bitexact.capture.errors import HintError
from bitexact.capture.paths import unesc

HintMode = Literal["scrub", "hash-only", "scrubbed-upstream"]
HINTS: Final[tuple[str, ...]] = ("scrub", "hash-only", "scrubbed-upstream")
UPSTREAM: Final = "scrubbed-upstream"
COLLECTOR_ONLY: Final[str] = "capture"
_TOOL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,63}")
_STRICTNESS: Final[dict[str, int]] = {"scrub": 1, "hash-only": 2, UPSTREAM: 0}


@dataclass(frozen=True)
class Hint:
    """One parsed hint: its path (as written and split), mode and, for a claim, the tool."""

    path: str
    segments: tuple[str, ...]
    mode: HintMode
    by: str | None = None

    @property
    def strictness(self) -> int:
        """0 for a claim (it changes nothing), 1 for scrub, 2 for hash-only."""
        return _STRICTNESS[self.mode]


def parse_hint(value: object, field: str) -> tuple[HintMode, str | None]:
    """A hint's mode and tool; :class:`HintError` when it is not one.

    The error never quotes the value: a hint that is not one is the agent's
    free text (it could be the very card number it meant to protect), and the
    message reaches logs and failure records.
    """
    if not isinstance(value, str):
        raise HintError(field, "a custody hint is a string: scrub, hash-only or scrubbed-upstream[:TOOL]")
    if value in ("scrub", "hash-only", UPSTREAM):
        return value, None  # type: ignore[return-value]
    prefix = UPSTREAM + ":"
    if value.startswith(prefix):
        tool = value[len(prefix) :]
        if _TOOL.fullmatch(tool):
            return UPSTREAM, tool
        raise HintError(
            field,
            f"the tool after scrubbed-upstream: ({len(tool)} characters) is a letter or digit, then letters, "
            "digits and . _ -, up to 64 characters",
        )
    raise HintError(
        field, f"not a custody hint ({len(value)} characters): scrub, hash-only or scrubbed-upstream[:TOOL]"
    )


_PLAIN_PATH = re.compile(r"[A-Za-z_~\-][A-Za-z0-9_.~\-]{0,63}")
_DIGITS = re.compile(r"\d")


def hint_field(path: str, position: int) -> str:
    """How an error names a hint: by its path when that is a plain key, else by its position.

    A path is the agent's text too; one that could hold a number worth
    protecting (six or more digits, or anything but a plain key) is named
    ``custody[N]`` instead of being quoted.
    """
    if _PLAIN_PATH.fullmatch(path) and len(_DIGITS.findall(path)) < 6:
        return f"custody.{path}"
    return f"custody[{position}]"


def _segments(path: str, field: str) -> tuple[str, ...]:
    top, dot, sub = path.partition(".")
    parts = (top, sub) if dot else (top,)
    for part in parts:
        if part == "" or "*" in part:
            raise HintError(field, "a hint names KEY or KEY.SUBKEY (no wildcards, no empty keys)")
        if "." in part:
            raise HintError(field, "a hint names at most KEY.SUBKEY (a dot in a key is ~1)")
        if re.search(r"~(?![01])", part):
            raise HintError(field, "a ~ in a key is written ~0")
    return tuple(unesc(p) for p in parts)


def parse_custody(custody: object) -> tuple[Hint, ...]:
    """Every hint of an event's ``custody``; :class:`HintError` names the first bad one."""
    if custody is None:
        return ()
    if not isinstance(custody, dict):
        raise HintError("custody", "custody is an object mapping a path to a hint")
    hints = []
    for position, (path, value) in enumerate(custody.items()):
        if not isinstance(path, str):
            raise HintError(f"custody[{position}]", "a custody path is a string")
        field = hint_field(path, position)
        mode, by = parse_hint(value, field)
        hints.append(Hint(path, _segments(path, field), mode, by))
    return tuple(hints)


def check_source_fields(event: dict[str, Any]) -> tuple[Hint, ...]:
    """Check what a source sent beside its data: ``custody`` parses, and no ``capture``.

    Returns the hints. Raises :class:`HintError` naming ``capture`` when a
    source set the collector's field, or the bad hint.
    """
    if COLLECTOR_ONLY in event:
        raise HintError(COLLECTOR_ONLY, "capture is the collector's field alone; a source may not set it")
    return parse_custody(event.get("custody"))
