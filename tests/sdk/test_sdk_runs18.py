"""The eighteenth audit's SDK findings (runs, tools, nondeterminism), each reproduced through a real run and store.

1. A data directory removed while a run recorded: the run's entries went into the deleted database file, the
   run sealed (``r.sealed`` true, strict too) and nothing said they were lost; every later run of the process
   went into the same deleted file.
2. capture_nondeterminism: a read by a task the run left running, made while the run's exit drained, was declared
   an ``invalid_argument`` gap "recorded after the run ended" (a failures-record line and a warning each), where
   a read once the run had ended is rightly not recorded at all.
3. ``@record_tool`` over a sync function returning a coroutine (an ``async def`` under a decorator that hides it)
   recorded an ``ok`` call whose result was the coroutine's repr, before the tool had run: its result and its
   error were never recorded.
4. A process forked after the SDK had opened its store (a ``multiprocessing`` worker under the fork start method,
   a child forked inside a run) could record no run: every one was a start gap, "this store was opened by
   process N", since the shared store of the parent was handed to it.
5. ``@record_tool`` over an object whose ``__call__`` is a generator (or async generator) function recorded an
   ``ok`` call whose result was the generator's repr: what it yielded was never recorded.
6. Strict mode: a ``BITEXACT_CONTEXT`` that is not a context was quoted whole in the error (100 KB of it),
   where every other message quotes a context cut to 80 characters.
7. ``@bitexact.run`` over a sync-looking function returning a coroutine (an ``async def`` under a decorator that
   hides it) opened and sealed an empty run at the call, and what the coroutine did was recorded nowhere,
   without a word; so did one returning a generator.
8. ``r.check(name, async_fn)`` recorded the check as ``unknown`` with the coroutine's repr before it ran; what it
   decided (or raised) was never recorded.
9. Strict mode, a recording failure (the store kept locked by another process) of a tool or check that raised a
   control-flow exception: ``RecordingError`` replaced it, so a cancelled task ended with RecordingError instead
   of CancelledError, and Ctrl-C in a tool (KeyboardInterrupt) became a RecordingError.
10. ``handle.result("5")``, ``handle.step(...)``, ``r.drain(...)``, ``r.last_step(kind, timeout)`` with a timeout
    that is no number raised ``TypeError: '>' not supported between instances of 'str' and 'float'``, naming
    no argument.
11. capture_nondeterminism: a module imported during the run (``from datetime import datetime``, a table keyed by
    that type, as xmlrpc.client builds) kept the stand-in class after the run, for the life of the process:
    ``xmlrpc.client.dumps`` of a datetime raised "cannot marshal <class 'datetime.datetime'> objects" long
    after the run; ``from time import time`` kept the wrapper.
12. ``@record_tool`` over a sync function returning a generator (a generator function under a decorator that
    hides it) recorded an ``ok`` call whose result was the generator's repr: what it yielded was never recorded.
"""

from __future__ import annotations

import asyncio
import datetime
import importlib
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bitexact
from bitexact.sdk import RecordingError
from bitexact.sdk.causal import ENV_VAR, ContextFormatError
from bitexact.sdk.failures import read_failures
from sdk.conftest import entries
from store.lock_holder import held_by_another_process

SRC = Path(__file__).resolve().parents[2] / "src"


def _show(home: Path, run_id: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BITEXACT_HOME": str(home), "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "bitexact", "show", run_id, "--json"], env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_data_directory_removed_mid_run_is_declared_lost_and_the_next_run_records_at_the_path(
        sdk_home: Path) -> None:
    with bitexact.run() as r:
        r.marker("before")
        shutil.rmtree(sdk_home)
        r.marker("after")
    assert r.run_id is not None
    assert not r.sealed  # sealed into a file nobody can read, it would read as complete
    gaps = read_failures(sdk_home, r.run_id)
    assert [g["cause"] for g in gaps] == ["storage_unavailable"]
    assert "was removed or replaced while the run recorded" in gaps[0]["detail"]
    assert str(sdk_home / "bitexact.db") in gaps[0]["detail"]

    # A later run of the same process opens the store now at the path, where a reader finds it.
    with bitexact.run() as later:
        later.marker("kept")
    assert later.sealed
    assert [e["kind"] for e in entries(later.run_id)] == ["run_meta", "marker", "run_end"]
    assert later.run_id is not None
    assert _show(sdk_home, later.run_id).returncode == 0


