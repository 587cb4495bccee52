"""sdk26: a group commit's leader takes a lone ticket without a comprehension and counts the tickets nobody waits
for (``submit_nowait``'s) in its settling loop, not by a generator after it.

What must not change: a lone ``submit`` is committed in its caller's thread as a batch of one and returns its
own result; batches mixing waited and unwaited tickets leave ``pending`` at 0 once settled (else ``drain``
would wait forever); a batch takes the queue in order up to ``max_batch``; the counts of batches and items.
"""

from __future__ import annotations

import threading

from bitexact.store.groupcommit import GroupCommitter, Ticket


def test_a_lone_submit_commits_in_its_own_thread_as_a_batch_of_one() -> None:
    seen: list[tuple[list[int], threading.Thread]] = []

    def commit(batch: list[Ticket[int, int]]) -> None:
        seen.append(([ticket.item for ticket in batch], threading.current_thread()))
        for ticket in batch:
            ticket.succeed(ticket.item + 1)

    committer: GroupCommitter[int, int] = GroupCommitter(commit)
    assert [committer.submit(n) for n in range(3)] == [1, 2, 3]
    assert seen == [([0], threading.current_thread()), ([1], threading.current_thread()),
                    ([2], threading.current_thread())]
    assert (committer.batches, committer.items, committer.pending, committer.queued) == (3, 3, 0, 0)
    assert committer.drain(timeout=10)


def test_unwaited_tickets_leave_nothing_pending_once_settled() -> None:
    release = threading.Event()
    batches: list[list[int]] = []

    def commit(batch: list[Ticket[int, int]]) -> None:
        release.wait(30)
        batches.append([ticket.item for ticket in batch])
        for ticket in batch:
            if ticket.item % 3:
                ticket.succeed(ticket.item)
            else:
                ticket.fail(ValueError(f"refused {ticket.item}"))

    committer: GroupCommitter[int, int] = GroupCommitter(commit, max_batch=4)
    tickets = [committer.submit_nowait(n) for n in range(1, 10)]
    assert committer.pending == 9
    release.set()
    for ticket in tickets:
        try:
            assert ticket.result(timeout=30) == ticket.item
        except ValueError as exc:
            assert str(exc) == f"refused {ticket.item}"
    assert committer.drain(timeout=30)  # pending back at 0: the drain returns
    assert committer.pending == 0 and committer.items == 9
    assert [item for batch in batches for item in batch] == list(range(1, 10))  # queue order kept
    assert all(len(batch) <= 4 for batch in batches)


def test_a_waited_and_unwaited_batch_settles_both() -> None:
    gate, entered = threading.Event(), threading.Event()

    def commit(batch: list[Ticket[int, int]]) -> None:
        entered.set()
        gate.wait(30)
        for ticket in batch:
            ticket.succeed(-ticket.item)

    committer: GroupCommitter[int, int] = GroupCommitter(commit)
    first: list[int] = []
    leader = threading.Thread(target=lambda: first.append(committer.submit(1)))
    leader.start()
    assert entered.wait(10)
    queued = [committer.submit_nowait(n) for n in (2, 3)]  # wait behind the leader's batch
    gate.set()
    leader.join(30)
    assert first == [-1] and [ticket.result(timeout=30) for ticket in queued] == [-2, -3]
    assert committer.drain(timeout=30) and committer.pending == 0
