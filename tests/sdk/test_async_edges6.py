"""The SDK under asyncio (the sixth review): each test is a bug it found, fixed.

Every test here fails on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
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
