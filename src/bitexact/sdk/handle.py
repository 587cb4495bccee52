"""RecordHandle: what ``Run.record`` returns, a read-only mapping that becomes the written entry.

An entry no larger than 1 MiB is written in the call, so its handle is the
entry at once. A larger one is written after the call returns: reading its
handle (``handle["step"]``) waits until it is written, at most
``BITEXACT_DRAIN_TIMEOUT`` seconds, and reads as empty while it is still
unwritten; ``handle.result(timeout)`` waits at most ``timeout`` seconds
(that bound when none is given). An entry that could not be written is a
declared gap (:attr:`RecordHandle.gap`) and its handle stays empty.
"""

from __future__ import annotations

import copy
import decimal
import numbers
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from bitexact.store import AppendResult, Store
from bitexact.interruptible import wait_event
from bitexact.sdk.errors import SdkArgumentError

if TYPE_CHECKING:
    from bitexact.sdk.failures import Gap


def bounded_timeout(timeout: Any, default: float) -> float:
    """A wait's ``timeout`` argument as seconds: ``default`` for None, else bounded as a timed wait can be
    (``math.inf`` waits as long as one can, a negative number or NaN not at all). A value that is no
    number is refused naming ``timeout``, not left to fail in a comparison with no word of which argument."""
    if timeout is None:
        return default
    if isinstance(timeout, bool) or not isinstance(timeout, (numbers.Real, decimal.Decimal)):
        raise SdkArgumentError(f"timeout must be a number of seconds (or None for the default), not "
                               f"{type(timeout).__name__} {timeout!r:.40}", field="timeout")
    return min(max(0.0, float(timeout)), threading.TIMEOUT_MAX)


class RecordHandle(Mapping[str, Any]):
    """The entry one record call wrote, once it is written; empty until then, and if it never is."""

    __slots__ = ("_store", "_run_id", "_kind", "_seq", "_timeout", "_settled", "_event", "_result", "_gap",
                 "_entry", "_lock")

    def __init__(self, store: Store | None, run_id: str | None, kind: str, seq: int, timeout: float) -> None:
        self._store = store
        self._run_id = run_id
        self._kind = kind
        self._seq = seq
        self._timeout = timeout
        # Most handles are settled in the call that made them and never waited on, so the
        # Event a waiter needs is made only when one comes (making and setting one cost
        # about 5 µs of every recorded call).
        self._settled = False
        self._event: threading.Event | None = None
        self._result: AppendResult | None = None
        self._gap: Gap | None = None
        self._entry: dict[str, Any] | None = None
        self._lock = threading.Lock()

    @property
    def run_id(self) -> str | None:
        """The run the entry was recorded into."""
        return self._run_id

    @property
    def kind(self) -> str:
        """The entry's kind."""
        return self._kind

    @property
    def seq(self) -> int:
        """The entry's place in the run's record order."""
        return self._seq

    def step(self, timeout: float | None = None) -> int | None:
        """The step the entry landed at, waiting as :meth:`result` does; None when it never did.

        What the append returned: reading it copies nothing (``result()`` copies
        the whole entry, which may be megabytes).
        """
        # Bounded by what a timed wait can be given: result(math.inf) waits as long as a wait can.
        self._wait(bounded_timeout(timeout, self._timeout))
        return self._result.step if self._result is not None else None

    # -- settled by the run ---------------------------------------------

    def _settle(self, result: AppendResult) -> None:
        self._result = result
        self._finish()

    def _fail(self, gap: Gap | None) -> None:
        self._gap = gap
        self._finish()

    def _finish(self) -> None:
        with self._lock:
            self._settled = True
            event = self._event
        if event is not None:
            event.set()

    def _wait(self, timeout: float) -> bool:
        with self._lock:
            if self._settled:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return wait_event(event, timeout)

    # -- read by the agent ------------------------------------------------

    @property
    def done(self) -> bool:
        """Whether the entry has been written or declared a gap (never waits)."""
        return self._settled

    @property
    def written(self) -> bool:
        """Whether the entry is in the chain (never waits)."""
        return self._settled and self._result is not None

    @property
    def gap(self) -> Gap | None:
        """The gap that declared this entry unwritten, if it came to that."""
        return self._gap

    def result(self, timeout: float | None = None) -> Mapping[str, Any]:
        """The written entry, waiting at most ``timeout`` seconds (default ``BITEXACT_DRAIN_TIMEOUT``).

        An entry still unwritten then, or declared a gap, reads as an empty mapping.
        """
        # Bounded by what a timed wait can be given: result(math.inf) waits as long as a wait can.
        self._wait(bounded_timeout(timeout, self._timeout))
        # Read-only, and a copy: nothing done to what it returns changes the handle (nor a step a
        # human_decision binds to through it).
        return MappingProxyType(copy.deepcopy(self._materialize()))

    def _materialize(self) -> dict[str, Any]:
        result = self._result
        if result is None:
            return {}
        with self._lock:
            if self._entry is None:
                entry: dict[str, Any] | None = None
                if self._store is not None and self.run_id is not None:
                    try:
                        entry = self._store.entry(self.run_id, result.step)
                    except Exception:  # noqa: BLE001 - the store closed; what the append returned still holds
                        entry = None
                if entry is None or entry.get("hash") != result.hash:
                    entry = {"run_id": self.run_id, "step": result.step, "hash": result.hash, "kind": self.kind}
                self._entry = entry
            return self._entry

    def _read(self) -> dict[str, Any]:
        self._wait(self._timeout)
        return self._materialize()

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._read()[key])

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._read()))

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        if self.written:
            assert self._result is not None
            return f"<RecordHandle {self.kind} #{self.seq}: step {self._result.step} of {self.run_id}>"
        state = f"gap {self._gap.cause}" if self._gap else ("unwritten" if self.done else "pending")
        return f"<RecordHandle {self.kind} #{self.seq}: {state}>"

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    # A handle names one record of this process's run, as a lock or a thread does: a copy is the same
    # handle (agent frameworks deep-copy their state, and that must not fail because a handle is in it).
    def __copy__(self) -> RecordHandle:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> RecordHandle:
        return self

    def __reduce__(self) -> Any:
        raise TypeError(f"a RecordHandle ({self.kind} #{self.seq}) is a live view of a record of this process's "
                        "run and cannot be pickled: pickle dict(handle.result()) or handle.step() instead")
