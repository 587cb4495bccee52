"""Gaps a call declares itself under threads (the fifth review: a custody that is not one, a capture that failed).

``_submit`` takes the record's place in record order (``_seq``), checks that the run still takes
records (``_accepting``) and writes or queues the entry, all under one hold of ``Run._order``. The two
paths that declare a gap in the call without reaching ``_submit`` (``Run._withheld`` and
``Run._declare_failure``) do neither: they take their seq in ``_next_seq`` (one hold of ``_order``)
and declare the gap in ``_declare_in_order`` (a second hold), and never look at ``_accepting``.

The pauses below are injected where no lock is held (after ``_next_seq`` returned; in the exit's drain,
after ``_accepting`` was cleared), standing for the thread being preempted there: no timing is relied on.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable

import pytest

import bitexact
from sdk.conftest import entries

RUN_MODULE = sys.modules["bitexact.sdk.run"]


def _withheld(r: Any) -> Any:
    """A custody that is not one: ``Run._withheld`` declares an invalid_argument gap in the call."""
    return r.record("tool_call", {"tool": "lookup", "result": 1}, custody={"result": "bogus"})


def _capture_failed(r: Any) -> Any:
    """Content no converter can write (-0.0): ``Run._declare_failure`` declares the gap in the call."""
    return r.context("doc", {"x": -0.0})


GAP_PATHS: list[Callable[[Any], Any]] = [_withheld, _capture_failed]


def _gap_markers(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "marker" and "gap" in e["data"]]


@pytest.mark.parametrize("declare", GAP_PATHS, ids=["custody-withheld", "capture-failed"])
def test_a_gap_declared_in_the_call_keeps_its_place_in_record_order_against_another_thread(
    home: Any, monkeypatch: pytest.MonkeyPatch, declare: Callable[[Any], Any]
) -> None:
    """docs/sdk.md: "A gap a call declares itself (a custody that is not one, data no converter can
    write) takes its place in record order too"; issue 3: "Tool calls in threads ... of one run are all
    recorded, in record order"; across threads the chain's order is the order the calls were accepted.

    Thread A's call is accepted first (it takes seq 1); thread B's marker is accepted after it (seq 2).
    ``_withheld`` / ``_declare_failure`` let go of ``_order`` between taking the seq and declaring the
    gap, so B's entry is written in between, and A's gap marker (naming seq 1) lands after seq 2."""
    ready, go = threading.Event(), threading.Event()
    real_next_seq = RUN_MODULE.Run._next_seq

    def next_seq(self: Any) -> int:
        seq = real_next_seq(self)
        # A has its place in record order. Preempted here, before it declares the gap: unless it still
        # holds the run's order lock (then no other call can be accepted meanwhile, nothing to show).
        if threading.current_thread().name == "agent-A" and not self._order._is_owned():
            ready.set()
            assert go.wait(30)
        return seq

    def agent_a(r: Any) -> None:
        try:
            handles["a"] = declare(r)
        finally:
            ready.set()  # done (or paused above): B's call now comes after A's was accepted

    monkeypatch.setattr(RUN_MODULE.Run, "_next_seq", next_seq)
    handles: dict[str, Any] = {}
    with bitexact.run() as r:
        a = threading.Thread(target=agent_a, args=(r,), name="agent-A")
        a.start()
        try:
            assert ready.wait(30)
            handles["b"] = r.marker("accepted after A's call")
        finally:
            go.set()
            a.join(30)
    assert handles["a"].seq < handles["b"].seq, "A's call was accepted first"
    written = entries(r.run_id)
    (gap_marker,) = _gap_markers(r.run_id)
    assert gap_marker["data"]["gap"]["seq"] == handles["a"].seq
    b_step = next(e["step"] for e in written if e["kind"] == "marker" and e["data"].get("note") == "accepted after A's call")
    assert gap_marker["step"] < b_step, (
        f"the gap of record #{handles['a'].seq} landed at step {gap_marker['step']}, after record "
        f"#{handles['b'].seq} (step {b_step}): the chain's order is not the order the calls were accepted")


@pytest.mark.parametrize("declare", GAP_PATHS, ids=["custody-withheld", "capture-failed"])
def test_a_record_made_after_the_exit_began_is_refused_not_taken_into_the_chain(
    home: Any, declare: Callable[[Any], Any]
) -> None:
    """docs/sdk.md (Runs): "Once the exit has begun, the run takes nothing more: a record another thread
    or task makes after that point is refused as after the run's end (a declared `invalid_argument`
    gap ...) ... so nothing lands after the drain or beside the seal."

    The exit has begun (``_accepting`` is False; the exit is in its drain) when another thread records.
    A plain ``r.marker`` is refused there (seq 0, "recorded after the run ended", nothing in the chain);
    a record with a bad custody or unwritable content is instead taken into the run: it gets a place in
    record order and its gap marker is written into the chain by the exit's drain or beside the seal."""
    in_drain, go = threading.Event(), threading.Event()
    handles: dict[str, Any] = {}

    def late(r: Any) -> None:
        assert in_drain.wait(30)
        try:
            handles["plain"] = r.marker("after the exit began")
            handles["gap"] = declare(r)
        finally:
            go.set()

    with bitexact.run() as r:
        assert r._queue is not None
        real_drain = r._queue.drain

        def drain(timeout: float) -> bool:
            if threading.current_thread() is threading.main_thread():  # the exit's drain, not a read's
                in_drain.set()
                assert go.wait(30)
            return real_drain(timeout)

        r._queue.drain = drain  # type: ignore[method-assign]
        t = threading.Thread(target=late, args=(r,))
        t.start()
    t.join(30)
    assert r.sealed
    plain, gap = handles["plain"], handles["gap"]
    assert plain.seq == 0 and plain.gap is not None and plain.gap.detail == "recorded after the run ended"
    markers = _gap_markers(r.run_id)
    assert markers == [], (
        f"a record made after the exit began was taken into the run (record #{gap.seq}, gap "
        f"{gap.gap.detail!r}) and its marker written at step {markers[0]['step'] if markers else None}")
    assert gap.gap is not None and gap.gap.detail == "recorded after the run ended"
