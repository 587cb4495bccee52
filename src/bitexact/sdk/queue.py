"""The ordered background writer: journaled entries written after the call returns, in record order.

One thread per run takes queued entries in the order the agent recorded them
and hands them to the write path, as many as are waiting (up to
``MAX_BATCH`` entries or ``MAX_BATCH_BYTES``) in one durable commit. While
anything is queued, every later entry of the run queues behind it (journaled
first), so the chain's order is always the record order, whatever each
entry's size.

What waits in the queue is held in memory (each entry's JSON), so the queue
is bounded: past ``BITEXACT_QUEUE_MAX_BYTES`` of queued JSON (default 256
MiB), a recording call waits for the writer to make room, at most
``BITEXACT_DRAIN_TIMEOUT`` seconds, then queues anyway with one warning.
The entry is already durable in its journal either way; an agent that
records large entries faster than the policy can scan them is slowed
down, never made to run out of memory, and never loses an entry.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bitexact.config import env_float, env_int
from bitexact.recording.journal_slots import JournalSlots
from bitexact.sdk.handle import RecordHandle
from bitexact.interruptible import wait_for
from bitexact.store import AppendResult

LARGE_ENTRY_BYTES: Final[int] = 1 << 20
"""An entry larger than this (as JSON) is written after the call returns."""

DEFAULT_DRAIN_TIMEOUT: Final[float] = 30.0
MAX_BATCH: Final[int] = 64
"""Queued entries written in one commit, at most."""
MAX_BATCH_BYTES: Final[int] = 4 << 20
"""A batch stops growing past this much entry JSON (a single larger entry is still written alone)."""


DEFAULT_QUEUE_MAX_BYTES: Final[int] = 256 << 20
"""Queued entry JSON past which a recording call waits for the writer (``BITEXACT_QUEUE_MAX_BYTES``)."""

logger = logging.getLogger("bitexact.sdk")


def queue_max_bytes() -> int:
    """``BITEXACT_QUEUE_MAX_BYTES`` (default 256 MiB): how much entry JSON may wait in a run's queue."""
    return env_int("BITEXACT_QUEUE_MAX_BYTES", DEFAULT_QUEUE_MAX_BYTES)


def drain_timeout() -> float:
    """``BITEXACT_DRAIN_TIMEOUT`` seconds (default 30): the longest a read or a run's exit waits."""
    return env_float("BITEXACT_DRAIN_TIMEOUT", DEFAULT_DRAIN_TIMEOUT)


@dataclass
class Pending:
    """One entry waiting for the write path, with the journal that holds it meanwhile."""

    handle: RecordHandle
    kind: str
    raw: bytes
    """The entry's data as JSON, serialized once in the call (the journal holds the same bytes)."""
    prov: str | None
    ctx: str | None
    hints: dict[str, Any] | None
    journal: Path | None
    slot: tuple[JournalSlots, int] | None = None
    """The journal slot holding the entry: its slots file and index (:mod:`bitexact.recording.journal_slots`)."""
    own: bool = False
    """A gap marker the recorder itself writes, queued to keep record order (no journal, no policy)."""


