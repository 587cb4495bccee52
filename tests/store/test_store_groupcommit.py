"""The group committer: callers arriving during a commit share the next one, each
gets its own outcome, and a failing commit never strands a waiter."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from bitexact.errors import StoreError
from bitexact.store.groupcommit import GroupCommitter, Ticket


class Ledger:
    """A commit function that records batches and can be held shut by the test."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def commit(self, batch: list[Ticket[int, int]]) -> None:
        self.entered.set()
        self.gate.wait(30)
        self.batches.append([t.item for t in batch])
        for ticket in batch:
            if ticket.item < 0:
                ticket.fail(ValueError(f"item {ticket.item} refused"))
            else:
                ticket.succeed(ticket.item * 10)


def _submit_all(
    committer: GroupCommitter[int, int], ledger: Ledger, items: list[int]
) -> tuple[dict, list[threading.Thread]]:
    """Submit ``items`` from one thread each, in order: the first leads (held at the
    ledger's gate), the rest queue behind it one after another."""
    results: dict[int, object] = {}

    def go(item: int) -> None:
        try:
            results[item] = committer.submit(item)
        except Exception as exc:  # noqa: BLE001
            results[item] = exc

    threads = []
    for item in items:
        t = threading.Thread(target=go, args=(item,))
        t.start()
        threads.append(t)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if len(threads) == 1 and ledger.entered.is_set():
                break
            if len(threads) > 1 and committer.queued == len(threads) - 1:
                break
            time.sleep(0.001)
        else:
            pytest.fail("submissions did not queue")
    return results, threads


def test_a_lone_caller_commits_at_once() -> None:
    ledger = Ledger()
    committer = GroupCommitter(ledger.commit)
    assert committer.submit(4) == 40
    assert ledger.batches == [[4]]


def test_callers_arriving_during_a_commit_share_the_next_one_in_order() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit)
    results, threads = _submit_all(committer, ledger, [1, 2, 3, 4, 5, 6])
    assert ledger.entered.wait(30)
    assert committer.queued == 5
    ledger.gate.set()
    for t in threads:
        t.join()
    assert ledger.batches == [[1], [2, 3, 4, 5, 6]]
    assert results == {i: i * 10 for i in range(1, 7)}
    assert (committer.batches, committer.items) == (2, 6)


def test_each_caller_gets_its_own_error() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit)
    results, threads = _submit_all(committer, ledger, [1, 2, -3, 4, -5])
    ledger.gate.set()
    for t in threads:
        t.join()
    assert results[1] == 10 and results[2] == 20 and results[4] == 40
    assert isinstance(results[-3], ValueError) and "-3" in str(results[-3])
    assert isinstance(results[-5], ValueError) and "-5" in str(results[-5])


def test_max_batch_bounds_a_batch() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit, max_batch=2)
    _, threads = _submit_all(committer, ledger, [1, 2, 3, 4, 5])
    ledger.gate.set()
    for t in threads:
        t.join()
    assert ledger.batches == [[1], [2, 3], [4, 5]]


def test_a_commit_that_raises_fails_its_batch_and_the_next_batch_still_commits() -> None:
    calls = []

    def commit(batch: list[Ticket[int, int]]) -> None:
        calls.append([t.item for t in batch])
        if len(calls) == 1:
            raise OSError("disk on fire")
        for ticket in batch:
            ticket.succeed(ticket.item)

    committer = GroupCommitter(commit)
    with pytest.raises(StoreError, match="disk on fire"):
        committer.submit(1)
    assert committer.submit(2) == 2


def test_a_ticket_left_unsettled_is_failed_not_acknowledged() -> None:
    committer: GroupCommitter[int, int] = GroupCommitter(lambda batch: None)
    with pytest.raises(StoreError, match="nothing was acknowledged"):
        committer.submit(1)


def test_max_batch_must_be_positive() -> None:
    with pytest.raises(ValueError):
        GroupCommitter(lambda batch: None, max_batch=0)


class Interrupted(BaseException):
    """Like KeyboardInterrupt: raised by a signal handler, not an error of the store."""


def test_a_waiter_interrupted_by_a_signal_withdraws_without_stalling_the_queue() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit)
    _, threads = _submit_all(committer, ledger, [1])  # the leader, held in its commit

    def interrupt(signum, frame):  # noqa: ANN001
        raise Interrupted

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(Interrupted):
            committer.submit(2)  # the main thread waits behind the leader until the alarm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert committer.queued == 0  # withdrawn, not left for a leader to find
    ledger.gate.set()
    for t in threads:
        t.join()
    assert committer.submit(3) == 30  # the queue still moves
    assert ledger.batches == [[1], [3]]  # the interrupted append was never committed


