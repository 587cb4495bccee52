"""The SDK under asyncio (the sixth review): each test is a bug it found, fixed.

Every test here fails on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import bitexact
from sdk.conftest import entries

# -- 1. an async generator tool left by `break` at the end of the run --------------------------------


def test_an_async_generator_tool_left_by_break_at_the_runs_end_is_recorded_in_the_run() -> None:
    """Issue 3: "Tool calls in threads and asyncio tasks of one run are all recorded"; docs/sdk.md: a
    generator tool's call "is recorded when it is exhausted, raises or is closed". `break` out of an
    `async for` does not close an async generator: asyncio's finalizer schedules its aclose() as a task,
    which ran only once the run's exit had begun (its drain is awaited in a worker thread), so the call
    became a gap "recorded after the run ended" and was never in the chain. The sync twin (`for` ...
    `break`) is closed at once and recorded."""

    @bitexact.record_tool
    async def tokens(prompt: str) -> AsyncIterator[str]:
        for token in ("a", "b", "c"):
            await asyncio.sleep(0)
            yield token

    async def agent() -> Any:
        async with bitexact.run() as r:
            async for token in tokens("hi"):
                if token == "b":
                    break
        return r

    r = asyncio.run(agent())
    calls = [e for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert r.failures.gaps == [], f"the call became a gap: {r.failures.gaps}"
    assert [c["data"]["result"] for c in calls] == [{"yielded": ["a", "b"], "closed_early": True}]


# -- 2. the exit's drain waited for a free worker of the agent's default executor -----------------------


def test_an_async_runs_exit_does_not_wait_for_the_agents_busy_default_executor() -> None:
    """docs/sdk.md: "`async with` drains in a worker thread so the event loop keeps turning"; issue 3:
    recording never changes what the agent does. The exit ran its drain with asyncio.to_thread, in the
    loop's default executor: when the agent's own blocking calls fill it (consumers awaiting
    `asyncio.to_thread(queue.get)`), the exit waited for one of them to end, and an agent whose job
    waits for something done after the run's block hung until that job gave up."""
    order: list[str] = []
    released = threading.Event()

    def consumer() -> None:  # the agent's blocking call: waits for what comes after the run
        released.wait(5)
        order.append("consumer")

    async def agent() -> Any:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
        job = asyncio.create_task(asyncio.to_thread(consumer))
        await asyncio.sleep(0)  # the consumer holds the executor's only worker
        async with bitexact.run() as r:
            r.marker("work")
        order.append("run ended")
        released.set()
        await job
        return r

    r = asyncio.run(agent())
    assert r.sealed
    assert order == ["run ended", "consumer"], f"the run's exit waited for the agent's executor: {order}"


# -- 3. a task recording while the run's exit has begun ------------------------------------------------


def test_a_task_recording_once_the_async_exit_has_begun_is_refused_not_written_beside_its_end() -> None:
    """docs/sdk.md: "Once the exit has begun, the run takes nothing more: a record another thread or task
    makes after that point is refused as after the run's end". The exit refused records only once it had
    recorded the exception that ended the run: while it made that marker (in its own thread, the loop
    turning), another task's records were still taken, landing beside the "run ended by an exception"
    marker although the exit had begun before they were made."""
    exiting, recorded = threading.Event(), threading.Event()

    class Stop(Exception):
        def __str__(self) -> str:  # read by the exit for its marker: the exit has begun
            exiting.set()
            recorded.wait(5)  # the other task records meanwhile
            return "stop"

    late: list[Any] = []

    async def other_task(r: Any) -> None:
        await asyncio.to_thread(exiting.wait, 5)
        late.append(r.marker("late"))
        recorded.set()

    async def agent() -> Any:
        holder: dict[str, Any] = {}
        try:
            async with bitexact.run() as r:
                holder["r"] = r
                task = asyncio.create_task(other_task(r))
                await asyncio.sleep(0)
                raise Stop
        except Stop:
            pass
        await task
        return holder["r"]

    r = asyncio.run(agent())
    notes = [e["data"]["note"] for e in entries(r.run_id) if e["kind"] == "marker"]
    assert notes == ["run ended by an exception"], f"a record made once the exit had begun was written: {notes}"
    assert late[0].gap is not None and late[0].gap.detail == "recorded after the run ended"
