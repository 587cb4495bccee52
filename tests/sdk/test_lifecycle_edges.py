"""The run lifecycle and concurrency of the Python SDK (runs, tools, contexts): regression tests.

Each test failed before the fix of the bug its docstring names.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.sdk import SdkArgumentError
from sdk.conftest import entries, journaled


def _tool_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "tool_call"]


class _UnprintableError(Exception):
    """An exception whose message cannot be read (its ``__str__`` raises), as some library errors do."""

    def __str__(self) -> str:
        raise RuntimeError("this error has no message")


# -- 1. an async generator tool outside a run ------------------------------------------------------


def test_outside_a_run_an_async_generator_tool_gets_what_is_sent_and_is_closed() -> None:
    """tools.py: "Outside a run it only calls the function"; the generator wrapper's "send/throw/close
    reach it". Outside a run the async generator wrapper re-yields with ``async for``: asend's value
    never reaches the tool (it gets None) and aclose() never closes it (its finally does not run)."""
    seen: list[Any] = []

    @bitexact.record_tool
    async def conversation() -> Any:
        try:
            reply = yield "question"
            seen.append(reply)
            yield "thanks"
        finally:
            seen.append("closed")

    async def agent() -> None:
        gen = conversation()
        assert await gen.__anext__() == "question"
        assert await gen.asend("answer") == "thanks"
        await gen.aclose()
        assert seen == ["answer", "closed"], "the tool must behave exactly as undecorated outside a run"

    asyncio.run(agent())


# -- 2. an exception whose message cannot be read ---------------------------------------------------


def test_a_run_ended_by_an_exception_whose_message_cannot_be_read_is_still_sealed() -> None:
    """docs/sdk.md: "An exception ends the run too: a marker records exception ... and the exception is
    re-raised unchanged" and the run "seals with run_end on exit". Run._record_exception calls
    str(exc) inside _finish's try, before the drain and the seal: the RuntimeError it raises skips
    the seal, so the run is left open (unsealed) for good, declared as "could not be sealed"."""
    with pytest.raises(_UnprintableError):
        with bitexact.run() as r:
            r.marker("working")
            raise _UnprintableError()
    assert r.sealed, f"the run was left unsealed: {r.failures.gaps}"
    written = entries(r.run_id)
    assert written[-1]["kind"] == "run_end"
    assert any(e["kind"] == "marker" and "exception" in e["data"] for e in written)


def test_a_tool_whose_exception_message_cannot_be_read_is_still_recorded() -> None:
    """tools.py: "each call is an observed tool_call: its arguments, its result or its error (recorded,
    then re-raised unchanged)". error_data() calls str(error); when that raises, the whole tool_call is
    dropped and replaced by a "capture failed" gap. Policy checks already read such a message safely
    (records._message); the tool's call (its arguments, that it failed, with which type) is lost."""

    @bitexact.record_tool
    def lookup(policy: str) -> str:
        raise _UnprintableError()

    with bitexact.run() as r:
        with pytest.raises(_UnprintableError):
            lookup("HX-1")
    calls = _tool_calls(r.run_id)
    assert len(calls) == 1, f"the tool call was not recorded; gaps: {r.failures.gaps}"
    assert calls[0]["data"]["status"] == "error"
    assert calls[0]["data"]["args"] == ["HX-1"]
    assert calls[0]["data"]["error"]["type"].endswith("_UnprintableError")


# -- 3. @bitexact.run on a generator function -----------------------------------------------------


@pytest.mark.parametrize("kind", ["generator", "async generator"])
def test_the_run_decorator_refuses_a_generator_function_rather_than_record_nothing(kind: str) -> None:
    """docs/sdk.md: "@bitexact.run(...) / @bitexact.run on a sync or async function (each call is one
    run)". Before the fix, on a generator function its wrapper opened the run, got the generator object
    back without running any of its body, and sealed the run at once; the body then ran with no run at
    all, and what it recorded was lost. It is refused where it is decorated, naming what to do instead."""
    if kind == "generator":
        def agent() -> Any:
            yield 1
    else:
        async def agent() -> Any:  # type: ignore[misc]
            yield 1
    with pytest.raises(SdkArgumentError, match="generator function 'agent'") as caught:
        bitexact.run(agent)
    assert caught.value.field == "fn"


# -- 4. a context bound to an ended run --------------------------------------------------------------


def test_a_task_left_running_by_an_ended_run_does_not_record_into_another_run() -> None:
    """docs/sdk.md: "The run is bound to the context that entered it (contextvars), so asyncio tasks
    started inside it record into it" and, once the exit has begun, "a record another thread or task
    makes after that point is refused as after the run's end". active.current_run() falls back to
    "the only open run" whenever the context's run is closed, a rule meant for plain threads: a task
    run A started records, after A ended, into run B, which never made the call."""

    @bitexact.record_tool
    def late_tool(note: str) -> str:
        return note

    async def agent() -> tuple[str | None, str | None]:
        go, done = asyncio.Event(), asyncio.Event()

        async def leftover() -> None:  # started inside run A, outlives it
            await go.wait()
            late_tool("started by A")
            done.set()

        async with bitexact.run(name="A") as a:
            task = asyncio.create_task(leftover())
        async with bitexact.run(name="B") as b:
            go.set()
            await done.wait()
        await task
        return a.run_id, b.run_id

    run_a, run_b = asyncio.run(agent())
    assert _tool_calls(run_b) == [], "run B holds a tool call made by a task of run A"