def test_appends_arriving_while_the_leader_waits_for_the_writer_join_its_batch() -> None:
    ledger = Ledger()
    writer = threading.Lock()  # stands for another process holding the write lock
    writer.acquire()
    committer = GroupCommitter(ledger.commit, hold=lambda: writer)
    results: dict[int, object] = {}

    def go(item: int) -> None:
        results[item] = committer.submit(item)

    threads = [threading.Thread(target=go, args=(i,)) for i in (1, 2, 3, 4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while committer.queued < 4 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert committer.queued == 4  # the leader has not taken anything while it waits
    writer.release()
    for t in threads:
        t.join()
    assert sorted(ledger.batches[0]) == [1, 2, 3, 4]
    assert results == {1: 10, 2: 20, 3: 30, 4: 40}


def test_a_hold_that_fails_fails_the_waiting_appends_and_releases_the_lead() -> None:
    ledger = Ledger()
    refuse = [True]

    class Hold:
        def __enter__(self) -> None:
            if refuse[0]:
                raise StoreError("the store is closed")

        def __exit__(self, *exc: object) -> None:
            return None

    committer = GroupCommitter(ledger.commit, hold=Hold)
    with pytest.raises(StoreError, match="closed"):
        committer.submit(1)
    refuse[0] = False
    assert committer.submit(2) == 20
    assert ledger.batches == [[2]]


def test_a_leader_interrupted_while_waiting_for_the_writer_withdraws_alone() -> None:
    ledger = Ledger()
    writer = threading.Lock()
    writer.acquire()  # held elsewhere, so the leader (the main thread) waits for it
    committer = GroupCommitter(ledger.commit, hold=lambda: writer)
    results: dict[int, object] = {}

    def follower() -> None:
        results[2] = committer.submit(2)

    def interrupt(signum, frame):  # noqa: ANN001
        threading.Thread(target=follower).start()  # queues behind the waiting leader
        time.sleep(0.1)
        raise Interrupted

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        with pytest.raises(Interrupted):
            committer.submit(1)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    writer.release()  # the follower, promoted to lead, can now commit
    deadline = time.monotonic() + 30
    while 2 not in results and time.monotonic() < deadline:
        time.sleep(0.001)
    assert results == {2: 20}
    assert ledger.batches == [[2]]


# -- submit_nowait: tickets led by the background leader ----------------


def test_nowait_tickets_commit_in_order_and_settle_each_its_own() -> None:
    ledger = Ledger()
    committer = GroupCommitter(ledger.commit)
    tickets = [committer.submit_nowait(item) for item in (1, 2, -3, 4)]
    assert [t.result(timeout=30) if t.item >= 0 else None for t in tickets] == [10, 20, None, 40]
    with pytest.raises(ValueError, match="item -3 refused"):
        tickets[2].result(timeout=30)
    assert [item for batch in ledger.batches for item in batch] == [1, 2, -3, 4]
    assert committer.drain(30)
    assert committer.pending == 0


def test_nowait_tickets_queued_behind_a_commit_share_the_next_batch() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit)
    first = committer.submit_nowait(1)
    assert ledger.entered.wait(30)  # the background leader is inside the commit, held shut
    later = [committer.submit_nowait(item) for item in (2, 3, 4)]
    assert committer.queued == 3
    ledger.gate.set()
    assert [t.result(timeout=30) for t in (first, *later)] == [10, 20, 30, 40]
    assert ledger.batches == [[1], [2, 3, 4]]


def test_a_waiting_caller_behind_nowait_tickets_is_promoted_and_served() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit, max_batch=1)
    nowait = committer.submit_nowait(1)
    assert ledger.entered.wait(30)
    got: list[int] = []
    waiter = threading.Thread(target=lambda: got.append(committer.submit(2)))
    waiter.start()
    after = committer.submit_nowait(3)
    ledger.gate.set()
    waiter.join(30)
    assert got == [20]
    assert nowait.result(timeout=30) == 10 and after.result(timeout=30) == 30
    assert ledger.batches == [[1], [2], [3]]  # one at a time: the waiter led its own batch in turn


def test_result_times_out_while_the_commit_is_held_then_returns() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit)
    ticket = committer.submit_nowait(5)
    with pytest.raises(TimeoutError):
        ticket.result(timeout=0.01)
    assert not ticket.done()
    ledger.gate.set()
    assert ticket.result(timeout=30) == 50
    assert ticket.result(timeout=0) == 50  # asking again does not block


def test_drain_waits_for_in_flight_tickets_then_refuses_more() -> None:
    ledger = Ledger()
    ledger.gate.clear()
    committer = GroupCommitter(ledger.commit)
    tickets = [committer.submit_nowait(item) for item in range(5)]
    assert not committer.drain(0.01)  # held: not idle yet
    threading.Timer(0.05, ledger.gate.set).start()
    assert committer.drain(30)
    assert all(t.done() for t in tickets)
    with pytest.raises(StoreError, match="closing"):
        committer.submit_nowait(6)
    assert committer.submit(7) == 70  # a waiting caller still leads its own commit
