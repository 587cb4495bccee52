"""The run's background writer queue is bounded: past BITEXACT_QUEUE_MAX_BYTES a recording call waits for room.

The entry is journaled before it is queued, so the bound slows a fast agent
down and keeps its memory bounded; it never drops or reorders an entry, and
a call waits at most BITEXACT_DRAIN_TIMEOUT before queuing anyway.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.config import SettingError
from bitexact.sdk.handle import RecordHandle
from bitexact.sdk.queue import OrderedWriter, Pending, queue_max_bytes
from bitexact.store import AppendResult
from sdk.conftest import entries
from sdk.test_large import BIG, store_write_lock


class _Gate:
    """A write callback that blocks until opened, and remembers what it wrote, in order."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.written: list[bytes] = []

    def write(self, items: list[Pending]) -> list[AppendResult]:
        assert self.open.wait(30)
        self.written += [item.raw for item in items]
        return [AppendResult(i, "0" * 64) for i, _ in enumerate(items)]


def _pending(raw: bytes) -> Pending:
    handle = RecordHandle(None, "run", "marker", 0, 1.0)  # type: ignore[arg-type] - never read here
    return Pending(handle, "marker", raw, None, None, None, None)


def _writer(gate: _Gate, max_bytes: int) -> OrderedWriter:
    return OrderedWriter(gate.write, lambda item, result: None, lambda item, exc: None, max_bytes=max_bytes)


def _put_in_thread(queue: OrderedWriter, item: Pending, room_timeout: float) -> threading.Thread:
    thread = threading.Thread(target=queue.put, args=(item,), kwargs={"room_timeout": room_timeout})
    thread.start()
    return thread


def test_a_put_past_the_bound_waits_until_the_writer_makes_room() -> None:
    gate = _Gate()
    queue = _writer(gate, max_bytes=100)
    queue.put(_pending(b"a" * 80), room_timeout=30)  # an empty queue never waits
    second = _put_in_thread(queue, _pending(b"b" * 80), room_timeout=30)
    second.join(0.3)
    assert second.is_alive(), "80 + 80 bytes is past the bound of 100: the call waits"
    gate.open.set()
    second.join(30)
    assert not second.is_alive()
    assert queue.drain(30)
    assert gate.written == [b"a" * 80, b"b" * 80]
    assert queue.waited > 0


def test_a_put_that_waited_the_timeout_queues_anyway_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    gate = _Gate()
    queue = _writer(gate, max_bytes=100)
    queue.put(_pending(b"a" * 80))
    with caplog.at_level(logging.WARNING, logger="bitexact.sdk"):
        start = time.monotonic()
        queue.put(_pending(b"b" * 80), room_timeout=0.2)
        queue.put(_pending(b"c" * 80), room_timeout=0.2)
        waited = time.monotonic() - start
    assert waited >= 0.4, "each call waited its timeout"
    warnings = [r.getMessage() for r in caplog.records if "still wait for the writer" in r.getMessage()]
    assert len(warnings) == 1 and "BITEXACT_QUEUE_MAX_BYTES" in warnings[0]
    gate.open.set()
    assert queue.drain(30)
    assert gate.written == [b"a" * 80, b"b" * 80, b"c" * 80], "nothing dropped, nothing reordered"


def test_within_the_bound_a_put_never_waits() -> None:
    gate = _Gate()
    queue = _writer(gate, max_bytes=1000)
    start = time.monotonic()
    for n in range(5):
        queue.put(_pending(bytes([65 + n]) * 100), room_timeout=30)
    assert time.monotonic() - start < 5  # nothing waited its 30 s
    assert queue.waited == 0
    gate.open.set()
    assert queue.drain(30)
    assert len(gate.written) == 5


def test_an_abandoned_writer_releases_a_waiting_put() -> None:
    gate = _Gate()
    queue = _writer(gate, max_bytes=100)
    queue.put(_pending(b"a" * 80))
    errors: list[BaseException] = []

    def put() -> None:
        try:
            queue.put(_pending(b"b" * 80), room_timeout=30)
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=put)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive()
    left = queue.abandon()
    thread.join(30)
    assert not thread.is_alive() and len(errors) == 1 and "abandoned" in str(errors[0])
    assert [item.raw for item in left] == [b"a" * 80]
    gate.open.set()


def test_the_bound_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BITEXACT_QUEUE_MAX_BYTES", raising=False)
    assert queue_max_bytes() == 256 << 20
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", "4096")
    assert queue_max_bytes() == 4096
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", "lots")
    with pytest.raises(SettingError, match="BITEXACT_QUEUE_MAX_BYTES='lots' is not a whole number"):
        queue_max_bytes()


def test_an_invalid_bound_is_declared_and_the_agent_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", "0")
    with bitexact.run() as r:
        handle = r.marker("not recorded")
    assert not handle.written
    (gap,) = r.failures.gaps
    assert gap.cause == "invalid_argument"
    assert "BITEXACT_QUEUE_MAX_BYTES='0' must be greater than 0" in gap.detail


def test_large_entries_past_the_bound_all_land_in_record_order(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Three large entries (a little over 1 MiB each) against a bound of 2 MiB, while another
    # writer holds the store: the third call waits for room until its timeout, then queues.
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", str(2 << 20))
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.3")
    results: list[Any] = []
    with bitexact.run() as r:
        with store_write_lock(home):
            start = time.monotonic()
            results = [r.record("tool_call", {"tool": "scan", "result": BIG, "n": n}) for n in range(3)]
            assert time.monotonic() - start >= 0.3, "a call waited for room"
        r.drain(30)
        assert r._queue is not None and r._queue.waited >= 0.3
    assert all(handle.written for handle in results)
    written = entries(r.run_id)
    assert [e["kind"] for e in written] == ["run_meta", "tool_call", "tool_call", "tool_call", "run_end"]
    assert [e["data"]["n"] for e in written[1:4]] == [0, 1, 2]
