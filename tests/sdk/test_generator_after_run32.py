"""A generator tool that outlives its run (session 32): recorded as it stood when the run ended (``closed_early``),
but every item it yielded after that was still copied (serialized and parsed) into a list nothing would ever
record: an endless feed stepped after the run held each of its items again, for as long as it ran."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import AsyncIterator, Iterator

import bitexact
from sdk.conftest import entries


class Counted:
    """An item the SDK can only write as its repr: each copy the recording makes of it calls __repr__."""

    copies = 0

    def __repr__(self) -> str:
        Counted.copies += 1
        return "Counted()"


@bitexact.record_tool
def feed() -> Iterator[object]:
    while True:
        yield Counted()


@bitexact.record_tool
async def afeed() -> AsyncIterator[object]:
    while True:
        yield Counted()


def _result(run_id: str | None) -> object:
    [call] = [e["data"] for e in entries(run_id) if e["kind"] == "tool_call"]
    return call["result"]


def test_items_a_generator_tool_yields_after_its_run_ended_are_not_copied() -> None:
    with bitexact.run() as r:
        items = feed()
        next(items)
    assert _result(r.run_id) == {"yielded": [{"repr": "Counted()"}], "closed_early": True}
    Counted.copies = 0
    for _ in range(100):
        next(items)
    assert Counted.copies == 0, "each item yielded after the run was copied for a record already written"
    items.close()


def test_memory_a_generator_tool_holds_after_its_run_does_not_grow_with_what_it_yields() -> None:
    @bitexact.record_tool
    def pages() -> Iterator[dict[str, str]]:
        while True:
            yield {"page": "x" * 1000}

    with bitexact.run():
        stream = pages()
        next(stream)
    tracemalloc.start()
    try:
        for _ in range(10_000):
            next(stream)
        gc.collect()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 2_000_000, f"{held} bytes held after 10,000 items of 1 KB (about 12 MB before)"
    stream.close()


def test_an_async_generator_tool_after_its_run_likewise() -> None:
    async def go() -> str | None:
        async with bitexact.run() as r:
            items = afeed()
            await items.__anext__()
        Counted.copies = 0
        for _ in range(100):
            await items.__anext__()
        assert Counted.copies == 0
        await items.aclose()
        return r.run_id

    run_id = asyncio.run(go())
    assert _result(run_id) == {"yielded": [{"repr": "Counted()"}], "closed_early": True}
