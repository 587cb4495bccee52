"""Queue and large-entry edges (the seventh review): each test fails on the code before its fix.

Interleavings are forced with events, held locks and signals sent once a state is reached, never left
to timing.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
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
