"""Which run is recording here: the context's run, the tool running, and the SDK's own busy flag.

A run is bound to the context that entered it (``contextvars``), so asyncio
tasks started inside it record into it, and into no other run once it has
ended. A plain thread does not inherit a context; a thread the agent
started records into the run that is open when exactly one run is open in
the process, and into none when several are, rather than guess between them.
"""

from __future__ import annotations

import os
import threading
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bitexact.sdk.run import Run

_current: ContextVar[Run | None] = ContextVar("bitexact_run", default=None)
_tool: ContextVar[_ToolFrame | None] = ContextVar("bitexact_tool", default=None)
_busy: ContextVar[bool] = ContextVar("bitexact_busy", default=False)

_lock = threading.Lock()
_open: list[Run] = []
_locking: list[Run] = []
"""Runs holding their live lock: from before they open, and after they end until their writer's last batch."""


def register(run: Run) -> None:
    with _lock:
        _open.append(run)


def unregister(run: Run) -> None:
    with _lock:
        if run in _open:
            _open.remove(run)


def holds_live_lock(run: Run, held: bool) -> None:
    """``run`` took (``held``) or gave back its live lock: a child forked while it holds it closes its copy."""
    with _lock:
        if held and run not in _locking:
            _locking.append(run)
        elif not held and run in _locking:
            _locking.remove(run)


def _after_fork_in_child() -> None:
    """A child forked while runs were open, or held their live lock (an ended run's exit may keep it until
    its writer's last batch ends): they are the parent's (its journals, its live lock, its writer
    thread, which the child does not have). The child records into none of them, and ending its copy
    touches nothing of the parent's (Run._forked_away)."""
    global _lock
    _lock = threading.Lock()  # a lock the parent held at the fork stays held in the child forever
    runs = list(_open) + [run for run in _locking if run not in _open]
    _open[:], _locking[:] = [], []
    for run in runs:
        run._forked_away()


os.register_at_fork(after_in_child=_after_fork_in_child)


def open_runs() -> list[Run]:
    with _lock:
        return list(_open)


def live_runs() -> list[Run]:
    """The runs open, and the ended ones whose writer may still write (they hold their live lock until
    its last batch ends): a store one of them uses is still in use."""
    with _lock:
        return list(_open) + [run for run in _locking if run not in _open]


def current_run() -> Run | None:
    """The run recording in this context; for a context bound to no run (a plain thread), the only
    open run in the process; else None.

    A context bound to a run that has ended (a task it left running) or that
    never started records into no run: never into another one that happens
    to be open.
    """
    run = _current.get()
    if run is not None:
        return run if run.open else None
    with _lock:
        return _open[0] if len(_open) == 1 else None


def bound_run() -> Run | None:
    """The run bound to this context only (never a guess across threads)."""
    run = _current.get()
    return run if run is not None and run.open else None


def current_tool(run: Run | None = None) -> str | None:
    """The tool whose live execution this context is inside (an entry's ``ctx``).

    A task or callback the tool started copies this context; once the tool
    has returned, its frame is no longer live and the task records under the
    tool that is still running around it, if any. For ``run``, only a tool
    recording into that run counts: an entry of another run (a run opened
    inside the tool, a client wrapped for another run) never names a tool
    whose call is in another chain.
    """
    frame = _tool.get()
    while frame is not None:
        if frame.live and (run is None or frame.run is None or frame.run is run):
            return frame.name
        frame = frame.outer
    return None


class _ContextFlag:
    """Sets a context variable for the ``with`` block and restores it after.

    A class rather than ``@contextmanager``: every recorded call enters two
    or three of these, and the generator machinery cost about 2 µs each.
    """

    __slots__ = ("_var", "_value", "_token")

    def __init__(self, var: ContextVar[Any], value: Any) -> None:
        self._var = var
        self._value = value

    def __enter__(self) -> None:
        self._token = self._var.set(self._value)

    def __exit__(self, *exc: object) -> None:
        self._var.reset(self._token)


class _ToolFrame:
    """One running tool: its name, the run its call records into, the tool around it, and whether it is
    still running."""

    __slots__ = ("name", "run", "outer", "live")

    def __init__(self, name: str, run: Run | None, outer: _ToolFrame | None) -> None:
        self.name = name
        self.run = run
        self.outer = outer
        self.live = True


class _InsideTool:
    """Sets the running tool for the ``with`` block, and marks it ended (for every copied context) after."""

    __slots__ = ("_name", "_run", "_frame", "_token")

    def __init__(self, name: str, run: Run | None) -> None:
        self._name = name
        self._run = run

    def __enter__(self) -> None:
        self._frame = _ToolFrame(self._name, self._run, _tool.get())
        self._token = _tool.set(self._frame)

    def __exit__(self, *exc: object) -> None:
        self._frame.live = False
        _tool.reset(self._token)


def inside_tool(name: str, run: Run | None) -> _InsideTool:
    """For the ``with`` block: entries of ``run`` recorded in this context (and tasks it starts, while it
    runs) carry ``ctx=name``."""
    return _InsideTool(name, run)


def sdk_busy() -> bool:
    """True while the SDK itself is working in this context (its reads are not the agent's)."""
    return _busy.get()


def busy() -> _ContextFlag:
    """For the ``with`` block: the SDK itself is working (its reads are not the agent's)."""
    return _ContextFlag(_busy, True)
