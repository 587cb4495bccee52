"""A run's exit cut short by Ctrl-C in its drain keeps the run's live lock until the writer has written
everything still queued: the lock was given back after the batch in flight, while the writer went on
writing the queued entries, so a repair run then (a Jupyter kernel survives the Ctrl-C) could fold their
journals and write them twice."""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.recording.journal import journal_dir, take_live_lock
from bitexact.sdk import queue as queue_module
from sdk.conftest import entries
from sdk.test_large import BIG

run_module = sys.modules["bitexact.sdk.run"]  # the module; bitexact.sdk.run is the function


def _held(home: Path, run_id: str) -> bool:
    try:
        fd = take_live_lock(journal_dir(home, run_id))
    except FileNotFoundError:
        return False  # the run ended meanwhile and removed its emptied journal directory: nobody holds it
    if fd is None:
        return True
    os.close(fd)
    return False


def _hook_writer_and_drain(monkeypatch: pytest.MonkeyPatch, gate: Callable[[], None]) -> threading.Event:
    """Each batch the run's writer takes first calls ``gate``; the returned event is set once the exit
    drains."""
    real_write = run_module.Run._queued_write
    real_drain = queue_module.OrderedWriter.drain
    draining = threading.Event()

    def gated(self: Any, items: list[Any]) -> Any:
        gate()
        return real_write(self, items)

    def drain(self: Any, timeout: float) -> bool:
        draining.set()
        return real_drain(self, timeout)

    monkeypatch.setattr(run_module.Run, "_queued_write", gated)
    monkeypatch.setattr(queue_module.OrderedWriter, "drain", drain)
    return draining


def test_a_ctrl_c_in_the_exit_drain_keeps_the_live_lock_until_the_queue_is_written(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reached = [threading.Event() for _ in range(4)]
    go = [threading.Event() for _ in range(4)]
    calls = itertools.count()

    def gate() -> None:  # each batch waits for its own go
        n = next(calls)
        reached[n].set()
        assert go[n].wait(60)

    draining = _hook_writer_and_drain(monkeypatch, gate)

    def ctrl_c() -> None:
        assert draining.wait(60)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=ctrl_c, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt), bitexact.run() as r:
            r.record("tool_call", {"tool": "first", "result": BIG})
            assert reached[0].wait(30)  # the first batch is in flight, held
            r.record("tool_call", {"tool": "second", "result": BIG})  # queued behind it
            r.record("tool_call", {"tool": "third", "result": BIG})
        go[0].set()
        assert reached[1].wait(30)  # the writer goes on with what is queued
        assert _held(home, r.run_id), "the live lock was given back while queued entries were still to write"
    finally:
        for event in go:
            event.set()
    assert r._queue is not None and r._queue.drain(30)
    tools = [e["data"]["tool"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert tools == ["first", "second", "third"]
    assert not _held(home, r.run_id)  # given back once the last of them landed


def test_a_ctrl_c_the_kernel_hands_another_thread_still_cuts_the_exit_drain_short(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel hands a process's SIGINT to any of its threads. Handed to another one than the main
    thread, it tripped Python's handler but never woke the main thread's lock wait in the drain: the
    Ctrl-C was heard only when the drain ended (30 s by default, or when the writer finished)."""
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "120")
    held, release, gave_up = threading.Event(), threading.Event(), threading.Event()

    def gate() -> None:  # the writer is held until the Ctrl-C was heard
        held.set()
        if not release.wait(20):
            gave_up.set()  # the Ctrl-C was not heard while the writer was held

    draining = _hook_writer_and_drain(monkeypatch, gate)

    def ctrl_c_elsewhere() -> None:
        assert draining.wait(60)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # to this thread, not the main one

    threading.Thread(target=ctrl_c_elsewhere, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt), bitexact.run() as r:
            r.record("tool_call", {"tool": "first", "result": BIG})
            assert held.wait(30)
    finally:
        release.set()
    assert not gave_up.is_set(), "the Ctrl-C was heard only once the writer had finished"
    assert r._queue is not None and r._queue.drain(30)
    assert [e["data"]["tool"] for e in entries(r.run_id) if e["kind"] == "tool_call"] == ["first"]
