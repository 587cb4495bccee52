"""Group commit: many threads' writes made durable by one transaction and one fsync.

Leader/follower, as in LevelDB's write queue. A caller queues a ticket. If
nobody is committing, it becomes the leader: it takes every queued ticket
(up to ``max_batch``), hands the batch to the commit function, and settles
each ticket with its own result or error. While the leader waits on the
disk, new callers queue up; when it is done it promotes the oldest waiter to
lead the next batch and wakes the ones it settled. So under load the cost of
an fsync is shared by everyone who arrived during the previous one, and
without load a lone caller commits at once, with no thread hop.

The leader drains the queue only once it holds ``hold()`` (for the SQLite
store: its writer connection and the cross-process write lock), so appends
that arrive while it waits for another process still join its batch.

A caller that need not wait (a pipelined writer keeping several appends in
flight) uses ``submit_nowait``: its ticket joins the same queue, and a
background leader thread, started on first use, leads the batches whose
oldest ticket has no caller waiting to lead them. Order is the queue's
order either way, so one writer's pipelined appends commit in the order it
submitted them.

No SQL here: the commit function is the backend's.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Generic, TypeVar

from bitexact.errors import StoreError
from bitexact.interruptible import acquire, wait_for

T = TypeVar("T")
R = TypeVar("R")


class Ticket(Generic[T, R]):
    """One queued write: its item and, once settled, its own result or error."""

    __slots__ = ("item", "_result", "_error", "_settled", "_done", "_promoted", "_gate", "_waiter")

    def __init__(self, item: T, *, waiter: bool = True) -> None:
        self.item = item
        # True when a thread blocks in submit() for this ticket and can be
        # promoted to lead; False for submit_nowait tickets.
        self._waiter = waiter
        self._result: R | None = None
        self._error: BaseException | None = None
        self._settled = False
        self._done = False
        self._promoted = False
        # A held lock is the cheapest one-shot wake-up: the waiter blocks on
        # acquire, the leader releases it exactly once (done or promoted).
        self._gate = threading.Lock()
        self._gate.acquire()

    @property
    def settled(self) -> bool:
        return self._settled

    def succeed(self, result: R) -> None:
        """Give this ticket its result (called by the commit function)."""
        self._result, self._settled = result, True

    def fail(self, error: BaseException) -> None:
        """Give this ticket its own error (called by the commit function)."""
        self._error, self._settled = error, True

    def outcome(self) -> R:
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]

    def done(self) -> bool:
        """True once the batch holding this ticket was committed (or failed) and settled it."""
        return self._done

    def result(self, timeout: float | None = None) -> R:
        """Wait until settled (at most ``timeout`` seconds), then return the result or raise the error.

        For ``submit_nowait`` tickets. Raises ``TimeoutError`` when the batch
        is not settled in time; the ticket stays queued and may still land.
        """
        if not self._done:
            if not acquire(self._gate, timeout):  # bounded at TIMEOUT_MAX (OverflowError past it)
                raise TimeoutError(f"not committed within {timeout} s; it may still be")
            self._gate.release()  # leave it open: the gate is one-shot, waiting again must not block
        return self.outcome()


class GroupCommitter(Generic[T, R]):
    """Batches concurrent ``submit`` calls into calls of ``commit(batch)``.

    ``commit`` must settle every ticket of the batch (``succeed`` or
    ``fail``), and only after the batch is durable. A ticket it leaves
    unsettled, or an exception it raises, fails that ticket with StoreError.
    """

    def __init__(
        self,
        commit: Callable[[list[Ticket[T, R]]], None],
        *,
        max_batch: int = 512,
        hold: Callable[[], AbstractContextManager[object]] = nullcontext,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._commit = commit
        self._hold = hold
        self._max_batch = max_batch
        self._lock = threading.Lock()
        self._queue: deque[Ticket[T, R]] = deque()
        self._leading = False
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._drainers = 0
        """Callers waiting in :meth:`drain`: ``_idle`` is notified only when there is one (a notify with nobody
        waiting cost each append some 3,000 instructions of ``threading``'s Python)."""
        # The background leader, for batches headed by a submit_nowait ticket.
        self._background: threading.Thread | None = None
        self._background_wake = threading.Semaphore(0)
        self._stopping = False
        self.batches = 0
        """Commit calls made so far (one transaction, one fsync each)."""
        self.items = 0
        """Tickets those calls carried."""

    @property
    def queued(self) -> int:
        """Tickets waiting for a leader to take them."""
        with self._lock:
            return len(self._queue)

    @property
    def pending(self) -> int:
        """Calls of ``submit`` that have not returned yet (queued, or in a batch being committed)."""
        with self._lock:
            return self._pending

    def submit(self, item: T) -> R:
        """Queue ``item``, wait until its batch is committed, return its result or raise its error."""
        ticket: Ticket[T, R] = Ticket(item)
        with self._lock:
            self._pending += 1
            self._queue.append(ticket)
            lead = not self._leading
            self._leading = True
            ticket._promoted = lead
        try:
            if not lead:
                ticket._gate.acquire()  # woken when settled, or when promoted to lead
                if ticket._done:
                    return ticket.outcome()
            self._lead(ticket)
        except BaseException:
            self._abandon(ticket)  # e.g. KeyboardInterrupt while waiting: never strand the queue
            raise
        finally:
            with self._lock:
                self._pending -= 1
                if self._pending == 0 and self._drainers:
                    self._idle.notify_all()
        return ticket.outcome()

    def submit_nowait(self, item: T) -> Ticket[T, R]:
        """Queue ``item`` and return its ticket at once; ``ticket.result()`` waits for its commit.

        Tickets commit in queue order, so a caller that submits several
        items without waiting sees them committed in the order it gave.
        """
        ticket: Ticket[T, R] = Ticket(item, waiter=False)
        with self._lock:
            if self._stopping:
                raise StoreError("the store is closing; nothing more is accepted")
            self._pending += 1
            self._queue.append(ticket)
            wake = not self._leading
            self._leading = True
            if self._background is None:
                self._background = threading.Thread(target=self._lead_in_background, name="bitexact-group-commit",
                                                    daemon=True)
                self._background.start()
        if wake:
            self._background_wake.release()
        return ticket

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until no submission is in flight; stop the background leader. False on timeout."""
        with self._lock:
            self._drainers += 1
            try:
                idle = wait_for(self._idle, lambda: self._pending == 0, timeout)
            finally:
                self._drainers -= 1
            self._stopping = idle
            background = self._background if idle else None
        if background is not None:
            self._background_wake.release()
            background.join()
        return idle

    def _lead_in_background(self) -> None:
        while True:
            self._background_wake.acquire()
            if self._stopping:
                return
            self._lead(None)

    def _promote(self, successor: Ticket[T, R] | None) -> None:
        """Hand the lead to the queue's oldest ticket: its waiting caller, or the background leader.

        Called with ``_lock`` held; the wake-up itself happens after it is released.
        """
        self._leading = successor is not None
        if successor is not None and successor._waiter:
            successor._promoted = True

    def _wake(self, successor: Ticket[T, R] | None) -> None:
        if successor is None:
            return
        if successor._waiter:
            successor._gate.release()
        else:
            self._background_wake.release()

    def _abandon(self, ticket: Ticket[T, R]) -> None:
        """Withdraw a waiter interrupted before its batch was taken, passing on a lead it was given."""
        with self._lock:
            if ticket not in self._queue:
                return  # already in a batch: the leader settles it, nobody waits for it
            self._queue.remove(ticket)
            if not ticket._promoted:
                return
            successor = self._queue[0] if self._queue else None
            self._promote(successor)
        self._wake(successor)

    def _take(self) -> list[Ticket[T, R]]:
        with self._lock:
            if len(self._queue) == 1:  # a lone caller (most commits): without the comprehension's frame
                return [self._queue.popleft()]
            return [self._queue.popleft() for _ in range(min(len(self._queue), self._max_batch))]

    def _lead(self, own: Ticket[T, R] | None) -> None:
        batch: list[Ticket[T, R]] = []
        try:
            with self._hold():
                batch = self._take()
                if batch:  # empty only when a waiter given the lead was withdrawn meanwhile
                    self._commit(batch)
        except BaseException as exc:  # noqa: BLE001 - every waiter must still be woken
            if not batch and isinstance(exc, Exception):
                batch = self._take()  # the hold is refused (store closed): it is refused to everyone queued
            elif not batch and own is not None:
                with self._lock:  # interrupted while waiting for the hold: withdraw only this caller
                    self._queue.remove(own)
            for ticket in batch:
                if not ticket.settled:
                    ticket.fail(_batch_failed(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            unwaited = 0  # tickets no caller waits for (submit_nowait's): counted here, not by a generator after
            for ticket in batch:
                if not ticket._settled:
                    ticket.fail(StoreError("the store did not settle this append; nothing was acknowledged"))
                ticket._done = True
                if not ticket._waiter:
                    unwaited += 1
            with self._lock:
                self.batches += 1 if batch else 0
                self.items += len(batch)
                self._pending -= unwaited
                if self._pending == 0 and self._drainers:
                    self._idle.notify_all()
                successor = self._queue[0] if self._queue else None
                self._promote(successor)
            self._wake(successor)
            for ticket in batch:
                if ticket is not own:
                    ticket._gate.release()


def _batch_failed(exc: BaseException) -> StoreError:
    """A ticket's own error for a batch that failed: a new one each, of the store error's kind if it was one.

    New, because each waiting thread raises it and a raised exception carries
    its thread's traceback; of the same kind, so a caller can still tell a
    busy store (``StoreBusyError``) from a broken one.
    """
    kind = type(exc) if isinstance(exc, StoreError) else StoreError
    return kind(f"the batch holding this append failed: {exc}")
