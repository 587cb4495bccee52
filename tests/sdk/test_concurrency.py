"""32 threads and 32 asyncio tasks of one run: every tool call recorded, whole, in record order."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import bitexact
from bitexact.crypto.keystore import KeyStore
from bitexact.evidence.export import RunSource, export_run
from bitexact.evidence.verify import Pins, verify_path
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries

WORKERS = 32
CALLS = 6


def _verify(run_id: str, tmp_path: Path, home: Path) -> str:
    recorder, _ = recorder_for()
    key = KeyStore(home).current()
    result = export_run(RunSource.from_store(recorder.store, run_id), tmp_path / "run.bundle.json", key)
    verdict = verify_path(result.path, Pins(bundle_keys=frozenset({key.public_hex}),
                                            recorder_keys=frozenset({key.public_hex}), require_sealed=True))
    assert verdict.ok, verdict.line
    return verdict.line


def test_32_threads_each_calling_a_tool(tmp_path: Path, home: Path) -> None:
    @bitexact.record_tool
    def score(worker: int, call: int) -> dict[str, object]:
        run = bitexact.current_run()
        assert run is not None
        run.marker(f"scoring {worker}.{call}")  # nested entry, with ctx
        return {"worker": worker, "call": call, "blob": f"{worker}-{call}-" * 40}

    start = threading.Barrier(WORKERS)

    def worker(index: int) -> None:
        start.wait()
        for call in range(CALLS):
            assert score(index, call)["worker"] == index

    with bitexact.run() as r:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    written = entries(r.run_id)
    calls = [e for e in written if e["kind"] == "tool_call"]
    markers = [e for e in written if e["kind"] == "marker"]
    assert len(calls) == WORKERS * CALLS and len(markers) == WORKERS * CALLS
    assert {(c["data"]["args"][0], c["data"]["args"][1]) for c in calls} == {
        (w, c) for w in range(WORKERS) for c in range(CALLS)}
    for c in calls:  # whole: nothing of another call interleaved into it
        w, n = c["data"]["args"]
        assert c["data"]["result"] == {"worker": w, "call": n, "blob": f"{w}-{n}-" * 40}
    for w in range(WORKERS):  # each thread's calls in the order it made them
        steps = [c["step"] for c in calls if c["data"]["args"][0] == w]
        assert [c["data"]["args"][1] for c in calls if c["data"]["args"][0] == w] == list(range(CALLS))
        assert steps == sorted(steps)
    assert [e["step"] for e in written] == list(range(len(written)))
    assert all(m.get("ctx") == "score" for m in markers)
    _verify(r.run_id, tmp_path, home)  # type: ignore[arg-type]


def test_32_asyncio_tasks_each_calling_an_async_tool(tmp_path: Path, home: Path) -> None:
    @bitexact.record_tool
    async def fetch(task: int, call: int) -> str:
        await asyncio.sleep(0)
        return f"{task}:{call}"

    async def task(index: int) -> None:
        for call in range(CALLS):
            assert await fetch(index, call) == f"{index}:{call}"

    async def agent() -> str | None:
        async with bitexact.run() as r:
            await asyncio.gather(*(task(i) for i in range(WORKERS)))
        return r.run_id

    run_id = asyncio.run(agent())
    calls = [e for e in entries(run_id) if e["kind"] == "tool_call"]
    assert sorted(c["data"]["result"] for c in calls) == sorted(f"{t}:{c}" for t in range(WORKERS) for c in range(CALLS))
    for t in range(WORKERS):
        assert [c["data"]["args"][1] for c in calls if c["data"]["args"][0] == t] == list(range(CALLS))
    _verify(run_id, tmp_path, home)  # type: ignore[arg-type]


def test_threads_mixing_large_and_small_entries_keep_record_order(home: Path) -> None:
    big = "z" * ((1 << 20) + 1)
    order: list[int] = []
    lock = threading.Lock()

    def worker(index: int) -> None:
        run = bitexact.current_run()
        assert run is not None
        for call in range(3):
            with lock:  # the test's own record order, to compare the chain against
                payload = {"tool": "t", "who": [index, call]}
                if (index + call) % 4 == 0:
                    payload["result"] = big
                run.record("tool_call", payload)
                order.append(index * 10 + call)

    with bitexact.run() as r:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    calls = [e["data"]["who"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert [w * 10 + c for w, c in calls] == order
