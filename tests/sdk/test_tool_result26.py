"""sdk26: a sync tool's result is asked ``isinstance`` of coroutine, generator and async generator in one call
(``tools._NOT_RETURNED``) before ``inspect``'s three tests, which run only when it is one of them.

What must not change: the answer is theirs for every result (an object whose ``__class__`` claims a generator's
type included, as ``isinstance`` reads it), and a hidden coroutine, generator and async generator are still
recorded as before: when awaited, as a stream, as an async stream; any other result as it returned.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import types
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import bitexact
from bitexact.sdk.tools import _NOT_RETURNED
from sdk.conftest import entries


async def _coroutine() -> int:
    return 1


def _generator() -> Iterator[int]:
    yield 1


async def _async_generator() -> AsyncIterator[int]:
    yield 1


class ClaimsGenerator:
    """Says it is a generator as ``isinstance`` asks (``__class__``), as a mock with a generator's spec does."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105
        return types.GeneratorType


def _results() -> list[Any]:
    return [None, 1, "text", {"a": 1}, [1], (1,), iter([1]), _coroutine(), _generator(), _async_generator(),
            ClaimsGenerator(), object(), functools.partial(_generator), _generator]


def test_one_isinstance_answers_as_inspects_three_tests() -> None:
    results = _results()
    try:
        for result in results:
            expected = inspect.iscoroutine(result) or inspect.isgenerator(result) or inspect.isasyncgen(result)
            assert isinstance(result, _NOT_RETURNED) is expected, result
        assert sum(isinstance(result, _NOT_RETURNED) for result in results) == 4
    finally:
        results[7].close()


def _hidden(make: Any) -> Any:
    @functools.wraps(make)
    def hide(*args: Any, **kwargs: Any) -> Any:  # a plain function returning what make returns
        return make(*args, **kwargs)

    return hide


@pytest.mark.usefixtures("sdk_home")
def test_hidden_coroutines_and_generators_are_recorded_as_before() -> None:
    coroutine = bitexact.record_tool(name="coroutine")(_hidden(_coroutine))
    generator = bitexact.record_tool(name="generator")(_hidden(_generator))
    async_generator = bitexact.record_tool(name="async_generator")(_hidden(_async_generator))
    plain = bitexact.record_tool(name="plain")(lambda: {"answer": 42})

    async def consume() -> list[int]:
        return [item async for item in async_generator()]

    with bitexact.run(name="results26") as run:
        assert asyncio.run(coroutine()) == 1
        assert list(generator()) == [1]
        assert asyncio.run(consume()) == [1]
        assert plain() == {"answer": 42}
        run_id = run.run_id
    by_tool = {entry["data"]["tool"]: entry["data"] for entry in entries(run_id) if entry["kind"] == "tool_call"}
    assert by_tool["coroutine"]["result"] == 1 and by_tool["coroutine"]["status"] == "ok"
    assert by_tool["plain"]["result"] == {"answer": 42}
    assert by_tool["generator"]["result"] == by_tool["async_generator"]["result"] == {"yielded": [1]}
    assert {data["status"] for data in by_tool.values()} == {"ok"}