class OrderedWriter:
    """Writes queued entries one at a time, in the order they were put."""

    def __init__(
        self,
        write: Callable[[list[Pending]], list[AppendResult]],
        written: Callable[[Pending, AppendResult], None],
        failed: Callable[[Pending, BaseException], None],
        *,
        name: str = "bitexact-writer",
        max_bytes: int = DEFAULT_QUEUE_MAX_BYTES,
    ) -> None:
        self._write = write
        self._written = written
        self._failed = failed
        self._name = name
        self._queue: deque[Pending] = deque()
        self._inflight: list[Pending] = []
        self._mutex = threading.RLock()
        self._cond = threading.Condition(self._mutex)  # its lock held directly where nothing waits (idle)
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._abandoned = False
        self._abandoned_inflight: set[int] = set()  # ids of the entries whose batch was being written at abandon
        self._closing = False  # the run's exit has begun: a call waiting for room queues at once
        self.max_bytes = max_bytes
        self._bytes = 0  # entry JSON queued and in flight
        self._warned = False
        self._after_inflight: list[Callable[[], None]] = []
        self._settling = False  # running what waited for the batch that just ended: not idle yet
        self.waited = 0.0
        """Seconds recording calls spent waiting for room, in all (for tests and monitoring)."""

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing being written."""
        with self._mutex:  # the condition's lock, without Condition.__enter__'s Python call (asked by every call)
            return not self._queue and not self._inflight and not self._settling

    def _wait_for_room(self, size: int, timeout: float) -> None:
        """Wait (at most ``timeout`` s) until an entry of ``size`` bytes fits under ``max_bytes``
        (:meth:`put` queues it after either way)."""
        with self._cond:
            def roomy_now() -> bool:
                return (not self._bytes or self._bytes + size <= self.max_bytes or self._abandoned
                        or self._closing)

            if roomy_now() or timeout <= 0:
                return
            start = time.monotonic()
            roomy = wait_for(self._cond, roomy_now, timeout)
            self.waited += time.monotonic() - start
            if not roomy and not self._warned:
                self._warned = True
                logger.warning(
                    # In bytes, as the bound is set: whole MiB would state a bound under one MiB as 0.
                    "bitexact: %s: %d bytes of entries still wait for the writer after %g s; queuing more"
                    " anyway (BITEXACT_QUEUE_MAX_BYTES is %d bytes)",
                    self._name, self._bytes, timeout, self.max_bytes,
                )

    def put(self, item: Pending, *, room_timeout: float = 0.0) -> None:
        """Queue ``item``; past ``max_bytes`` queued, first wait up to ``room_timeout`` s for the writer to make room.

        A single entry larger than the bound waits only for an empty queue.
        The item is queued whatever the wait's outcome: it is already
        journaled, and the agent's call must not fail for being fast.
        """
        if self._abandoned:
            raise RuntimeError("the run's writer was abandoned at exit")
        try:
            self._wait_for_room(len(item.raw), room_timeout)
        finally:
            # Queued even when the wait is interrupted (Ctrl-C, a signal handler's SystemExit): a
            # journaled entry never queued would be left as a journal beside the run's seal.
            queued = self._enqueue(item)
        if not queued:
            raise RuntimeError("the run's writer was abandoned at exit")

    def _enqueue(self, item: Pending) -> bool:
        """Queue ``item`` (starting the thread); False when the writer was abandoned."""
        with self._cond:
            if self._abandoned:
                return False
            self._bytes += len(item.raw)
            self._queue.append(item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()
            return True

    def closing(self) -> None:
        """The run is ending: calls waiting for room queue at once, and the exit's drain writes them."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()

    def drain(self, timeout: float) -> bool:
        """Wait until everything queued is written (or declared); False when ``timeout`` ran out first."""
        with self._cond:
            return wait_for(self._cond, lambda: not self._queue and not self._inflight and not self._settling,
                            timeout)

    def abandon(self) -> list[Pending]:
        """Stop after the entry in flight; return what is left unwritten (queued and in flight)."""
        with self._cond:
            self._abandoned = True
            self._abandoned_inflight = {id(item) for item in self._inflight}
            left = self._inflight + list(self._queue)
            self._queue.clear()
            self._bytes = sum(len(item.raw) for item in self._inflight)
            self._cond.notify_all()
            return left

    def was_in_flight(self, item: Pending) -> bool:
        """Whether ``item`` (one :meth:`abandon` returned) was in the batch being written when the writer was
        abandoned: that batch may still land, so whether the entry reaches the chain is not known yet."""
        with self._cond:
            return id(item) in self._abandoned_inflight

    @property
    def pending(self) -> int:
        """Entries queued or being written."""
        with self._cond:
            return len(self._queue) + len(self._inflight)

    @property
    def busy(self) -> bool:
        """A batch is being written (an abandoned writer still finishes the one it holds)."""
        with self._cond:
            return bool(self._inflight)

    def after_inflight(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` once the writer has nothing more to write: now, or in the writer thread when the
        batch that leaves nothing behind it ends.

        An abandoned writer still finishes the batch it holds, and a stopped one
        everything still queued (a run's exit cut short by Ctrl-C in its drain);
        what must not happen before that lands (or fails), such as letting a
        repair fold the run's journals, waits for this.
        """
        with self._cond:
            if self._inflight or (self._queue and not self._abandoned):
                self._after_inflight.append(fn)
                return
        fn()

    def stop(self) -> None:
        """Let the thread end once the queue is empty."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def _take(self) -> list[Pending]:
        """The next batch: queued entries in order, up to MAX_BATCH of them or MAX_BATCH_BYTES of JSON."""
        batch = [self._queue.popleft()]
        size = len(batch[0].raw)
        while self._queue and len(batch) < MAX_BATCH and size + len(self._queue[0].raw) <= MAX_BATCH_BYTES:
            item = self._queue.popleft()
            batch.append(item)
            size += len(item.raw)
        return batch

    def _write_batch(self, batch: list[Pending]) -> None:
        """Write the batch in one commit; if that fails, each entry alone, so one bad entry fails by itself."""
        try:
            results = self._write(batch)
        except BaseException as exc:  # noqa: BLE001 - a failed write is declared; the queue goes on
            if len(batch) == 1:
                self._failed(batch[0], exc)
                return
            for item in batch:
                self._write_batch([item])
            return
        for item, result in zip(batch, results):
            try:
                self._written(item, result)
            except Exception:  # noqa: BLE001 - the entry is in the chain: the rest of the batch and the queue go on
                logger.exception("bitexact: %s: after writing an entry", self._name)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._stopping or self._abandoned)
                if self._abandoned or not self._queue:
                    return
                batch = self._inflight = self._take()
            try:
                self._write_batch(batch)
            finally:
                with self._cond:
                    self._bytes -= sum(len(item.raw) for item in batch)
                    self._inflight = []
                    if self._abandoned or not self._queue:  # nothing more to write after this batch
                        after, self._after_inflight = self._after_inflight, []
                    else:
                        after = []
                    self._settling = bool(after)
                    self._cond.notify_all()
                if after:
                    # Done before a drain sees the queue idle: a caller that waited for it finds what they
                    # did (the run's live lock given back) already done.
                    for fn in after:
                        try:
                            fn()
                        except Exception:  # noqa: BLE001 - the queue goes on
                            logger.exception("bitexact: %s: after a batch", self._name)
                    with self._cond:
                        self._settling = False
                        self._cond.notify_all()
