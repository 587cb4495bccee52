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

No SQL here: the commit function is the backend's.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Generic, TypeVar

from bitexact.errors import StoreError

T = TypeVar("T")
R = TypeVar("R")


class Ticket(Generic[T, R]):
    """One queued write: its item and, once settled, its own result or error."""

    __slots__ = ("item", "_result", "_error", "_settled", "_done", "_promoted", "_gate")

    def __init__(self, item: T) -> None:
        self.item = item
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
        return ticket.outcome()

    def _abandon(self, ticket: Ticket[T, R]) -> None:
        """Withdraw a waiter interrupted before its batch was taken, passing on a lead it was given."""
        with self._lock:
            if ticket not in self._queue:
                return  # already in a batch: the leader settles it, nobody waits for it
            self._queue.remove(ticket)
            if not ticket._promoted:
                return
            successor = self._queue[0] if self._queue else None
            self._leading = successor is not None
            if successor is not None:
                successor._promoted = True
        if successor is not None:
            successor._gate.release()

    def _take(self) -> list[Ticket[T, R]]:
        with self._lock:
            return [self._queue.popleft() for _ in range(min(len(self._queue), self._max_batch))]

    def _lead(self, own: Ticket[T, R]) -> None:
        batch: list[Ticket[T, R]] = []
        try:
            with self._hold():
                batch = self._take()
                self._commit(batch)
        except BaseException as exc:  # noqa: BLE001 - every waiter must still be woken
            if not batch and isinstance(exc, Exception):
                batch = self._take()  # the hold is refused (store closed): it is refused to everyone queued
            elif not batch:
                with self._lock:  # interrupted while waiting for the hold: withdraw only this caller
                    self._queue.remove(own)
            for ticket in batch:
                if not ticket.settled:
                    ticket.fail(StoreError(f"the batch holding this append failed: {exc}"))
            if not isinstance(exc, Exception):
                raise
        finally:
            for ticket in batch:
                if not ticket.settled:
                    ticket.fail(StoreError("the store did not settle this append; nothing was acknowledged"))
                ticket._done = True
            with self._lock:
                self.batches += 1
                self.items += len(batch)
                successor = self._queue[0] if self._queue else None
                self._leading = successor is not None
                if successor is not None:
                    successor._promoted = True
            if successor is not None:
                successor._gate.release()
            for ticket in batch:
                if ticket is not own:
                    ticket._gate.release()
