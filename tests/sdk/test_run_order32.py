"""Run scopes left out of order in one context (session 32): generators that each open a run in their body, as
docs/sdk.md advises for a generator, stepped side by side. The consumer's own run, still open around them,
recorded nothing more once both had ended: its context was set back to the first one's ended run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import bitexact
from sdk.conftest import entries


@bitexact.record_tool
def note(text: str) -> str:
    return text


def _source(name: str, n: int) -> Iterator[str]:
    with bitexact.run(name=name):
        for i in range(n):
            yield note(f"{name}-{i}")


def _notes(run_id: str | None) -> list[str]:
    return [e["data"]["args"][0] for e in entries(run_id) if e["kind"] == "tool_call"]


def test_the_consumers_run_records_on_after_zipped_generator_runs_end_out_of_order() -> None:
    with bitexact.run(name="consumer") as consumer:
        note("before")
        assert list(zip(_source("a", 2), _source("b", 5))) == [("a-0", "b-0"), ("a-1", "b-1")]
        assert bitexact.current_run() is consumer
        note("after")
    assert _notes(consumer.run_id) == ["before", "after"]


def test_three_runs_left_in_any_order_give_the_context_back_to_the_run_around_them() -> None:
    with bitexact.run(name="consumer") as consumer:
        first, second, third = _source("a", 9), _source("b", 9), _source("c", 9)
        next(first), next(second), next(third)
        second.close()
        first.close()
        third.close()
        assert bitexact.current_run() is consumer
        note("after")
    assert _notes(consumer.run_id) == ["after"]


def test_a_task_left_running_by_a_nested_run_still_records_into_no_run() -> None:
    """Runs ended in order are unchanged: a task a nested run left running, entering and leaving a run of
    its own, goes back to the nested run's context, which has ended (docs/sdk.md: never another run)."""
    async def main() -> tuple[str | None, object]:
        async with bitexact.run(name="outer") as outer:
            release = asyncio.Event()

            async def left_running() -> object:
                await release.wait()
                async with bitexact.run(name="own"):
                    pass
                return bitexact.current_run()

            async with bitexact.run(name="inner"):
                task = asyncio.ensure_future(left_running())
            release.set()
            seen = await task
        return outer.run_id, seen

    _outer, seen = asyncio.run(main())
    assert seen is None


def test_a_run_left_in_another_context_inside_a_nested_one_leaves_the_outer_exit_as_it_was() -> None:
    """A run whose block is left in another thread stays its context's run there (it cannot be reset there):
    the exit of the run around it, which it was entered over, still gives back the run before that."""
    with bitexact.run(name="top") as top:
        with bitexact.run(name="middle"):
            inner = _source("inner", 9)
            next(inner)
            closer = threading.Thread(target=inner.close)
            closer.start()
            closer.join()
        assert bitexact.current_run() is top
        note("after")
    assert _notes(top.run_id) == ["after"]
