"""Causal context: ``bxc.<id>.<ms>.<logical>`` and a hybrid logical clock per run.

A context names an event (``id``) and the hybrid logical clock reading it
happened at (``hlc`` = wall milliseconds, logical counter). An agent hands a
context to a sub-agent in another process (``Run.child_env()`` puts it in
``BITEXACT_CONTEXT``); the sub-agent's run reads it at start, records it as
the cause in its ``run_meta`` and moves its clock past it, so the two runs
order causally whatever their hosts' clocks say.

The sub-agent's first run takes ``BITEXACT_CONTEXT`` out of ``os.environ``
(:func:`inherited_context`): the context names the event that caused this
process, and a process it starts in turn (plain ``subprocess``, with the
environment inherited) was caused by this one, not by its parent. Later runs
of the same process still read it; a grandchild is handed one by
``Run.child_env()``.

Both numbers are whole, non-negative, written in plain decimal, and at most
2^53 - 1, the largest integer every language holds exactly. An id is 1 to 64
letters, digits, ``_`` or ``-``.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Final

from bitexact.sdk.errors import SdkArgumentError

PREFIX: Final[str] = "bxc"
ENV_VAR: Final[str] = "BITEXACT_CONTEXT"
MAX_CLOCK: Final[int] = 2**53 - 1
_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NUMBER: Final = re.compile(r"0|[1-9][0-9]{0,15}")
_wall_ns = time.time_ns  # bound at import: the clock never reads a patched time.time_ns


_inherited: tuple[int, str] | None = None  # (pid, BITEXACT_CONTEXT) as this process was started with it
_inherited_lock = threading.Lock()


def inherited_context() -> str | None:
    """The causal context this process was started under (``BITEXACT_CONTEXT``, stripped), or None.

    The first read takes the variable out of ``os.environ`` and keeps it for this process: every run of it
    reads the same parent, and a process it starts without ``Run.child_env()`` inherits none, where it
    recorded its grandparent's event as its own cause. A value set again later (by the agent) is read and
    taken out in turn. A child forked from this process reads none: its runs were caused by this process.
    """
    global _inherited
    with _inherited_lock:
        text = os.environ.pop(ENV_VAR, None)
        if text is not None:
            _inherited = (os.getpid(), text.strip()) if text.strip() else None
        if _inherited is None or _inherited[0] != os.getpid():
            return None
        return _inherited[1]


def forget_inherited_context() -> None:
    """Forget the context :func:`inherited_context` kept (a test's isolation; an agent has no need)."""
    global _inherited
    with _inherited_lock:
        _inherited = None


class ContextFormatError(SdkArgumentError):
    """A causal context that is not ``bxc.<id>.<ms>.<logical>``; ``field`` names the part."""


@dataclass(frozen=True)
class CausalContext:
    """A parsed context: the event id and its clock reading."""

    id: str
    hlc: tuple[int, int]

    def __str__(self) -> str:
        return format_context(self.id, self.hlc)


# Every message quotes the bad part cut to 80 characters: a context comes from the environment or a
# parent process, and a megabyte of it must not go whole into the gap and the log line.


def _clock_part(text: str, field: str) -> int:
    if not _NUMBER.fullmatch(text) or int(text) > MAX_CLOCK:
        raise ContextFormatError(
            f"{field} {text!r:.80} is not a whole number from 0 to 2^53 - 1 in plain decimal", field=field)
    return int(text)


def format_context(event_id: str, hlc: tuple[int, int] | list[int]) -> str:
    """``bxc.<id>.<ms>.<logical>``; refuses an id or clock no reader would parse back."""
    if not isinstance(event_id, str) or not _ID.fullmatch(event_id):
        raise ContextFormatError(f"id {event_id!r:.80} must be 1 to 64 letters, digits, _ or -", field="id")
    if not isinstance(hlc, (tuple, list)) or len(hlc) != 2:
        raise ContextFormatError(f"hlc must be [milliseconds, logical], not {hlc!r:.80}", field="hlc")
    ms, logical = hlc
    for value, field in ((ms, "hlc.ms"), (logical, "hlc.logical")):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CLOCK:
            raise ContextFormatError(f"{field} {value!r:.80} is not a whole number from 0 to 2^53 - 1", field=field)
    return f"{PREFIX}.{event_id}.{ms}.{logical}"


def parse_context(text: str) -> CausalContext:
    """Parse ``bxc.<id>.<ms>.<logical>``; raises :class:`ContextFormatError` naming the bad part."""
    if not isinstance(text, str):
        raise ContextFormatError(f"a context is text, not {type(text).__name__}", field="context")
    parts = text.split(".")
    if parts[0] != PREFIX:
        raise ContextFormatError(f"a context starts with {PREFIX}., not {parts[0]!r:.80}", field="prefix")
    if len(parts) != 4:
        raise ContextFormatError(f"a context has 4 dot-separated parts ({PREFIX}.<id>.<ms>.<logical>), "
                                 f"not {len(parts)}", field="context")
    _, event_id, ms, logical = parts
    if not _ID.fullmatch(event_id):
        raise ContextFormatError(f"id {event_id!r:.80} must be 1 to 64 letters, digits, _ or -", field="id")
    return CausalContext(event_id, (_clock_part(ms, "hlc.ms"), _clock_part(logical, "hlc.logical")))


class HybridClock:
    """A hybrid logical clock (Kulkarni et al.): wall milliseconds, and a counter for ties and skew."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ms = 0
        self._logical = 0

    @staticmethod
    def _wall_ms() -> int:
        return _wall_ns() // 1_000_000

    def now(self) -> tuple[int, int]:
        """A reading strictly after every earlier one of this clock."""
        with self._lock:
            wall = self._wall_ms()
            if wall > self._ms:
                self._ms, self._logical = wall, 0
            else:
                self._ms, self._logical = _carry(self._ms, self._logical + 1)
            return self._ms, self._logical

    def observe(self, remote: tuple[int, int]) -> tuple[int, int]:
        """Move past a reading received from elsewhere; returns the new reading."""
        with self._lock:
            wall = self._wall_ms()
            top = max(wall, self._ms, remote[0])
            if top == self._ms and top == remote[0]:
                logical = max(self._logical, remote[1]) + 1
            elif top == self._ms:
                logical = self._logical + 1
            elif top == remote[0]:
                logical = remote[1] + 1
            else:
                logical = 0
            try:
                self._ms, self._logical = _carry(top, logical)
            except ContextFormatError:
                # No reading after the remote one exists: the clock stays at its limit, so no later reading
                # of it is taken from the wall clock, which would come before the remote one.
                self._ms, self._logical = MAX_CLOCK, MAX_CLOCK
                raise
            return self._ms, self._logical

    def at_limit(self) -> tuple[int, int]:
        """The clock's last reading, ``(2^53 - 1, 2^53 - 1)``, once it has reached it: what a run hands on
        when no later reading exists (the context is still one anyone can parse)."""
        with self._lock:
            return self._ms, self._logical


def _carry(ms: int, logical: int) -> tuple[int, int]:
    """A reading whose counter passed 2^53 - 1 (a remote reading at the limit) moves to the next
    millisecond instead, still after every earlier reading and still a context anyone can parse."""
    if logical <= MAX_CLOCK:
        return ms, logical
    if ms >= MAX_CLOCK:
        raise ContextFormatError("the clock reached 2^53 - 1 milliseconds and counts: no later reading exists",
                                 field="hlc")
    return ms + 1, 0
