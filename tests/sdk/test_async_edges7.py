"""The SDK under asyncio (the seventh review): each test is a bug it found, fixed.

Every test here fails on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.sdk import active
from sdk.conftest import entries
from store.lock_holder import held_by_another_process

# -- 1. an `async with` block abandoned: its coroutine closed with no loop to await in -----------------


def _abandoned_agent(holder: dict[str, Any]) -> Any:
    async def agent() -> None:
        async with bitexact.run() as r:
            holder["r"] = r
            r.marker("before")
            await asyncio.get_running_loop().create_future()  # never resolved: the agent is abandoned here

    return agent()


def test_an_async_run_whose_loop_closed_under_it_ends_when_its_coroutine_is_closed() -> None:
    """docs/sdk.md: a `with`/`async with` left in another context than the one that entered it "ends its
    run without raising"; issue 3: a run "seals with run_end on exit". A task left pending when its loop
    closed has its coroutine closed later (by the garbage collector): GeneratorExit leaves the `async
    with`, and __aexit__ asked for the running loop to drain in a thread. There is none: it raised
    RuntimeError ("no running event loop", printed as "Exception ignored in ..."), and the run never
    ended: never sealed, its live lock held, and still open in the process, so a plain thread of every
    later run saw two open runs and recorded into neither."""
    holder: dict[str, Any] = {}
    loop = asyncio.new_event_loop()
    coro = _abandoned_agent(holder)
    task = loop.create_task(coro)
    loop.run_until_complete(asyncio.sleep(0.01))
    loop.close()
    task._log_destroy_pending = False  # asyncio's own "Task was destroyed" notice: not what is tested
    coro.close()  # what the garbage collector does with the abandoned task's coroutine
    r = holder["r"]
    assert r.sealed and not r.open, "the abandoned run was never ended"
    assert r not in active.open_runs()
    assert [e["kind"] for e in entries(r.run_id)] == ["run_meta", "marker", "marker", "run_end"]


def test_an_async_run_whose_coroutine_is_closed_inside_a_running_loop_ends_without_raising() -> None:
    """As above, with the loop still running when the coroutine is closed (a task nobody holds, collected
    meanwhile): __aexit__ awaited its drain thread inside coroutine.close(), and a coroutine that awaits
    while it is closed raises RuntimeError("coroutine ignored GeneratorExit") out of close()."""
    holder: dict[str, Any] = {}

    async def main() -> BaseException | None:
        coro = _abandoned_agent(holder)
        coro.send(None)  # runs up to the future it waits for
        try:
            coro.close()
        except BaseException as exc:  # noqa: BLE001 - what closing the abandoned coroutine raised
            return exc
        return None

    raised = asyncio.run(main())
    assert raised is None, f"closing the abandoned coroutine raised {raised!r}"
    r = holder["r"]
    assert r.sealed and not r.open


def test_an_async_run_driven_without_an_asyncio_loop_ends_at_its_block_not_with_runtimeerror() -> None:
    """Issue 3: `async with bitexact.run()` "the same as with". A coroutine stepped by a runner that is not
    asyncio (trio, a framework stepping it with send()) has no running asyncio loop: __aexit__ asked for
    one to drain in a thread and raised RuntimeError ("no running event loop") in place of the block's
    normal end, leaving the run open."""
    holder: dict[str, Any] = {}

    async def agent() -> str:
        async with bitexact.run() as r:
            holder["r"] = r
            r.marker("work")
        return "done"

    coro = agent()
    try:
        coro.send(None)
    except StopIteration as stop:
        returned = stop.value
    else:  # pragma: no cover - the agent awaits nothing
        raise AssertionError("the agent did not finish in one step")
    assert returned == "done"
    r = holder["r"]
    assert r.sealed and [e["kind"] for e in entries(r.run_id)] == ["run_meta", "marker", "run_end"]


# -- 2. a strict run's exit failure dropped without a trace once its awaiting task was cancelled ------


def test_a_strict_runs_seal_failure_after_its_exit_was_cancelled_is_logged_not_dropped(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/sdk.md, Failure modes: strict mode "raises on any recording failure"; a failure is never silent.
    The `async with` exit drains and seals in a thread of its own; when the task awaiting it is cancelled
    meanwhile (a timeout, a task group's cancel), the thread goes on alone, and the RecordingError it then
    hands back was thrown away: a run left unsealed (here: the store locked by another process at the
    seal) with no exception, no gap and no log line saying so."""
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "2")
    caplog.set_level(logging.WARNING, logger="bitexact.sdk")
    holder: dict[str, Any] = {}

    async def agent() -> None:
        async with bitexact.run(strict=True) as r:
            holder["r"] = r
            r.marker("work")
            holder["lock"] = held_by_another_process(home / "bitexact.db.lock")
            await asyncio.to_thread(holder["lock"].__enter__)  # another process holds the store from here

    async def main() -> None:
        task = asyncio.create_task(agent())
        while not [t for t in threading.enumerate() if t.name == "bitexact-exit"]:
            await asyncio.sleep(0.01)  # the exit is draining and sealing in its own thread
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    try:
        asyncio.run(main())
        for thread in [t for t in threading.enumerate() if t.name == "bitexact-exit"]:
            thread.join(30)
    finally:
        holder["lock"].__exit__(None, None, None)
    r = holder["r"]
    assert not r.sealed
    said = [rec.getMessage() for rec in caplog.records if r.run_id in rec.getMessage()]
    assert said, "the strict run's seal failure vanished with no trace"