def test_strict_a_data_directory_removed_mid_run_raises_at_the_exit(sdk_home: Path) -> None:
    with pytest.raises(RecordingError) as raised:
        with bitexact.run(strict=True) as r:
            r.marker("before")
            shutil.rmtree(sdk_home)
    assert raised.value.cause == "storage_unavailable"
    assert "was removed or replaced while the run recorded" in str(raised.value)
    assert not r.sealed
    assert r.run_id is not None
    assert [g["cause"] for g in read_failures(sdk_home, r.run_id)] == ["storage_unavailable"]


def test_nondeterminism_read_while_the_run_exits_is_no_gap(sdk_home: Path) -> None:
    late_reads = 0
    body_done = False

    async def background(r: bitexact.Run) -> None:
        nonlocal late_reads
        while r.open:
            random.random()
            if body_done:
                late_reads += 1
            await asyncio.sleep(0)

    async def main() -> bitexact.Run:
        nonlocal body_done
        async with bitexact.run(capture_nondeterminism=True) as r:
            task = asyncio.create_task(background(r))
            await asyncio.sleep(0)
            for i in range(4):  # written after the call: the exit drains them while the task reads on
                r.context_from_bytes(f"blob{i}", bytes([i]) * (2 * 1024 * 1024))
            body_done = True
        await task
        return r

    r = asyncio.run(main())
    assert late_reads > 0  # the task did read while the exit drained
    assert r.run_id is not None and r.sealed
    assert read_failures(sdk_home, r.run_id) == []
    stored = entries(r.run_id)
    assert stored[-1]["kind"] == "run_end"
    assert {e["data"]["source"] for e in stored if e["kind"] == "nondet"} == {"random.random"}


def _hides_async(fn):  # type: ignore[no-untyped-def]
    """A decorator that makes an ``async def`` look like a sync function (no functools.wraps, no marking)."""
    def call(*args, **kwargs):  # type: ignore[no-untyped-def]
        return fn(*args, **kwargs)
    return call


def test_a_sync_tool_returning_a_coroutine_is_recorded_when_awaited(sdk_home: Path) -> None:
    @bitexact.record_tool(name="lookup")
    @_hides_async
    async def lookup(x: int) -> int:
        run = bitexact.current_run()
        if run is not None:
            run.marker("inside")
        await asyncio.sleep(0)
        if x < 0:
            raise ValueError("negative")
        return x * 5

    async def main() -> tuple[bitexact.Run, object]:
        async with bitexact.run() as r:
            assert await lookup(2) == 10
            with pytest.raises(ValueError, match="negative"):
                await lookup(-1)
            never = lookup(3)  # left unawaited until after the run
        return r, never

    r, never = asyncio.run(main())
    assert asyncio.run(never) == 15  # type: ignore[arg-type]  # the agent's value, as unwrapped
    stored = entries(r.run_id)
    calls = [e for e in stored if e["kind"] == "tool_call"]
    assert [(c["data"]["result"], c["data"]["status"], c["data"].get("error")) for c in calls] == [
        (10, "ok", None),
        (None, "error", {"type": "builtins.ValueError", "message": "negative"}),
        ({"awaited": False}, "ok", None),
    ]
    markers = [e for e in stored if e["kind"] == "marker"]
    assert [m.get("ctx") for m in markers] == ["lookup", "lookup"]  # ran inside the tool


def test_a_forked_child_records_its_own_run(sdk_home: Path) -> None:
    read_end, write_end = os.pipe()
    with bitexact.run() as parent:  # the parent's store is open (and a run of it too) at the fork
        parent.marker("before the fork")
        pid = os.fork()
        if pid == 0:  # the child: its exit code says whether its own run recorded and sealed
            code = 3
            try:
                os.close(read_end)
                with bitexact.run() as child:
                    child.marker("in the child")
                os.write(write_end, (child.run_id or "").encode())
                code = 0 if child.sealed else 1
            finally:
                os._exit(code)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            child_id = pipe.read().decode()
        _, status = os.waitpid(pid, 0)
        parent.marker("after the fork")
    assert os.waitstatus_to_exitcode(status) == 0
    assert parent.sealed
    child_entries = entries(child_id)
    assert [e["kind"] for e in child_entries] == ["run_meta", "marker", "run_end"]
    assert child_entries[1]["data"]["note"] == "in the child"
    assert [e["data"].get("note") for e in entries(parent.run_id) if e["kind"] == "marker"] == [
        "before the fork", "after the fork"]


class _Pages:
    def __call__(self, n: int):  # type: ignore[no-untyped-def]
        for i in range(n):
            yield {"page": i}


class _AsyncPages:
    async def __call__(self, n: int):  # type: ignore[no-untyped-def]
        for i in range(n):
            yield {"page": i}


