"""drain() is still woken once the last append settles (perf22 notifies ``_idle`` only while a drain waits).

Each drain here runs in a thread of its own, where ``Condition.wait_for`` sleeps until notified (the main
thread's waits are sliced and would see the count fall without it): a drain that is never woken would
sleep to its 120 s timeout (and only then see the count at 0); each must be back within 15 s of the settle.
"""

from __future__ import annotations

import threading
import time

from bitexact.store.groupcommit import GroupCommitter, Ticket


def _blocking_committer(release: threading.Event, entered: threading.Event) -> GroupCommitter[int, int]:
    def commit(batch: list[Ticket[int, int]]) -> None:
        entered.set()
        release.wait(30)
        for ticket in batch:
            ticket.succeed(ticket.item * 2)

    return GroupCommitter(commit)


def _until_draining(committer: GroupCommitter[int, int], count: int) -> None:
    """Until ``count`` drains wait on the condition (they then hold no lock: the count is theirs)."""
    deadline = time.monotonic() + 20
    while committer._drainers < count:
        assert time.monotonic() < deadline, "the drains never started waiting"
        time.sleep(0.001)


def _drain_in_thread(committer: GroupCommitter[int, int], results: list[bool]) -> threading.Thread:
    thread = threading.Thread(target=lambda: results.append(committer.drain(timeout=120)))
    thread.start()
    return thread


def test_drains_waiting_on_a_submit_in_flight_are_woken_when_it_settles() -> None:
    release, entered = threading.Event(), threading.Event()
    committer = _blocking_committer(release, entered)
    outcome: list[int] = []
    submitter = threading.Thread(target=lambda: outcome.append(committer.submit(21)))
    submitter.start()
    assert entered.wait(10)
    drained: list[bool] = []
    drains = [_drain_in_thread(committer, drained) for _ in range(2)]
    _until_draining(committer, 2)
    assert committer.pending == 1 and drained == []  # nothing settled: both drains wait
    release.set()
    submitter.join(10)
    for thread in drains:
        thread.join(15)  # woken by the settle: never near its 120 s timeout, at which it would see the count too
        assert not thread.is_alive()
    assert outcome == [42]
    assert drained == [True, True]
    assert committer._drainers == 0


def test_a_nowait_ticket_settled_by_the_background_leader_wakes_a_drain() -> None:
    release, entered = threading.Event(), threading.Event()
    committer = _blocking_committer(release, entered)
    ticket = committer.submit_nowait(5)
    assert entered.wait(10)
    drained: list[bool] = []
    drain = _drain_in_thread(committer, drained)
    _until_draining(committer, 1)
    release.set()
    drain.join(15)
    assert not drain.is_alive()
    assert drained == [True]
    assert ticket.result(5) == 10


def test_a_drain_with_nothing_in_flight_returns_at_once() -> None:
    committer: GroupCommitter[int, int] = GroupCommitter(lambda batch: [t.succeed(0) for t in batch] and None)
    assert committer.submit(1) == 0
    drained: list[bool] = []
    _drain_in_thread(committer, drained).join(10)
    assert drained == [True]
