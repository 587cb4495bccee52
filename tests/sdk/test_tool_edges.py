"""Edges of record_tool and RecordHandle, found in review: generator tools, ctx after a tool returned,
arguments as called, and a handle nothing can change through what it reads."""

from __future__ import annotations

import asyncio
import inspect

import pytest

import bitexact
from sdk.conftest import entries


def _tool_calls(run_id: str | None) -> list[dict]:
    return [e for e in entries(run_id) if e["kind"] == "tool_call"]


def test_a_wrapped_generator_function_stays_a_generator_function() -> None:
    @bitexact.record_tool
    def pages(n: int):
        yield from range(n)

    assert inspect.isgeneratorfunction(pages)


def test_a_wrapped_async_generator_function_stays_an_async_generator_function() -> None:
    @bitexact.record_tool
    async def pages(n: int):
        for i in range(n):
            yield i

    assert inspect.isasyncgenfunction(pages)


def test_a_generator_tool_records_what_it_yielded_and_entries_while_it_runs_carry_its_ctx() -> None:
    @bitexact.record_tool
    def pages(n: int):
        run = bitexact.current_run()
        assert run is not None
        run.marker("fetching pages")
        yield from range(n)

    with bitexact.run() as r:
        assert list(pages(2)) == [0, 1]
    marker = next(e for e in entries(r.run_id) if e["kind"] == "marker")
    assert marker.get("ctx") == "pages"
    assert "repr" not in str(_tool_calls(r.run_id)[0]["data"]["result"])


def test_an_exception_raised_while_a_generator_tool_is_iterated_is_recorded() -> None:
    @bitexact.record_tool
    def pages():
        yield 1
        raise LookupError("page 2 missing")

    with bitexact.run() as r:
        with pytest.raises(LookupError):
            list(pages())
    data = _tool_calls(r.run_id)[0]["data"]
    assert data["status"] == "error"


def test_a_task_a_tool_started_does_not_carry_its_ctx_once_the_tool_returned() -> None:
    @bitexact.record_tool
    async def schedule(ready: asyncio.Event) -> asyncio.Task[None]:
        async def later() -> None:
            await ready.wait()
            run = bitexact.current_run()
            assert run is not None
            run.marker("after the tool returned")

        return asyncio.get_running_loop().create_task(later())

    async def agent() -> bitexact.Run:
        ready = asyncio.Event()
        async with bitexact.run() as r:
            task = await schedule(ready)  # the tool has returned (and its tool_call is recorded)
            ready.set()
            await task
        return r

    r = asyncio.run(agent())
    marker = next(e for e in entries(r.run_id) if e["kind"] == "marker")
    assert "ctx" not in marker


def test_a_tool_call_records_its_arguments_as_the_tool_was_called() -> None:
    @bitexact.record_tool
    def add_to_cart(cart: list[str], item: str) -> int:
        cart.append(item)
        return len(cart)

    with bitexact.run() as r:
        assert add_to_cart([], "sku-1") == 1
    assert _tool_calls(r.run_id)[0]["data"]["args"] == [[], "sku-1"]


def test_arguments_serialized_once_as_called_stay_themselves_when_the_result_takes_the_slow_path() -> None:
    # The arguments are written to JSON once, as called, and spliced into the entry. A result with a
    # NaN sends the whole entry through the converter's slow path, which must keep them as they were
    # written (not record the spliced JSON object by its repr).
    @bitexact.record_tool
    def score(weights: dict[str, float], label: str, *, scale: int = 1) -> float:
        return float("nan")

    with bitexact.run() as r:
        assert score({"a": 0.5}, "x", scale=3) != 0
    data = _tool_calls(r.run_id)[0]["data"]
    assert data["args"] == [{"a": 0.5}, "x"] and data["kwargs"] == {"scale": 3}
    assert data["result"] == "nan"


def test_tool_call_data_takes_arguments_already_serialized() -> None:
    import orjson

    from bitexact.sdk.jsonable import WrittenJSON, dump_json
    from bitexact.sdk.tools import tool_call_data

    data = tool_call_data("t", WrittenJSON(orjson.Fragment(b'[1,"a"]')), WrittenJSON(orjson.Fragment(b'{"k":true}')),
                          result=2)
    assert orjson.loads(dump_json(data)) == {"tool": "t", "args": [1, "a"], "kwargs": {"k": True},
                                             "result": 2, "status": "ok"}


def test_a_record_handle_cannot_be_changed_through_what_it_reads() -> None:
    with bitexact.run() as r:
        handle = r.marker("reviewed")
        step = handle["step"]
        read = handle.result()
        with pytest.raises(TypeError):
            read["step"] = step + 100  # type: ignore[index]
    assert handle["step"] == step


def test_changing_what_a_handle_read_does_not_change_the_step_a_decision_binds() -> None:
    with bitexact.run() as r:
        handle = r.marker("reviewed")
        step = handle["step"]
        try:
            handle.result()["step"] = step + 100  # type: ignore[index]
        except TypeError:
            pass
        decision = r.human_decision("adjuster:m", "approve", binds_step=handle)
        assert decision["data"]["binds_step"] == step