def test_a_callable_object_whose_call_is_a_generator_is_a_generator_tool(sdk_home: Path) -> None:
    pages = bitexact.record_tool(_Pages(), name="pages")
    async_pages = bitexact.record_tool(_AsyncPages(), name="async_pages")

    async def consume() -> list[object]:
        return [item async for item in async_pages(2)]

    with bitexact.run() as r:
        assert list(pages(2)) == [{"page": 0}, {"page": 1}]
        assert asyncio.run(consume()) == [{"page": 0}, {"page": 1}]
    calls = [e["data"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert [(c["tool"], c["args"], c["result"]) for c in calls] == [
        ("pages", [2], {"yielded": [{"page": 0}, {"page": 1}]}),
        ("async_pages", [2], {"yielded": [{"page": 0}, {"page": 1}]}),
    ]


def test_strict_a_huge_malformed_context_setting_is_quoted_cut_short(sdk_home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "bxc." + "a" * 100_000)
    with pytest.raises(ContextFormatError) as raised:
        with bitexact.run(strict=True):
            pass
    assert raised.value.field == ENV_VAR
    message = str(raised.value)
    assert message.startswith(f"{ENV_VAR}='bxc.aaaa")
    assert "is not a causal context: a context has 4 dot-separated parts" in message
    assert len(message) < 400


def test_run_over_a_function_returning_a_coroutine_declares_it(sdk_home: Path) -> None:
    @bitexact.run
    @_hides_async
    async def agent() -> int:
        return 7

    coroutine = agent()
    assert asyncio.run(coroutine) == 7  # the agent's value, unchanged
    runs = list(_runs(sdk_home))
    assert len(runs) == 1
    gaps = read_failures(sdk_home, runs[0])
    assert [g["cause"] for g in gaps] == ["invalid_argument"]
    assert gaps[0]["detail"].startswith("_hides_async.<locals>.call returned a coroutine: ")
    markers = [e for e in entries(runs[0]) if e["kind"] == "marker"]
    assert [m["data"]["gap"]["cause"] for m in markers] == ["invalid_argument"]  # the chain says it too


def test_strict_run_over_a_function_returning_a_coroutine_raises(sdk_home: Path) -> None:
    @bitexact.run(strict=True)
    @_hides_async
    async def agent() -> int:
        return 7

    with pytest.raises(RecordingError, match="returned a coroutine"):
        agent()


def _runs(home: Path) -> list[str]:
    from bitexact.sdk.stores import recorder_for

    recorder, _ = recorder_for(home)
    return [run.run_id for run in recorder.store.runs()]


def test_an_async_check_is_recorded_with_what_it_decided(sdk_home: Path) -> None:
    async def within_limit(amount: int) -> str:
        await asyncio.sleep(0)
        if amount < 0:
            raise ValueError("negative amount")
        return "pass" if amount <= 100 else "fail"

    async def main() -> bitexact.Run:
        async with bitexact.run() as r:
            assert await r.check("limit", within_limit, 50) == "pass"
            assert await r.check("limit", within_limit, 500) == "fail"
            with pytest.raises(ValueError, match="negative amount"):
                await r.check("limit", within_limit, -1)
        return r

    r = asyncio.run(main())
    checks = [e["data"]["policy_check"] for e in entries(r.run_id) if e["kind"] == "marker"]
    assert [(c["outcome"], c["decided"], c.get("error")) for c in checks] == [
        ("pass", True, None),
        ("fail", True, None),
        ("error", False, {"type": "builtins.ValueError", "message": "negative amount"}),
    ]


def test_strict_a_control_flow_exception_stays_the_one_raised_when_its_record_fails(
        sdk_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.2")

    @bitexact.record_tool
    async def slow(started: asyncio.Event) -> None:
        started.set()
        await asyncio.sleep(60)

    @bitexact.record_tool
    def interrupted() -> None:
        raise KeyboardInterrupt

    @bitexact.record_tool
    def failing() -> None:
        raise ValueError("tool failed")

    def interrupted_check() -> str:
        raise KeyboardInterrupt

    async def main() -> tuple[list[str], bitexact.Run]:
        from bitexact.store.sqlite import companions

        raised: list[str] = []
        async with bitexact.run(strict=True) as r:
            assert r.recorder is not None
            lock = companions(r.recorder.store.path, ".lock")[0]  # type: ignore[attr-defined]
            with held_by_another_process(lock):
                started = asyncio.Event()
                task = asyncio.create_task(slow(started))
                await started.wait()
                task.cancel()
                try:
                    await task
                except BaseException as exc:  # noqa: BLE001 - which one is the point
                    raised.append(type(exc).__name__)
                for call in (interrupted, failing, lambda: r.check("c", interrupted_check)):
                    try:
                        call()
                    except BaseException as exc:  # noqa: BLE001
                        raised.append(type(exc).__name__)
        return raised, r

    raised, r = asyncio.run(main())
    # The control-flow exceptions stay themselves; an ordinary exception's record failing raises RecordingError.
    assert raised == ["CancelledError", "KeyboardInterrupt", "RecordingError", "KeyboardInterrupt"]
    assert r.run_id is not None
    gaps = read_failures(sdk_home, r.run_id)
    assert [(g["cause"], g.get("kind")) for g in gaps][:4] == [("storage_unavailable", "tool_call")] * 3 + [
        ("storage_unavailable", "marker")]  # each declared, none lost


@pytest.mark.parametrize("timeout", ["5", True, [1]])
def test_a_timeout_that_is_no_number_is_refused_by_name(sdk_home: Path, timeout: object) -> None:
    from bitexact.sdk import SdkArgumentError

    with bitexact.run() as r:
        handle = r.marker("x")
        calls = (lambda: handle.result(timeout), lambda: handle.step(timeout),  # type: ignore[arg-type]
                 lambda: r.drain(timeout), lambda: r.last_step("marker", timeout))  # type: ignore[arg-type]
        for call in calls:
            with pytest.raises(SdkArgumentError, match="timeout must be a number of seconds") as raised:
                call()
            assert raised.value.field == "timeout"
        # Numbers still bound the wait as before: negative and NaN not at all, infinity as long as a wait can.
        assert handle.step(-1) == handle.step(float("nan")) == handle.step(float("inf")) == 1


LATE_MODULE = """
from datetime import datetime
from time import time

DISPATCH = {datetime: "datetime"}


def kind(value):
    return DISPATCH[type(value)]
"""


def test_a_module_imported_during_a_capturing_run_gets_the_real_sources_back(
        sdk_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "late_import18.py").write_text(LATE_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "late_import18", raising=False)
    real_datetime, real_time = datetime.datetime, time.time
    with bitexact.run(capture_nondeterminism=True):
        late = importlib.import_module("late_import18")
        assert late.kind(real_datetime(2020, 1, 1)) == "datetime"  # a type-keyed table finds a real datetime
    assert late.datetime is real_datetime and late.time is real_time
    assert late.kind(real_datetime(2020, 1, 1)) == "datetime"
    assert type(real_datetime.now()) is late.datetime


def _hides_generator(fn):  # type: ignore[no-untyped-def]
    """A decorator that makes a generator function look like a plain function."""
    def call(*args, **kwargs):  # type: ignore[no-untyped-def]
        return fn(*args, **kwargs)
    return call


def test_a_sync_tool_returning_a_generator_is_a_generator_tool(sdk_home: Path) -> None:
    @bitexact.record_tool(name="pages", custody={"result.secret": "hash-only"})
    @_hides_generator
    def pages(n: int):  # type: ignore[no-untyped-def]
        for i in range(n):
            run = bitexact.current_run()
            assert run is not None
            run.marker(f"page {i}")
            yield {"page": i, "secret": f"s{i}"}
        return "end"

    with bitexact.run() as r:
        assert [p["page"] for p in pages(2)] == [0, 1]
        left = pages(3)
        next(left)
        left.close()
    stored = entries(r.run_id)
    calls = [e for e in stored if e["kind"] == "tool_call"]
    results = [c["data"]["result"] for c in calls]
    # The custody on result.secret covers every item (widened to result.yielded, as for an unhidden generator).
    assert results[0] == {"yielded": "[hash-only]", "returned": "[hash-only]"}
    assert results[1]["closed_early"] is True and results[1]["yielded"] == "[hash-only]"
    pages_marked = [e for e in stored if e["kind"] == "marker" and "gap" not in e["data"]]
    assert [e.get("ctx") for e in pages_marked] == ["pages"] * 3  # each step ran inside the tool


def test_run_over_a_function_returning_a_generator_declares_it(sdk_home: Path) -> None:
    @bitexact.run
    @_hides_generator
    def agent():  # type: ignore[no-untyped-def]
        yield 1

    assert list(agent()) == [1]  # the agent's items, unchanged
    runs = _runs(sdk_home)
    assert len(runs) == 1
    gaps = read_failures(sdk_home, runs[0])
    assert [g["detail"].split(":")[0] for g in gaps] == ["_hides_generator.<locals>.call returned a generator"]
