"""Which run is recording here: the context's run, the tool running, and the SDK's own busy flag.

A run is bound to the context that entered it (``contextvars``), so asyncio
tasks started inside it record into it. A plain thread does not inherit a
context; a thread the agent started records into the run that is open when
exactly one run is open in the process, and into none when several are,
rather than guess between them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bitexact.sdk.run import Run

_current: ContextVar[Run | None] = ContextVar("bitexact_run", default=None)
_tool: ContextVar[str | None] = ContextVar("bitexact_tool", default=None)
_busy: ContextVar[bool] = ContextVar("bitexact_busy", default=False)

_lock = threading.Lock()
_open: list[Run] = []


def register(run: Run) -> None:
    with _lock:
        _open.append(run)


def unregister(run: Run) -> None:
    with _lock:
        if run in _open:
            _open.remove(run)


def open_runs() -> list[Run]:
    with _lock:
        return list(_open)


def current_run() -> Run | None:
    """The run recording in this context, else the only open run in the process, else None."""
    run = _current.get()
    if run is not None and run.open:
        return run
    with _lock:
        return _open[0] if len(_open) == 1 else None


def bound_run() -> Run | None:
    """The run bound to this context only (never a guess across threads)."""
    run = _current.get()
    return run if run is not None and run.open else None


def current_tool() -> str | None:
    """The tool whose live execution this context is inside (an entry's ``ctx``)."""
    return _tool.get()


@contextmanager
def inside_tool(name: str) -> Iterator[None]:
    token = _tool.set(name)
    try:
        yield
    finally:
        _tool.reset(token)


def sdk_busy() -> bool:
    """True while the SDK itself is working in this context (its reads are not the agent's)."""
    return _busy.get()


@contextmanager
def busy() -> Iterator[None]:
    token = _busy.set(True)
    try:
        yield
    finally:
        _busy.reset(token)