def test_a_tool_called_inside_a_run_that_could_not_start_is_not_recorded_into_the_outer_run(
    tmp_path: Path,
) -> None:
    """docs/sdk.md: "A run that cannot start (store, keys, policy) records nothing and the agent runs
    on." The inner run's context is bound to it, but current_run() sees it is not open and falls back
    to the one open run: the tool called inside the inner run is recorded into the outer one."""
    unusable = tmp_path / "a-file"
    unusable.write_text("not a directory")

    @bitexact.record_tool
    def inner_tool() -> int:
        return 1

    with bitexact.run(name="outer") as outer:
        with bitexact.run(name="inner", home=unusable / "home") as inner:
            assert not inner.open  # could not start
            inner_tool()
    assert _tool_calls(outer.run_id) == [], "the outer run holds a call made inside another run"


# -- 5. an async callable object -------------------------------------------------------------------


def test_an_async_callable_object_is_recorded_when_it_runs_not_as_a_coroutine_object() -> None:
    """tools.py: record_tool wraps "a sync or async function": each call is recorded with "its result
    or its error", and "every entry recorded while it runs carries ctx=<tool>". An object with an
    ``async def __call__`` is not seen as async (inspect.iscoroutinefunction): the sync wrapper records
    an ok call whose result is the coroutine object's repr before anything ran, the error it then
    raises is never recorded, and what it records carries no ctx."""

    class Lookup:
        async def __call__(self, policy: str) -> str:
            run = bitexact.current_run()
            assert run is not None
            run.marker("looking up")
            raise ValueError(f"no policy {policy}")

    lookup = bitexact.record_tool(name="lookup")(Lookup())

    async def agent() -> str | None:
        async with bitexact.run() as r:
            with pytest.raises(ValueError):
                await lookup("HX-2")
        return r.run_id

    run_id = asyncio.run(agent())
    (call,) = _tool_calls(run_id)
    assert call["data"]["status"] == "error", f"recorded as {call['data']}"
    (marker,) = [e for e in entries(run_id) if e["kind"] == "marker"]
    assert marker.get("ctx") == "lookup"


# -- 6. a generator tool's yielded values --------------------------------------------------------


def test_a_generator_tool_records_what_it_yielded_not_what_the_object_became_later() -> None:
    """docs/sdk.md: a generator tool is recorded "with result: {"yielded": [...]}" - what it yielded,
    in order (tools._streamed). The wrapper keeps references to the yielded objects and serializes them
    only when the generator ends: a generator reusing one buffer (or a consumer changing what it was
    handed) is recorded as yielding the last state every time. The arguments are already taken "as
    the tool was called" for the same reason."""

    @bitexact.record_tool
    def pages() -> Any:
        page: list[int] = []
        for number in range(3):
            page.clear()
            page.append(number)
            yield page

    with bitexact.run() as r:
        received = [list(page) for page in pages()]
    assert received == [[0], [1], [2]]
    (call,) = _tool_calls(r.run_id)
    assert call["data"]["result"]["yielded"] == [[0], [1], [2]]


# -- 7. Ctrl-C while the exit drains --------------------------------------------------------------


def test_a_keyboard_interrupt_during_the_exit_drain_keeps_every_unwritten_entry_journaled(home: Path) -> None:
    """capture-controls.md: an entry whose call returned "is never lost": it is durable in a journal
    until it is in the chain, and the exit "writes every queued entry before it seals ... each entry
    still unwritten is declared ... and the run is left unsealed - its journals stay for bitexact
    repair to fold". Run._finish only catches Exception: a KeyboardInterrupt (Ctrl-C) arriving while
    the exit waits for the writer goes to the finally, which closes the journal slots with remove=True
    (no orphan was named), deleting the journals of entries the writer has not written yet. If the
    process then ends (what Ctrl-C usually does), those acknowledged entries are gone."""
    import threading

    gate = threading.Event()
    with pytest.raises(KeyboardInterrupt):
        with bitexact.run(journal_small=True) as r:
            assert r._queue is not None
            write = r._queue._write

            def held_write(items: list[Any]) -> Any:  # the writer is busy (a slow disk)
                gate.wait(30)
                return write(items)

            r._queue._write = held_write
            for n in range(3):
                r.marker(f"acknowledged {n}")  # durable in a journal slot when the call returns
            assert len(journaled(home, r.run_id)) == 3

            def interrupted(timeout: float) -> bool:  # Ctrl-C arrives while the exit waits
                raise KeyboardInterrupt

            r._queue.drain = interrupted  # type: ignore[method-assign]
    try:
        assert len(journaled(home, r.run_id)) == 3, "the journals of unwritten entries were removed"
    finally:
        gate.set()
        if r._queue is not None and r._queue._thread is not None:
            r._queue._thread.join(30)


# -- 8. a policy check ended by a BaseException -----------------------------------------------------


def test_a_check_ended_by_keyboard_interrupt_is_recorded_as_error() -> None:
    """docs/sdk.md: "r.check(check, fn, *args, **kwargs) ... records what it returned (or error if it
    raised, re-raising)"; policy_check_data already takes any BaseException as error. Run.check catches
    only Exception: a check interrupted by Ctrl-C (or ended by SystemExit, or cancelled) leaves no
    policy check at all, where a tool ended the same way is recorded."""

    def slow_check() -> str:
        raise KeyboardInterrupt

    with bitexact.run() as r:
        with pytest.raises(KeyboardInterrupt):
            r.check("payout-limit", slow_check)
    checks = [e for e in entries(r.run_id) if "policy_check" in e["data"]]
    assert len(checks) == 1, "the interrupted check was not recorded"
    assert checks[0]["data"]["policy_check"]["outcome"] == "error"
