"""Queue and large-entry edges (the seventh review): each test fails on the code before its fix.

Interleavings are forced with events, held locks and signals sent once a state is reached, never left
to timing.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import bitexact
from sdk.conftest import entries, journaled
from sdk.test_large import BIG, store_write_lock


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_a_call_interrupted_while_it_waits_for_queue_room_still_queues_its_journaled_entry(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OrderedWriter.put queues an entry "whatever the wait's outcome: it is already journaled", but a
    Ctrl-C (or a SIGTERM handler's SystemExit) landing in the wait for room left the entry journaled and
    never queued: the run then sealed with its journal beside it, an orphan no repair may fold."""
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", str(3 << 19))  # 1.5 MiB: room for one large entry
    with bitexact.run() as r:
        with store_write_lock(home):
            r.record("tool_call", {"tool": "scan", "result": BIG, "n": 1})  # queued, held by the lock
            main = threading.main_thread().ident
            assert main == threading.get_ident()

            def interrupt_once_waiting() -> None:
                _wait_until(lambda: len(journaled(home, r.run_id)) == 2, "the second entry was never journaled")
                assert main is not None
                signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C while the call waits for room

            sender = threading.Thread(target=interrupt_once_waiting)
            sender.start()
            with pytest.raises(KeyboardInterrupt):
                r.record("tool_call", {"tool": "scan", "result": BIG, "n": 2})
            sender.join(30)
    assert r.sealed and r.failures.gaps == []
    assert [e["data"]["n"] for e in entries(r.run_id) if e["kind"] == "tool_call"] == [1, 2]
    assert journaled(home, r.run_id) == [], "a journal was left beside the sealed run"


def test_the_exit_recording_a_call_left_open_never_waits_for_queue_room(
    home: Path, monkeypatch: pytest.MonkeyPatch, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    """docs/sdk.md: once the exit has begun, "one waiting for queue room queues at once". The exit records
    the calls still open (a generator tool not exhausted, a response not read) before it told the queue it
    was closing: each such entry waited up to BITEXACT_DRAIN_TIMEOUT for room first, so an exit with a
    full queue took that bound once per open call on top of its own drain."""
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", "1")  # anything queued leaves no room
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.5")

    @bitexact.record_tool
    def pages() -> Iterator[int]:
        yield 1
        yield 2

    scope = bitexact.run()
    r = scope.__enter__()
    with store_write_lock(home):  # held through the exit: the queue never makes room
        r.record("tool_call", {"tool": "scan", "result": BIG})
        opened = pages()
        assert next(opened) == 1  # still open when the run ends
        scope.__exit__(None, None, None)
    assert r._queue is not None and r._queue._thread is not None
    r._queue._thread.join(30)
    assert r._queue.waited == 0, "the exit's own record waited for queue room"
    assert not [m for m in sdk_warnings.messages if "still wait for the writer" in m]


def test_the_queue_room_warning_states_a_bound_under_one_mib_as_it_was_set(
    home: Path, monkeypatch: pytest.MonkeyPatch, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    """The warning a call logs when it stops waiting for queue room gave both sizes in whole MiB, rounded
    down: a BITEXACT_QUEUE_MAX_BYTES of 1000 (a whole number of bytes, as docs/sdk.md says it is set) was
    reported as "BITEXACT_QUEUE_MAX_BYTES is 0 MiB"."""
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", "1000")
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    with bitexact.run() as r:
        with store_write_lock(home):
            r.record("tool_call", {"tool": "scan", "result": BIG})  # queued, held by the lock
            r.marker("waits for room, then queues anyway")
    assert r.sealed
    (warning,) = [m for m in sdk_warnings.messages if "still wait for the writer" in m]
    assert "BITEXACT_QUEUE_MAX_BYTES is 1000 bytes" in warning, warning
    assert " 0 MiB" not in warning, warning
