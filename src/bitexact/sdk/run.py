"""Runs: ``bitexact.run(...)`` as ``with``, ``async with`` and a decorator, and the Run it opens.

A run opens with ``run_meta`` (python, platform, bitexact version, host
fingerprint, the capture policy's digest or ``off``) and seals with
``run_end`` on exit. An exception ends the run too: a marker records its
type and message (through the write path, so the capture policy scrubs it)
and the exception is re-raised. Exit first writes every queued entry,
waiting at most ``BITEXACT_DRAIN_TIMEOUT`` seconds; past it each entry still
unwritten is a declared ``storage_unavailable`` gap naming its journal, and
the run is left unsealed for ``bitexact repair`` to fold its journals.

Every write goes through :mod:`bitexact.recording`. As the capture contract
says, an entry up to 1 MiB is scanned and written in the call; a larger one
is synced to a journal sealed under the host key before the call returns
(a journal slot once the run has large slots, else a journal file) and
written after it, in record order, many per commit
(:mod:`bitexact.sdk.queue`). With ``journal_small`` a small entry (up to
about 15 KiB of JSON) takes the large entries' path through a small journal
slot: durable before the call returns, in the chain after it. Strict mode
always writes in the call and
raises :class:`~bitexact.sdk.errors.RecordingError` on any recording
failure; a non-strict run declares the failure as a gap and never changes
what the agent sends, receives or raises.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from decimal import Decimal
from pathlib import Path
from typing import Any, Final, Literal, Protocol, TypeVar

import orjson

from bitexact import config
from bitexact.crypto import default_alg
from bitexact.errors import stated
from bitexact.evidence.kinds import ALLOWED_PROV, AUDIT_KINDS, KINDS
from bitexact.evidence.timefmt import now_iso
from bitexact.recording import Recorder, RunWriter
from bitexact.recording.writer import WithheldResult
from bitexact.recording.journal import (
    JournalError,
    JournalRecord,
    check_run_id,
    hold_live_lock,
    release_live_lock,
    remove_journal,
    write_journal,
)
from bitexact.recording.journal_slots import (
    LARGE_SLOT_BYTES,
    LARGE_SLOT_COUNT,
    SLOT_BYTES,
    SLOT_COUNT,
    JournalSlots,
)
from bitexact.store import AppendResult, StoreBusyError
from bitexact.sdk import active, nondet, stores
from bitexact.sdk.causal import (ENV_VAR, CausalContext, ContextFormatError, HybridClock, format_context,
                                  inherited_context, parse_context)
from bitexact.sdk.custody import check_custody
from bitexact.sdk.errors import (
    CustodyHintError,
    IdentityRefusedError,
    RecordingError,
    RunClosedError,
    SdkArgumentError,
)
from bitexact.sdk.failures import INVALID_ARGUMENT, STORAGE_UNAVAILABLE, FailureLog, Gap, cause_of, describe
from bitexact.sdk.handle import RecordHandle, bounded_timeout
from bitexact.sdk.identity import COMPUTED, IdentityVerdict, apply_identity_rule, identity_gap, workflow_digest
from bitexact.sdk.jsonable import dump_json, exception_message, to_jsonable, type_name
from bitexact.sdk.queue import LARGE_ENTRY_BYTES, OrderedWriter, Pending, drain_timeout, queue_max_bytes
from bitexact.sdk.records import (
    POLICY_CHECK_KIND,
    bytes_context_data,
    check_name,
    context_data,
    human_decision_data,
    marker_data,
    policy_check_data,
)
from bitexact.sdk.stores import recorder_for, store_home
from bitexact.sdk.tools import async_callable, check_tool_paths, tool_call_data

logger: Final = logging.getLogger("bitexact.sdk")
F = TypeVar("F", bound=Callable[..., Any])

SDK_LABEL: Final[str] = "sdk-python"
JOURNAL_SMALL_ENV: Final[str] = "BITEXACT_JOURNAL_SMALL"
"""Set to 1 to make small entries durable in the call through journal slots (``journal_small``)."""
RECORDABLE: Final[frozenset[str]] = KINDS - AUDIT_KINDS - {"run_meta", "run_end", "fork", "injected"}
"""Kinds an agent may record: not the run's own bookends, forks, injections or audit entries."""


_exit_records: ContextVar[Run | None] = ContextVar("bitexact_exit_records", default=None)
"""The run whose exit is recording its own entry here (the exception that ended it)."""


class EndsWithRun(Protocol):
    """A call still open (an HTTP exchange, a generator tool): :meth:`run_ending` records it as it stands."""

    def run_ending(self) -> None: ...


class Run:
    """One recording run. Made by :func:`run`; its methods record into the run's chain."""

    def __init__(
        self,
        *,
        name: str | None = None,
        run_id: str | None = None,
        strict: bool = False,
        capture_nondeterminism: bool = False,
        home: Path | str | None = None,
        recorder: Recorder | None = None,
        parent_context: str | None = None,
        journal_small: bool | None = None,
    ) -> None:
        self.name = name
        self._journal_small_arg = None if journal_small is None else _flag("journal_small", journal_small)
        self.journal_small = bool(self._journal_small_arg)
        self.requested_run_id = run_id
        self.strict = _flag("strict", strict)
        self.capture_nondeterminism = _flag("capture_nondeterminism", capture_nondeterminism)
        self._home_arg = home
        self._recorder_arg = recorder
        self._parent_arg = parent_context
        self.run_id: str | None = None
        self.home: Path | None = None
        self.recorder: Recorder | None = None
        self.writer: RunWriter | None = None
        self.failures = FailureLog(None, None)
        self.clock = HybridClock()
        self.parent: CausalContext | None = None
        self.open = False
        self.sealed = False
        self._started = False
        self._order = threading.RLock()  # a gap declared in the call takes it again (_declare_in_order)
        self._seq = 0
        self._queue: OrderedWriter | None = None
        self._orphans: set[str] = set()
        self._large_slots_thread: threading.Thread | None = None
        self._live_lock: int | None = None  # the run's live lock (a descriptor), once it has journals
        self._lock_released = False  # the run gave its live lock back (its exit): never taken again
        self._forked = False  # this process is a child forked while the run was open: the run is not ours
        self._nondet_installed = False  # this run holds one nondet.install() until its end
        self._host_key: Any = None
        self._starting_on: Recorder | None = None  # the shared recorder held for the start (stores.started)
        self._store_path: Path | None = None  # the store's file, absolute, and its (device, inode) at the start
        self._store_file: tuple[int, int] | None = None
        self._journal_warned = False
        self._slots_warned = False
        self._slots: JournalSlots | None = None
        self._large_slots: JournalSlots | None = None
        self._large_slots_started = False
        self._order_large = threading.Lock()
        self._host_key_lock = threading.Lock()
        self._timeout = 30.0
        self._accepting = True  # False once the run's exit has begun: later records are after its end
        # Calls still open: HTTP exchanges whose response is open (its entry written when read or closed) and
        # generator tools not yet exhausted or closed. Ended with the run, in the order they opened (a dict
        # keeps it).
        self._open_calls: dict[EndsWithRun, None] = {}
        self._open_calls_lock = threading.Lock()
        self._open_calls_ended = False  # the exit recorded the calls open: one opened later is never held
        # The run current where its scope was entered, and whether its scope was left while a run entered over
        # it was still current (generators each holding a run, closed out of order): _restore_current.
        self._entered_over: Run | None = None
        self._left_out_of_order = False

    # -- lifecycle ----------------------------------------------------------

    def _causal_parent(self) -> tuple[CausalContext | None, str | None]:
        text = self._parent_arg if self._parent_arg is not None else inherited_context()
        if text is None:
            return None, None
        try:
            return parse_context(text), None
        except ContextFormatError as exc:
            if self.strict:
                if self._parent_arg is None:  # from the environment: the message names the setting
                    # Quoted cut to 80 characters, as parse_context quotes a part: the setting may be megabytes.
                    raise ContextFormatError(f"{ENV_VAR}={text!r:.80} is not a causal context: {exc}",
                                             field=ENV_VAR) from exc
                raise
            return None, str(exc)

    def start(self) -> Run:
        """Open the run: the write path, ``run_meta``, the background writer. Called by :func:`run`."""
        # All of it is the SDK's own work: the keys, slots and ids it makes read the random source and
        # the clock, which an outer run capturing nondeterminism must never record as the agent's.
        with active.busy():
            return self._start()

    def _start(self) -> Run:
        try:
            return self._open_run()
        finally:
            if self._starting_on is not None:
                # Registered live now (active.live_runs), or not started: the store is no longer held for it.
                stores.started(self._starting_on)
                self._starting_on = None

    def _open_run(self) -> Run:
        if self._started:
            raise SdkArgumentError("this Run has already been started; bitexact.run() makes a new one", field="run")
        self._started = True
        bad_context: str | None = None
        try:
            self._timeout = drain_timeout()
            queue_bytes = queue_max_bytes()
            if self._journal_small_arg is None:
                self.journal_small = config.env_flag(JOURNAL_SMALL_ENV)
            if self.requested_run_id is not None:
                _check_run_id(self.requested_run_id)
            if isinstance(self._home_arg, str) and not self._home_arg.strip():
                # Path("") is the working directory: the store and keys would land wherever the agent runs
                raise stated(SdkArgumentError("home is empty: name the data directory (or leave it None for "
                                              "BITEXACT_HOME, else ~/.bitexact)", field="home"))
            self.parent, bad_context = self._causal_parent()
            if self._recorder_arg is not None:
                recorder = self._recorder_arg
                # Absolute, as recorder_for makes it: a relative path would be read again at each use,
                # and an agent changing directory would move the run's journals and live lock with it.
                home = (store_home(recorder.store) or config.home(self._home_arg)).expanduser().absolute()
            else:
                recorder, home = recorder_for(self._home_arg, starting=True)
                self._starting_on = recorder
            meta: dict[str, Any] = {"sdk": SDK_LABEL, "strict": self.strict,
                                    "capture_nondeterminism": self.capture_nondeterminism,
                                    "journal_small": self.journal_small and not self.strict}  # strict ignores it
            clock_problem: str | None = None
            if self.parent is not None:
                meta["causal"] = {"caused_by": [self.parent.id], "parent": str(self.parent)}
                try:
                    meta["causal"]["hlc"] = list(self.clock.observe(self.parent.hlc))
                except ContextFormatError as exc:  # a valid parent at the clock's very limit: no later reading
                    if self.strict:
                        raise ContextFormatError(f"the run's clock cannot follow its parent context's: {exc}",
                                                 field="hlc") from exc
                    clock_problem = str(exc)
            with active.busy():
                writer = recorder.start(run_id=self.requested_run_id, name=self.name, meta=meta)
        except Exception as exc:
            if self.strict:
                if isinstance(exc, SdkArgumentError):
                    raise
                raise RecordingError(f"the run could not start: {describe(exc)}", cause=cause_of(exc)) from exc
            named = {exc.field: str(exc)} if isinstance(exc, SdkArgumentError) else None  # the argument at fault
            self.failures.declare(Gap(cause_of(exc), f"the run could not start, so nothing is recorded: "
                                                     f"{_start_refusal(exc)}", fields=named))
            return self
        self.recorder, self.writer, self.home = recorder, writer, home
        self._store_path = stores.store_path(recorder.store)
        self._store_file = stores.store_file(recorder.store, self._store_path)
        self.run_id = writer.run_id
        self.failures = FailureLog(self.run_id, home)
        self._hold_live_lock_from_start()
        self._queue = OrderedWriter(self._queued_write, self._queued_written, self._queued_failed,
                                    name=f"bitexact-writer-{self.run_id}", max_bytes=queue_bytes)
        if self.journal_small and not self.strict:
            self._slots = self._open_slots()
        self.open = True
        active.register(self)
        if self.capture_nondeterminism:
            nondet.install()
            self._nondet_installed = True
        if bad_context is not None:
            given = "parent_context" if self._parent_arg is not None else ENV_VAR  # where the context came from
            self.failures.declare(Gap(INVALID_ARGUMENT, f"{given} is not a causal context: {bad_context}",
                                      fields={given: bad_context}), self.writer)
        if clock_problem is not None:
            self.failures.declare(Gap(INVALID_ARGUMENT, f"the run's clock cannot follow its parent context's:"
                                                        f" {clock_problem}", fields={"hlc": clock_problem}),
                                  self.writer)
        return self

    def finish(self, exc: BaseException | None = None) -> None:
        """End the run: record ``exc`` if one ended it, drain the queue, seal (or leave unsealed)."""
        if not self.open:
            if self._forked and self._nondet_installed:
                # A forked child leaving the block ends nothing of the parent's run, but its own process
                # gets the real clock, random and datetime back, as the run's end would give them.
                self._nondet_installed = False
                nondet.uninstall()
            return
        # The exit's own work (gaps, warnings, the seal) reads the clock and the random source:
        # under capture_nondeterminism that must never be recorded as the agent's.
        with active.busy():
            error = self._finish(exc)
        if error is not None:
            cause = error.cause if isinstance(error, RecordingError) else cause_of(error)
            if exc is not None:
                # The agent's own exception is already on its way out: it stays the one raised.
                logger.warning("bitexact: run %s could not be sealed (%s) while %s ended it",
                               self.run_id, cause, type(exc).__name__)
                return
            raise RecordingError(f"run {self.run_id} could not be sealed: {describe(error)}",
                                 cause=cause) from error

    def _finish(self, exc: BaseException | None) -> BaseException | None:
        """:meth:`finish`'s work; the error strict mode raises, if any."""
        error: BaseException | None = None
        try:
            # The exit begins first: its own entries (the calls still open, the exception) never wait for
            # queue room, and no other thread's or task's record lands among them.
            self._exit_begins()
            own = _exit_records.set(self)  # the exit's own entries: the only ones taken now
            try:
                self._end_open_calls()
                if exc is not None:
                    self._record_exception(exc)
            finally:
                _exit_records.reset(own)
            assert self._queue is not None and self.writer is not None
            seal = True
            if not self._queue.drain(self._timeout):
                left = self._queue.abandon()
                seal = not left  # the last batch may have landed between the timeout and the abandon
                if self._queue.busy:
                    # The batch it holds waits on the store (another process's lock, the disk): the process's
                    # exit must not wait for it again when it closes the store (stores.close_stores).
                    stores.gave_up_on(self.recorder.store if self.recorder is not None else None, self._queue)
                for item in left:
                    if item.own:
                        continue  # a gap's marker: the gap is declared already
                    journal = self._journal_name(item)
                    # An entry of the batch being written may still land: its fate is not known, and the gap
                    # must not say it was not written (a repair then names its journal already_written).
                    fate = ("its write was under way and may still land (`bitexact repair` then names its journal"
                            " already_written)" if self._queue.was_in_flight(item) else "never handed to the store")
                    gap = Gap(STORAGE_UNAVAILABLE,
                              f"not written within BITEXACT_DRAIN_TIMEOUT ({self._timeout:g} s) of the run's exit:"
                              f" {fate}", kind=item.kind, seq=item.handle.seq, journal=journal)
                    self.failures.declare(gap)
                    item.handle._fail(gap)
                    if journal:
                        self._orphans.add(journal)
            if self._orphans:
                seal = False
                logger.warning("bitexact: run %s left unsealed: %d journal(s) wait for "
                               "`bitexact repair %s --by NAME --note TEXT`",
                               self.run_id, len(self._orphans), self.run_id)
            if not self.failures.flush(self.writer):
                # A gap the chain never took: sealed, the run would read as complete. Left unsealed, health
                # names it (run-unsealed), and the log lines say what is missing.
                seal = False
                logger.warning("bitexact: run %s left unsealed: %d gap marker(s) or failures-record line(s) could"
                               " not be written (the warning lines above declare each)",
                               self.run_id, self.failures.pending)
            lost = self._store_lost()
            if lost is not None:
                # Sealed, the run would read as complete to the agent (r.sealed) while no reader can find a
                # step of it. The failures record (made again under the data directory) and the log say so.
                seal = False
                self.failures.declare(lost)
                if self.strict:
                    error = stated(RecordingError(lost.detail, cause=lost.cause))  # its words name no data
            if seal:
                self.writer.seal()
                self.sealed = True
        except Exception as failure:  # noqa: BLE001 - declared (or raised in strict mode) by finish
            if self.strict:
                error = failure
            else:
                self.failures.declare(Gap(cause_of(failure), f"the run could not be sealed: {describe(failure)}"))
        finally:
            self.open = False
            if self._queue is not None:
                self._queue.stop()
            making = self._large_slots_thread
            if making is not None and making.is_alive():
                # Its slots file is made under a temporary name: waited for, so that a process ending
                # right after the run leaves no half-made file beside a sealed run.
                making.join(self._timeout)
            with self._order_large:
                slots_files = [f for f in (self._slots, self._large_slots) if f is not None]
            # An exit cut short (Ctrl-C during the drain) leaves entries queued: their slots stay for repair.
            settled = self._queue is None or self._queue.idle
            for slots in slots_files:
                # Removed only when no slot holds an entry that is not in the chain.
                slots.close(remove=settled and not any(name.startswith(slots.path.name) for name in self._orphans))
            # Repair may fold what is left once the lock is given back: not before the writer thread
            # has finished a batch it still holds (an abandoned drain), which may yet land or be
            # journaled again, nor what is still queued when the drain was cut short (Ctrl-C), which
            # the writer goes on writing.
            if self._queue is not None:
                self._queue.after_inflight(self._release_live_lock)
            else:
                self._release_live_lock()
            active.unregister(self)
            if self._nondet_installed:
                self._nondet_installed = False
                nondet.uninstall()
            try:
                stores.run_ended()  # its store, when its directory was removed and no other run uses it
            except Exception:  # noqa: BLE001 - closing a store no path names: nothing to tell the agent
                pass
        return error

    def _store_lost(self) -> Gap | None:
        """The gap of a store whose file was removed or replaced while the run recorded (its data directory
        deleted): the entries went into a file no path names, and nobody can read them back; else None."""
        store = self.recorder.store if self.recorder is not None else None
        if store is None or self._store_file is None or stores.store_file(store, self._store_path) == self._store_file:
            return None
        return Gap(STORAGE_UNAVAILABLE,
                   f"the store at {self._store_path} was removed or replaced while the run"
                   f" recorded: its {self.writer.steps if self.writer is not None else 0} step(s) went into the"
                   " file opened at its start, which is no longer at that path (deleted: the run is lost, its"
                   " journals too; moved: the run is in it, unsealed), and it is not sealed; keep the data"
                   " directory in place while runs record into it")

    def _exit_begins(self) -> None:
        """The run's exit begins: calls still recording finish queueing (one waiting for room queues at once);
        later ones (another thread's or task's) are refused as after the run's end, so nothing lands beside
        the exception that ended the run, after the drain or the seal."""
        if self._queue is not None:
            self._queue.closing()
        with self._order:
            self._accepting = False

    def _takes_records(self) -> bool:
        """Records are taken: the exit has not begun, or this is the exit recording its own entries."""
        return self._accepting or _exit_records.get() is self

    def _call_opened(self, call: EndsWithRun) -> None:
        with self._open_calls_lock:
            if not self._open_calls_ended:
                self._open_calls[call] = None

    def _call_ended(self, call: EndsWithRun) -> None:
        with self._open_calls_lock:
            self._open_calls.pop(call, None)

    def _end_open_calls(self) -> None:
        """A response the agent has neither read to its end nor closed, and a generator tool neither exhausted
        nor closed (an async one left by ``break`` is closed later, by a task of asyncio's), are recorded as
        they stand, in the run they were made in: their own end may come after the run's, or never."""
        with self._open_calls_lock:
            still_open, self._open_calls = list(self._open_calls), {}
            self._open_calls_ended = True
        for call in still_open:
            call.run_ending()

    def _record_exception(self, exc: BaseException) -> None:
        kind = type(exc)
        try:
            self._submit("marker", {"note": "run ended by an exception",
                                    "exception": {"type": type_name(kind),
                                                  "message": to_jsonable(exception_message(exc))}})
        except Exception as failure:  # noqa: BLE001 - the run still drains and seals; the marker's loss is declared
            if self.strict:
                raise
            self.failures.declare(Gap(cause_of(failure), f"the exception marker could not be recorded: "
                                                         f"{describe(failure)}"))

    @property
    def steps(self) -> int:
        """Entries in the run's chain so far (entries still queued are not counted yet)."""
        return self.writer.steps if self.writer is not None else 0

    def last_step(self, kind: str, timeout: float | None = None) -> int | None:
        """The step of the newest ``kind`` entry this run wrote, once the entries queued before the call are
        written (at most ``timeout``, default the drain timeout); None when there is none.

        For ``human_decision(..., binds_step=r.last_step("http_call"))`` after a wrapped client's call, which
        gives no handle: ``r.steps - 1`` names the capture policy's gap marker when it declared one after the
        entry. A gap marker is never a ``marker`` here.
        """
        self.drain(timeout)
        return self.writer.last_step(kind) if self.writer is not None else None

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued entry is written (at most ``timeout``, default the drain timeout)."""
        if self._queue is None:
            return True
        # Bounded as a handle's wait is: math.inf waits as long as a timed wait can, NaN not at all.
        return self._queue.drain(bounded_timeout(timeout, self._timeout))

    # -- the one path every record takes -------------------------------------

    def _empty_handle(self, kind: str, gap: Gap | None, seq: int = 0) -> RecordHandle:
        handle = RecordHandle(None, self.run_id, kind, seq, 0.0)
        handle._fail(gap)
        return handle

    def _next_seq(self) -> int:
        """The next place in record order, for a record that became a gap in the call: its gap and its
        handle name it (a decision binding that handle names the record its gap declares)."""
        with self._order:
            self._seq += 1
            return self._seq

    def _forked_away(self) -> None:
        """In a child forked while this run was open, or held its live lock (active.py's fork hook): the run
        stays the parent's. The child records nothing into it, and leaving its ``with`` block ends nothing
        (the parent's slots, live lock and failures record are left alone)."""
        self.open = False
        self._accepting = False
        self._forked = True
        # The child's copy of the live lock's descriptor: closed (never unlocked), so that the flock,
        # which lasts while any descriptor of the open file does, ends with the parent's. A child kept
        # alive after the parent was killed must not keep `bitexact repair` refused.
        fd, self._live_lock, self._lock_released = self._live_lock, None, True
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def _closed(self, kind: str) -> RecordHandle:
        if self._forked:
            if self.strict:
                raise RunClosedError(f"run {self.run_id} is recorded by the process this one was forked from",
                                     field="run")
            return self._empty_handle(kind, None)
        if not self._started or self.writer is None:
            if self.strict:
                raise RunClosedError("this run is not recording (it did not start)", field="run")
            return self._empty_handle(kind, None)  # the start failure is the declared gap
        if self.strict:
            raise RunClosedError(f"run {self.run_id} has ended: nothing more can be recorded into it", field="run")
        gap = self.failures.declare(Gap(INVALID_ARGUMENT, "recorded after the run ended", kind=kind))
        return self._empty_handle(kind, gap)

    def _submit_hinted(
        self,
        kind: str,
        data: dict[str, Any],
        custody: Mapping[str, str] | None,
        *,
        prov: str | None = None,
        ctx: str | None = None,
    ) -> RecordHandle:
        """:meth:`_submit` with the agent's custody hints; a custody that is not one withholds the entry."""
        try:
            hints = check_custody(custody)
        except CustodyHintError as exc:
            return self._withheld(kind, exc)
        return self._submit(kind, data, prov=prov, ctx=ctx, hints=hints)

    def _submit(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        prov: str | None = None,
        ctx: str | None = None,
        hints: dict[str, Any] | None = None,
    ) -> RecordHandle:
        """Record ``data`` as the run's next entry in record order.

        ``data`` is serialized once, in the call (:func:`dump_json`): that is
        the entry as it stood at the call, whatever the agent does with its
        objects afterwards, and its size decides whether it is written now.
        """
        if not self.open:
            return self._closed(kind)
        assert self.writer is not None and self._queue is not None and self.recorder is not None
        raw: bytes | None = None
        failure: Exception | None = None
        # One busy block for the serialization and the write (the SDK's own work both): a second cost each call
        # a context object and a context variable's set and reset more.
        with active.busy():
            try:
                raw = dump_json(data)
            except Exception as exc:  # noqa: BLE001 - a value no converter could write: declared, never raised
                failure = exc
            # A call waits for queue room at most the drain timeout in all: the time it waited for an earlier
            # call's turn (which may itself wait for room) counts against its own bound.
            deadline = time.monotonic() + self._timeout
            with self._order:
                if not self._takes_records():
                    return self._closed(kind)
                self._seq += 1
                handle = RecordHandle(self.recorder.store, self.run_id, kind, self._seq, self._timeout)
                if failure is not None or raw is None:
                    unwritable = failure if failure is not None else ValueError("not serialized")
                    # Declared in strict mode too, before the raise: the call it stands for (a tool's side
                    # effect) happened, and a run sealed without a word of it would read as complete.
                    handle._fail(self._declare_in_order(Gap(INVALID_ARGUMENT, describe(unwritable), kind=kind,
                                                            seq=handle.seq)))
                    if self.strict:
                        raise RecordingError(f"{kind} #{handle.seq} could not be serialized: {describe(unwritable)}",
                                             cause=INVALID_ARGUMENT) from unwritable
                    return handle
                if self.strict:
                    try:
                        result = self.writer.append(kind, orjson.loads(raw), prov=prov, ctx=ctx, hints=hints)
                    except Exception as exc:
                        # Declared as a non-strict run declares it (journaled for repair when the storage failed,
                        # the run then left unsealed; the failures record; a chain marker when the chain takes
                        # one), then raised: the agent hears it, and the evidence says it too.
                        self._write_failed(handle, kind, raw, prov, ctx, hints, exc)
                        raise RecordingError(f"{kind} #{handle.seq} was not recorded: {describe(exc)}",
                                             cause=cause_of(exc)) from exc
                    if isinstance(result, WithheldResult):
                        raise RecordingError(f"{kind} #{handle.seq} was withheld whole by the capture policy: "
                                             f"{result.field}: {result.reason}", cause=INVALID_ARGUMENT)
                    handle._settle(result)
                    return handle
                large = len(raw) > LARGE_ENTRY_BYTES
                slots = self._large_slots if large else self._slots
                slot = self._journal_in_slot(slots, handle.seq, kind, raw, prov, ctx, hints)
                if slot is not None:  # durable now; written into the chain after the call, in order
                    self._put(Pending(handle, kind, raw, prov, ctx, hints, None, slot), deadline)
                    return handle
                if not large and self._queue.idle:
                    self._write_now(handle, kind, raw, prov, ctx, hints)
                    return handle
                journal = self._journal(handle.seq, kind, raw, prov, ctx, hints)
                if large:
                    self._prepare_large_slots()
                if journal is None:
                    # No journal: written in the call instead, once the entries before it are written. If they
                    # are not within the bound, the entry cannot be made durable before the call returns:
                    # declared a gap, never queued in memory alone (a crash would lose it without a trace).
                    if self._queue.drain(self._timeout):
                        self._write_now(handle, kind, raw, prov, ctx, hints)
                    else:
                        handle._fail(self._declare_in_order(Gap(
                            STORAGE_UNAVAILABLE, "not recorded: its journal could not be written, and the entries"
                            f" before it were not written within BITEXACT_DRAIN_TIMEOUT ({self._timeout:g} s)",
                            kind=kind, seq=handle.seq)))
                    return handle
                self._put(Pending(handle, kind, raw, prov, ctx, hints, journal), deadline)
                return handle

    def _put(self, item: Pending, deadline: float | None = None) -> None:
        """Queue a journaled entry, waiting for room until ``deadline`` (monotonic; none: no wait); if the
        writer was abandoned meanwhile, it is a declared gap, never raised."""
        assert self._queue is not None
        room = 0.0 if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            self._queue.put(item, room_timeout=room)
        except RuntimeError as exc:  # the run's exit gave up on the writer while this call waited for room
            self._queued_failed(item, exc)

    def _write_now(self, handle: RecordHandle, kind: str, raw: bytes, prov: str | None, ctx: str | None,
                   hints: dict[str, Any] | None) -> None:
        assert self.writer is not None
        try:
            result = self.writer.append(kind, orjson.loads(raw), prov=prov, ctx=ctx, hints=hints)
        except Exception as exc:  # noqa: BLE001 - declared as a gap; the agent goes on
            self._write_failed(handle, kind, raw, prov, ctx, hints, exc)
            return
        self._settle(handle, result)

    def _settle(self, handle: RecordHandle, result: AppendResult) -> None:
        """Settle ``handle`` with what its append returned. An entry the capture policy withheld whole is
        not in the chain: a declared gap (the policy's marker, already written, states it there), and
        its handle stays empty."""
        if isinstance(result, WithheldResult):
            gap = Gap(INVALID_ARGUMENT, f"withheld whole by the capture policy: {result.reason}", kind=handle.kind,
                      seq=handle.seq, fields={result.field: result.reason} if result.field else None)
            handle._fail(self.failures.declare(gap))
            return
        handle._settle(result)

    def _load_host_key(self) -> Any:
        assert self.home is not None
        with self._host_key_lock:  # the large-slots thread and a call may both be first to make it
            if self._host_key is None:
                from bitexact.crypto.hostkey import load_host_key

                self._host_key = load_host_key(self.home)
            return self._host_key

    def _hold_live_lock(self) -> None:
        """Before the run's first journal: hold its live lock while recording, so that a repair run beside
        it refuses instead of folding (or removing) journals whose entries are on their way. Once the run
        has given the lock back it is not taken again: what is journaled then is repair's to fold."""
        assert self.home is not None and self.run_id is not None
        with self._host_key_lock:
            if self._live_lock is None and not self._lock_released:
                self._live_lock = hold_live_lock(self.home, self.run_id)
                active.holds_live_lock(self, True)

    def _hold_live_lock_from_start(self) -> None:
        """Hold the run's live lock for the whole recording, journals or none: ``bitexact repair`` then
        refuses a live run, and ``bitexact health`` tells a run still recording from one whose process
        stopped before its seal (``run-unsealed``)."""
        try:
            self._hold_live_lock()
        except (JournalError, OSError) as exc:
            # No lock (an id no journal directory can be named for, an unwritable journals/): the run
            # records as before; a journal it needs later tries again and warns then. Said once: without
            # the lock, `bitexact repair` and `bitexact health` cannot tell that this run is live.
            logger.warning("bitexact: run %s holds no live lock (%s): `bitexact health` and `bitexact repair`"
                           " cannot tell that it is still recording", self.run_id, describe(exc))

    def _release_live_lock(self) -> None:
        with self._host_key_lock:
            self._lock_released = True
            if self._live_lock is not None and self.home is not None and self.run_id is not None:
                release_live_lock(self.home, self.run_id, self._live_lock)
                self._live_lock = None
                active.holds_live_lock(self, False)

    def _open_slots(self, *, count: int = SLOT_COUNT, slot_bytes: int = SLOT_BYTES) -> JournalSlots | None:
        """A slots file for the run, or None (entries then take another path) with one warning."""
        assert self.home is not None and self.run_id is not None
        try:
            self._hold_live_lock()
            return JournalSlots(self.home, self._load_host_key(), self.run_id, count=count, slot_bytes=slot_bytes)
        except Exception as exc:  # noqa: BLE001 - no slots: small entries are written in the call instead
            if not self._slots_warned:  # once per run: the large slots are tried again on their own
                self._slots_warned = True
                logger.warning("bitexact: run %s: cannot make journal slots (%s); entries take the slower paths",
                               self.run_id, describe(exc))
            return None

    def _prepare_large_slots(self) -> None:
        """After the run's first large entry: make its large slots on a thread, so later ones are cheap.

        Making them (8 MiB of zeros, synced) would cost the call more than
        the journal file it saves, so the first large entry takes a file.
        """
        with self._order_large:
            if self._large_slots_started or not self.open:
                return
            self._large_slots_started = True

        def make() -> None:
            slots = self._open_slots(count=LARGE_SLOT_COUNT, slot_bytes=LARGE_SLOT_BYTES)
            with self._order_large:
                if self.open:
                    self._large_slots = slots
                    return
            if slots is not None:
                slots.close(remove=True)  # the run ended meanwhile

        self._large_slots_thread = threading.Thread(target=make, name=f"bitexact-slots-{self.run_id}", daemon=True)
        self._large_slots_thread.start()

    def _journal_in_slot(self, slots: JournalSlots | None, seq: int, kind: str, raw: bytes, prov: str | None,
                         ctx: str | None, hints: dict[str, Any] | None) -> tuple[JournalSlots, int] | None:
        """Journal an entry into a free slot of ``slots`` (synced); the slot, or None to take another path."""
        if slots is None or not slots.fits(raw):
            return None
        assert self.writer is not None and self.run_id is not None
        record = JournalRecord(self.run_id, seq, kind, {}, prov, ctx, hints, self.writer.steps, now_iso())
        try:
            index = slots.write(record, raw)
        except Exception as exc:  # noqa: BLE001 - the entry takes another path instead
            logger.warning("bitexact: run %s: a journal slot could not be written (%s)", self.run_id, describe(exc))
            return None
        return None if index is None else (slots, index)

    def _journal_name(self, item: Pending) -> str | None:
        if item.journal is not None:
            return item.journal.name
        if item.slot is not None:
            slots, index = item.slot
            return slots.name(index)
        return None

    def _journal(self, seq: int, kind: str, raw: bytes, prov: str | None, ctx: str | None,
                 hints: dict[str, Any] | None, *, unwritten: bool = False) -> Path | None:
        assert self.writer is not None and self.home is not None and self.run_id is not None
        try:
            self._hold_live_lock()
            self._load_host_key()
            record = JournalRecord(self.run_id, seq, kind, {}, prov, ctx, hints, self.writer.steps, now_iso(),
                                   unwritten=unwritten)
            return write_journal(self.home, self._host_key, record, data_json=raw)
        except Exception as exc:  # noqa: BLE001 - no journal: the entry is written in the call instead
            if not self._journal_warned:
                self._journal_warned = True
                logger.warning("bitexact: run %s: cannot journal large entries (%s); writing them in the call",
                               self.run_id, describe(exc))
            return None

    def _write_failed(self, handle: RecordHandle, kind: str, raw: bytes, prov: str | None,
                      ctx: str | None, hints: dict[str, Any] | None, exc: BaseException) -> None:
        cause = cause_of(exc)
        journal: str | None = None
        if cause == STORAGE_UNAVAILABLE:
            # Keep the entry for `bitexact repair`: its call is about to return. Its append raised, and
            # appends land whole or not at all, so repair must not take a later identical entry for it.
            path = self._journal(handle.seq, kind, raw, prov, ctx, hints, unwritten=True)
            if path is not None:
                journal = path.name
                self._orphans.add(journal)
        gap = self.failures.declare(Gap(cause, describe(exc), kind=kind, seq=handle.seq, journal=journal),
                                    self._gap_writer(exc))
        handle._fail(gap)

    def _queued_write(self, items: list[Pending]) -> list[AppendResult]:
        assert self.writer is not None
        with active.busy():
            return self.writer.append_each(
                [(item.kind, orjson.loads(item.raw), item.prov, item.ctx, item.hints) for item in items],
                own=[item.own for item in items],
            )

    def _queued_written(self, item: Pending, result: AppendResult) -> None:
        if item.slot is not None:  # released first (one unsynced write): a handle read as written has its slot free
            slots, index = item.slot
            slots.release(index)
        self._settle(item.handle, result)
        if item.journal is not None:
            try:
                remove_journal(item.journal)
            except OSError:  # the entry is in the chain; the journal stays for repair to name as written
                self._orphans.add(item.journal.name)

    def _queued_failed(self, item: Pending, exc: BaseException) -> None:
        if item.own:
            # A gap's marker: the gap is in the log (and the record, when the disk took it); its marker is
            # appended when the chain takes writes again, before the seal at the latest. Not one a locked
            # store refused: it would wait out the same lock again at the exit (docs/sdk.md).
            if not isinstance(exc, StoreBusyError):
                self.failures.unmarked(orjson.loads(item.raw))
            return
        journal = self._journal_name(item)
        # The write failed whole: journaled again as known-unwritten (and the first copy dropped), so that
        # repair never takes a later identical entry for this one. Without the new copy, the old stays.
        marked = self._journal(item.handle.seq, item.kind, item.raw, item.prov, item.ctx, item.hints,
                               unwritten=True) if journal else None
        if marked is not None:
            if item.journal is not None:
                try:
                    remove_journal(item.journal)
                except OSError:
                    pass  # both kept: repair reads the unwritten copy of the record, and names the other superseded
            if item.slot is not None:
                slots, index = item.slot
                slots.release(index, sync=True)
            journal = marked.name
        if journal:
            self._orphans.add(journal)
        gap = self.failures.declare(Gap(cause_of(exc), describe(exc), kind=item.kind, seq=item.handle.seq,
                                        journal=journal), self._gap_writer(exc))
        item.handle._fail(gap)

    def _gap_writer(self, exc: BaseException) -> RunWriter | None:
        """Where a failed write's gap is declared in the chain: nowhere when the store is locked by another
        process, since the marker would wait out the same lock a second time in the agent's call."""
        return None if isinstance(exc, StoreBusyError) else self.writer

    def _withheld(self, kind: str, exc: SdkArgumentError) -> RecordHandle:
        """A custody that is not one: the entry is withheld and an invalid_argument gap declared."""
        if self.strict:
            raise exc
        with self._order:  # its place in record order and its gap's, in one hold (another thread waits)
            if not self.open or not self._takes_records():
                return self._closed(kind)
            seq = self._next_seq()
            gap = self._declare_in_order(Gap(INVALID_ARGUMENT, f"entry withheld: {exc}", kind=kind,
                                             fields={exc.field: str(exc)}, seq=seq))
        return self._empty_handle(kind, gap, seq)

    def _declare_in_order(self, gap: Gap) -> Gap:
        """Declare a gap found in the call, its marker in record order: behind every entry recorded before
        it that the background writer has yet to write (queued, never waited for), else at once."""
        with self._order:
            if self._queue is None or self._queue.idle:
                return self.failures.declare(gap, self.writer)
            return self.failures.declare(gap, marker=self._queue_marker)

    def _queue_marker(self, data: dict[str, Any]) -> None:
        assert self._queue is not None and self.recorder is not None
        handle = RecordHandle(self.recorder.store, self.run_id, "marker", 0, self._timeout)
        self._put(Pending(handle, "marker", dump_json(data), None, None, None, None, own=True))

    def _returned_coroutine(self, fn: Callable[..., Any], coroutine: Any) -> None:
        """``@bitexact.run`` over a sync-looking function that returned a coroutine (or a generator): its body
        runs when it is awaited (consumed), after this run ended, and nothing it does is recorded here. Declared (an ``invalid_argument``
        gap naming ``fn``), never silent; strict mode closes the coroutine and raises."""
        if not self.open:
            return
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        if inspect.iscoroutine(coroutine):
            detail = (f"{name} returned a coroutine: its body runs when it is awaited, after this run ended, and"
                      " nothing it does is recorded in it; put @bitexact.run on the async def itself (under any"
                      " decorator that hides it), or `async with bitexact.run():` inside it")
        else:
            detail = (f"{name} returned a generator: its body runs as it is consumed, after this run ended, and"
                      " nothing it does is recorded in it; open the run inside the generator"
                      " (`with bitexact.run():`) or around the code that consumes it")
        self._declare_in_order(Gap(INVALID_ARGUMENT, detail, fields={"fn": detail}))
        if self.strict:
            if inspect.iscoroutine(coroutine) or inspect.isgenerator(coroutine):
                coroutine.close()  # an async generator never started needs no closing
            raise RecordingError(detail, cause=INVALID_ARGUMENT)

    def _declare_failure(self, kind: str, exc: BaseException) -> RecordHandle:
        """A capture path (HTTP, a tool wrapper) failed before it had an entry to write: a declared gap, and in
        strict mode then raised (the call it stands for happened: the evidence must say so as well)."""
        with self._order:  # as in _withheld: one hold for its place and its gap; refused once the exit began
            if not self.open or not self._takes_records():
                if self.strict:
                    raise RecordingError(f"{kind} was not recorded: {describe(exc)}", cause=cause_of(exc)) from exc
                return self._closed(kind)
            seq = self._next_seq()
            gap = self._declare_in_order(Gap(cause_of(exc), f"capture failed: {describe(exc)}", kind=kind,
                                             seq=seq))
        if self.strict:
            raise RecordingError(f"{kind} was not recorded: {describe(exc)}", cause=cause_of(exc)) from exc
        return self._empty_handle(kind, gap, seq)

    def _record_built(self, kind: str, build: Callable[[], dict[str, Any]], *, prov: str | None = None,
                      ctx: str | None = None, hints: dict[str, Any] | None = None,
                      hints_for: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None) -> RecordHandle:
        """Build an entry's data and record it; a failure to build is declared, never raised (non-strict).
        ``hints_for`` gives the custody hints from the data built, when what was built decides them."""
        try:
            with active.busy():
                data = build()
                if hints_for is not None:
                    hints = hints_for(data)
        except Exception as exc:  # noqa: BLE001
            return self._declare_failure(kind, exc)
        return self._submit(kind, data, prov=prov, ctx=ctx, hints=hints)

    def _record_tool(self, tool: str, args: Any, kwargs: Any, result: Any, error: BaseException | None,
                     custody: dict[str, str] | None, ctx: str | None, *, observed: bool) -> RecordHandle:
        return self._record_built(
            "tool_call", lambda: tool_call_data(tool, args, kwargs, result, None, error),
            prov="observed" if observed else "asserted", ctx=ctx, hints=custody)

    def _record_nondet(self, source: str, value: Any, *, ctx: str | None) -> RecordHandle:
        # What secrets and os.urandom give is what an agent mints keys and tokens from: kept as a keyed
        # commitment (a capture-key holder opens it with `verify --open`), never as sent.
        hints = dict(nondet.SECRET_HINTS) if nondet.is_secret_source(source) else None
        return self._record_built("nondet", lambda: {"source": source, "value": to_jsonable(value)},
                                  prov="observed", ctx=ctx, hints=hints)

    # -- public records -----------------------------------------------------

    def record(self, kind: str, data: Mapping[str, Any], custody: Mapping[str, str] | None = None, *,
               prov: str | None = None) -> RecordHandle:
        """Record one entry of ``kind``; returns its :class:`RecordHandle`.

        ``custody`` asks for fields to be kept more strictly than the policy
        says (``{"result": "hash-only"}``). A custody that is not one
        withholds the entry and declares an ``invalid_argument`` gap.
        """
        if not isinstance(kind, str) or kind not in RECORDABLE:
            raise SdkArgumentError(f"kind {kind!r} cannot be recorded by an agent: one of "
                                   f"{', '.join(sorted(RECORDABLE))}", field="kind")
        if not isinstance(data, Mapping):
            raise SdkArgumentError(f"data must be a mapping, not {type(data).__name__}", field="data")
        if prov is not None and (not isinstance(prov, str) or prov not in ALLOWED_PROV[kind]):
            # Refused here: the write would refuse it off the call (a large entry's journal then waits
            # for a repair that can never fold it, and the run is left unsealed).
            raise SdkArgumentError(f"prov {prov!r}: a {kind} entry is {' or '.join(ALLOWED_PROV[kind])}",
                                   field="prov")
        try:
            with active.busy():
                copied = dict(data)
        except Exception as exc:  # noqa: BLE001 - a mapping that fails to read: declared, never raised
            return self._declare_failure(kind, exc)
        refused = _reserved(kind, copied)
        if refused is not None:
            return self._withheld(kind, refused)
        if kind == "identity":
            # The one identity rule every door applies: never written as sent (workflow_digest is never
            # accepted, a party is text of a known type).
            if custody is not None:
                raise SdkArgumentError("an identity takes no custody hints: the identity rule decides what"
                                       " is kept", field="custody")
            if not all(isinstance(name, str) for name in copied):
                raise SdkArgumentError("an identity's field names are text", field="data")
            return self.identity(**copied)
        if prov is None and kind == "tool_call":
            prov = "asserted"  # the SDK did not see this call made: recorded out of band (bundle spec §5)
        return self._submit_hinted(kind, copied, custody, prov=prov, ctx=active.current_tool(self))

    def record_tool_call(self, tool: str, args: Any = (), kwargs: Mapping[str, Any] | None = None,
                         result: Any = None, status: str | None = None, error: Any = None,
                         custody: Mapping[str, str] | None = None) -> RecordHandle:
        """Record a tool call made out of band (asserted): its arguments, result, status and error."""
        try:
            with active.busy():
                data = tool_call_data(tool, args, kwargs, result, status, error)
        except SdkArgumentError:
            raise  # misuse, raised where it happens, naming the field
        except Exception as exc:  # noqa: BLE001 - an error that cannot be written: declared, never raised
            return self._declare_failure("tool_call", exc)
        try:
            hints = check_custody(custody)
            check_tool_paths(hints)  # a path no tool call has: kept without the hint meant (a typo's key)
        except CustodyHintError as exc:
            return self._withheld("tool_call", exc)
        return self._submit("tool_call", data, prov="asserted", ctx=active.current_tool(self), hints=hints)

    def identity(self, /, **fields: Any) -> RecordHandle:  # positional-only: a field named "self" is data too
        """Record who the run acts as and for, by the identity rule.

        A refused field is never written: a ``marker`` with a ``gap`` beside
        the entry declares it. An identity with nothing left is refused whole
        and the gap takes its place. Returns the identity entry's handle, or
        the gap's when nothing was kept. Strict mode raises
        :class:`IdentityRefusedError` once the gap is written.
        """
        if not self.open:
            return self._closed("identity")  # one gap, naming identity (not its entry and its marker)
        refused = _reserved("identity", fields)
        if refused is not None:
            return self._withheld("identity", refused)
        try:
            with active.busy():
                # A number is judged as a number (refused: a party is a string), however large and at any
                # depth (a scope's item): turned into text first, 2**60 or NaN would pass as
                # "1152921504606846976" or "nan". What the rule keeps, and the withheld digest of what it
                # refuses, are the values as they are recorded. A value no converter can write (two keys
                # that read the same as text) is refused alone, as a -0.0 is: the rest is recorded.
                judged: dict[str, Any] = {}
                unwritable: dict[str, str] = {}
                for name, value in fields.items():
                    try:
                        judged[name] = _judged(value)
                        to_jsonable(value)
                    except Exception as exc:  # noqa: BLE001 - refused by name below
                        unwritable[name] = f"cannot be written as JSON: {describe(exc)}"
                verdict = apply_identity_rule(judged)
                for values in (verdict.kept, verdict.refused_values):
                    for name in values:
                        values[name] = to_jsonable(fields[name])
                if unwritable:  # digested as "dropped: not canonical JSON", as canonical JSON cannot hold them
                    verdict = IdentityVerdict(verdict.kept, {**verdict.refused, **unwritable},
                                              {**verdict.refused_values, **{n: fields[n] for n in unwritable}})
        except Exception as exc:  # noqa: BLE001 - a value no converter can write: declared, never raised
            return self._declare_failure("identity", exc)
        ctx = active.current_tool(self)
        kept = dict(verdict.kept)
        digest = workflow_digest(kept, self._alg())
        if digest is not None:
            kept[COMPUTED] = digest
        what = ", ".join(verdict.refused) if verdict.refused else "no field at all"
        declared: dict[str, Any] | None = None
        if verdict.refused or verdict.refused_whole:  # made first: its keyed digest holds up no other record
            with active.busy():
                gap = identity_gap(verdict, self._key_for_digests())
            declared = {"note": (f"identity refused whole: {what}" if verdict.refused_whole
                                 else f"identity fields refused: {what}"), "gap": gap}
        # The entry and its gap marker in one hold of the record order: the gap is right after the
        # entry, never after another thread's record that landed between them.
        with self._order:
            if not self._takes_records():  # the exit began meanwhile: one gap naming identity, as after the end
                return self._closed("identity")
            handle = self._submit("identity", kept, prov="asserted", ctx=ctx) if kept else None
            marker = self._submit("marker", declared, ctx=ctx) if declared is not None else None
        if marker is not None:
            if self.strict:
                raise IdentityRefusedError(f"the identity rule refused {what}", fields=dict(verdict.refused))
            # Not `handle or marker`: a handle is a mapping, and its truth would wait for the write and
            # read an entry that became a gap as empty.
            handle = handle if handle is not None else marker
        assert handle is not None
        return handle

    def _key_for_digests(self) -> Any:
        """The capture key for a gap's keyed digest: the policy's, none when the policy is off."""
        policy = getattr(self.recorder, "policy", None)
        if policy is None or policy.off:
            return None
        return policy.key

    def _alg(self) -> str:
        return self.recorder.alg if self.recorder is not None else default_alg()

    def context(self, name: str, content: Any, source: str | None = None, *,
                custody: Mapping[str, str] | None = None) -> RecordHandle:
        """Record a document the agent was given: ``content`` (text or a mapping), its hash and source."""
        return self._record_context(lambda: context_data(name, content, source, self._alg()), custody)

    def context_from_bytes(self, name: str, data: bytes, source: str | None = None, *,
                           custody: Mapping[str, str] | None = None) -> RecordHandle:
        """Record bytes the agent was given as ``content.b64`` (``custody={"content.b64": "hash-only"}``)."""
        return self._record_context(lambda: bytes_context_data(name, data, source, self._alg()), custody)

    def _record_context(self, build: Callable[[], dict[str, Any]], custody: Mapping[str, str] | None) -> RecordHandle:
        """A wrong argument raises :class:`SdkArgumentError`; content that cannot be recorded (``-0.0``) is a
        declared gap, as for every other record."""
        try:
            with active.busy():
                entry = build()
        except SdkArgumentError:
            raise
        except Exception as exc:  # noqa: BLE001 - declared (raised as RecordingError in strict mode)
            return self._declare_failure("context", exc)
        return self._submit_hinted("context", entry, custody, ctx=active.current_tool(self))

    record_context_from_bytes = context_from_bytes

    def human_decision(self, actor: str, decision: str, reason: str | None = None,
                       binds_step: int | RecordHandle | None = None) -> RecordHandle:
        """Record a person's decision; ``binds_step`` names the step under review (or its handle)."""
        data = human_decision_data(actor, decision, reason, binds_step, self.run_id, self._step_bound())
        return self._submit("human_decision", data, ctx=active.current_tool(self))

    def _step_bound(self) -> int | None:
        """The steps the run has so far, counting those its entries still queued may take: a step at or past it
        is one no entry recorded before this call can have. Each entry queued or being written counts twice
        (it, and the capture policy's gap marker it may bring), so a valid step is never refused; None when
        the run is not recording (the record is then refused as after its end)."""
        if not self.open or self.writer is None:
            return None
        # Queued first, then written: an entry the writer lands between the two reads is counted twice, never
        # missed (read the other way round it would be in neither, and its step refused).
        pending = self._queue.pending if self._queue is not None else 0
        return self.writer.steps + 2 * pending

    def marker(self, note: str) -> RecordHandle:
        """Record an annotation."""
        return self._submit("marker", marker_data(note), ctx=active.current_tool(self))

    def policy_check(self, check: str, outcome: Any, *, reason: str | None = None, detail: Any = None,
                     binds_step: int | RecordHandle | None = None) -> RecordHandle:
        """Record a policy check's outcome: pass, fail, warn or held (error for an exception; else unknown)."""
        return self._policy_check(check, outcome, reason=reason, detail=detail, binds_step=binds_step)

    def _policy_check(self, check: str, outcome: Any, *, reason: str | None = None, detail: Any = None,
                      binds_step: int | RecordHandle | None = None, returned: bool = False) -> RecordHandle:
        try:
            with active.busy():
                data = policy_check_data(check, outcome, reason=reason, detail=detail, binds_step=binds_step,
                                         run_id=self.run_id, returned=returned, bound=self._step_bound())
        except SdkArgumentError:
            raise  # misuse, raised where it happens, naming the field
        except Exception as exc:  # noqa: BLE001 - a detail that cannot be written: declared, never raised
            return self._declare_failure(POLICY_CHECK_KIND, exc)
        return self._submit(POLICY_CHECK_KIND, data, ctx=active.current_tool(self))

    def check(self, check: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Run a policy check ``fn(*args, **kwargs)``, record what it returned, and return it.

        A check that raises is recorded as ``error`` and the exception re-raised. An async check
        (``fn`` returns a coroutine) returns a coroutine to await: its outcome is recorded then.
        """
        check_name(check)  # a wrong name is refused before the check runs, never in place of its exception
        try:
            outcome = fn(*args, **kwargs)
        except BaseException as exc:  # KeyboardInterrupt too: the check did not decide, it ended in error
            self._check_raised(check, exc)
            raise
        if inspect.iscoroutine(outcome):
            # An async check decides when it is awaited: what it returns (or raises) then is its outcome,
            # never "unknown" with the coroutine object's repr.
            return self._checked_later(check, outcome)
        self._policy_check(check, outcome, returned=True)  # an exception it returned is no raise: unknown
        return outcome

    def _check_raised(self, check: str, exc: BaseException) -> None:
        """Record a check that raised ``exc`` as ``error``; a control-flow exception (not an ``Exception``:
        cancellation, Ctrl-C, exit) stays the one raised when a strict run's recording fails (declared
        already), as a tool's does."""
        try:
            self.policy_check(check, exc)
        except RecordingError:
            if isinstance(exc, Exception):
                raise

    async def _checked_later(self, check: str, coroutine: Any) -> Any:
        """Await an async check's coroutine and record its outcome as :meth:`check` records a sync one's."""
        try:
            outcome = await coroutine
        except BaseException as exc:  # CancelledError too: the check did not decide
            self._check_raised(check, exc)
            raise
        self._policy_check(check, outcome, returned=True)
        return outcome

    # -- causal context -------------------------------------------------------

    def _not_handing_on(self) -> RunClosedError | None:
        """Why no causal context can be handed on now (the run is not recording), else None."""
        if self._forked:
            return RunClosedError(f"run {self.run_id} is recorded by the process this one was forked from: no causal"
                                  " context can name an event of it here", field="run")
        if not self._started or self.writer is None:
            return RunClosedError("this run is not recording (it did not start: its start gap says why), so no"
                                  " causal context can name an event of it", field="run")
        if not self.open or not self._takes_records():
            return RunClosedError(f"run {self.run_id} has ended: a causal context handed on now would name an event"
                                  " its chain never records; call causal_context() or child_env() inside the run",
                                  field="run")
        return None

    def causal_context(self) -> str:
        """A context (``bxc.<id>.<ms>.<logical>``) naming a new event of this run, recorded as a marker.

        Raises :class:`RunClosedError` when the run is not recording (it ended, or never started): the
        context would name an event no chain holds, and a sub-agent would record a cause nobody can find.
        """
        refused = self._not_handing_on()
        if refused is not None:
            raise refused
        with active.busy():
            event_id = secrets.token_hex(8)
            try:
                hlc = self.clock.now()
            except ContextFormatError as exc:  # the clock reached its limit (a parent read at it): none is later
                if self.strict:
                    raise
                hlc = self.clock.at_limit()
                gap = Gap(INVALID_ARGUMENT, f"the causal context handed on is not later than the last one: {exc}",
                          fields={"hlc": str(exc)})
                if self.open:
                    self._declare_in_order(gap)
                else:
                    self.failures.declare(gap)
            context = format_context(event_id, hlc)  # checked before the marker says it was handed on
        self._submit("marker", {"note": "causal context handed on", "causal": {"id": event_id, "hlc": list(hlc)}},
                     ctx=active.current_tool(self))
        return context

    def child_env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """An environment for a sub-agent process: ``env`` (default ``os.environ``) plus BITEXACT_CONTEXT.

        Once the run has ended it raises :class:`RunClosedError`, as :meth:`causal_context` does. A non-strict
        run that could not start (its store, keys or policy: a declared gap) is no misuse of the agent's,
        which runs on: the environment is returned without ``BITEXACT_CONTEXT`` (one inherited is dropped
        too, since this process is not what it names), so the sub-agent records with no cause.
        """
        child = dict(os.environ if env is None else env)
        if self._started and self.writer is None and not self.strict:  # its start failed: declared already
            child.pop(ENV_VAR, None)
            return child
        child[ENV_VAR] = self.causal_context()
        return child

    def __repr__(self) -> str:
        state = "open" if self.open else ("sealed" if self.sealed else "ended")
        return f"<bitexact Run {self.run_id or '(not recording)'} {state}>"


def _restore_current(run: Run, token: Token[Run | None]) -> None:
    """Make the run current before ``run`` current again. A scope left in another context than the one
    that entered it (a generator stepped by a task per step, as ``asyncio.wait_for`` does, or closed in
    another thread) cannot reset its token there: that context is set back only if it holds the run.

    Scopes left out of order in one context (generators each holding a run, ``zip(a(), b())``: ``a``
    ends first, while ``b``'s run, entered over ``a``'s, is current): ``a``'s exit leaves ``b``'s run
    current, whose block is still open, and ``b``'s exit makes current the first run under it whose
    block is still open. Before, ``a``'s exit made current the run under ``a`` and ``b``'s made ``a``'s
    ended run current again: the consumer's own run, still open around them, recorded nothing more."""
    current = active._current.get()
    if current is not None and current is not run and current.open and _entered_over(current, run):
        run._left_out_of_order = True  # the run entered over it stays current; its exit passes this one by
        return
    try:
        active._current.reset(token)
    except ValueError:
        if active._current.get() is run:
            previous = token.old_value
            active._current.set(None if previous is Token.MISSING else previous)
        return
    current = active._current.get()
    if current is not None and current._left_out_of_order:
        while current is not None and current._left_out_of_order:
            current = current._entered_over
        active._current.set(current)


def _entered_over(current: Run | None, run: Run) -> bool:
    """Whether ``current`` was entered over ``run`` in this context, directly or over runs entered over it."""
    while current is not None:
        current = current._entered_over
        if current is run:
            return True
    return False


def _flag(name: str, value: object) -> bool:
    """An on/off argument: a bool (or 0 / 1). Anything else is refused, naming it: ``strict="false"``
    would otherwise turn strict mode on, being a non-empty string."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise SdkArgumentError(f"{name} is on or off: give True or False, not {value!r}", field=name)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _unheard(error: BaseException | None) -> None:
    """A failure of work whose awaiting task is gone (cancelled, its loop closed): it can no longer be
    raised, so it is logged rather than dropped (a strict run's seal that failed)."""
    if error is not None:
        shown = str(error) if isinstance(error, RecordingError) else type(error).__name__  # never agent data
        logger.warning("bitexact: a run's exit failed after the task awaiting it was cancelled: %s", shown)


async def _in_own_thread(fn: Callable[..., None], *args: Any) -> None:
    """``fn(*args)`` in a thread of its own (in a copy of this context), awaited without blocking the loop.

    Not the loop's default executor (``asyncio.to_thread``): the agent's own blocking calls may fill it
    (consumers awaiting ``to_thread(queue.get)``), and the run's exit would wait for one of them to end.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    context = contextvars.copy_context()

    def settle(error: BaseException | None) -> None:
        if done.done():  # the awaiting task was cancelled: the work went on, and nobody waits for it
            _unheard(error)
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def work() -> None:
        error: BaseException | None = None
        try:
            context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            error = exc
        try:
            loop.call_soon_threadsafe(settle, error)
        except RuntimeError:  # the loop was closed meanwhile: nobody waits for it
            _unheard(error)

    threading.Thread(target=work, name="bitexact-exit", daemon=False).start()
    await done


class RunScope:
    """What :func:`run` returns: a context manager (sync and async) and a decorator; each use is a new run."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._stack: list[tuple[Run, Token[Run | None]]] = []
        self._stack_lock = threading.Lock()

    def _enter(self) -> Run:
        run = Run(**self._options).start()
        token = active._current.set(run)
        run._entered_over = None if token.old_value is Token.MISSING else token.old_value
        with self._stack_lock:
            self._stack.append((run, token))
        return run

    def _pop(self, run: Run | None) -> tuple[Run, Token[Run | None]]:
        """The entry of ``run`` (the run of the exiting thread's or task's context), else the last one.

        One scope object may be entered by several threads or tasks at once
        (a module-level ``bitexact.run()``): each exit ends its own run.
        """
        with self._stack_lock:
            for index in range(len(self._stack) - 1, -1, -1):
                if self._stack[index][0] is run:
                    return self._stack.pop(index)
            if self._stack:
                return self._stack.pop()
        raise RuntimeError("run scope exited without being entered")

    def __enter__(self) -> Run:
        return self._enter()

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        run, token = self._pop(active._current.get())
        try:
            run.finish(exc)
        finally:
            _restore_current(run, token)
        return False

    async def __aenter__(self) -> Run:
        return self._enter()

    async def __aexit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        run, token = self._pop(active._current.get())
        try:
            if isinstance(exc, GeneratorExit) or not _loop_running():
                # The block was abandoned (its coroutine closed, its loop perhaps gone): nothing will resume
                # an await here, and a coroutine that awaits while it is closed raises. Ended in place.
                run.finish(exc)
            else:
                # Draining may wait on the disk: keep the event loop turning meanwhile.
                await _in_own_thread(run.finish, exc)
        finally:
            _restore_current(run, token)
        return False

    def __call__(self, fn: F) -> F:
        """Use as a decorator: each call of ``fn`` (sync or async) is one run.

        A generator function is refused (``SdkArgumentError``): its body runs
        after the call returns, between its consumer's steps, so a run around
        the call would end before anything is recorded. Open the run inside
        the generator (``with bitexact.run():``) or around its consumer.
        """
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise SdkArgumentError(
                f"@bitexact.run cannot wrap the generator function {getattr(fn, '__name__', fn)!r}: its body runs "
                "after the call returns, so the run would end before it records; use `with bitexact.run():` "
                "inside it, or around the code that consumes it", field="fn")
        if inspect.iscoroutinefunction(fn) or async_callable(fn):  # an object whose __call__ is async def too
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                async with RunScope(**self._options):
                    return await fn(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with RunScope(**self._options) as run:
                result = fn(*args, **kwargs)
                # An async def (or a generator function) under a decorator that hides it: its body runs later.
                if inspect.iscoroutine(result) or inspect.isgenerator(result) or inspect.isasyncgen(result):
                    run._returned_coroutine(fn, result)
                return result

        return wrapper  # type: ignore[return-value]


def run(
    name: str | Callable[..., Any] | None = None,
    run_id: str | None = None,
    strict: bool = False,
    capture_nondeterminism: bool = False,
    home: Path | str | None = None,
    *,
    recorder: Recorder | None = None,
    parent_context: str | None = None,
    journal_small: bool | None = None,
) -> Any:
    """Record an agent run: ``with bitexact.run() as r``, ``async with``, or ``@bitexact.run(...)``.

    ``name`` names the run; ``run_id`` fixes its id (default: a fresh,
    time-ordered one); ``strict`` makes every recording failure raise and
    every entry be written before the call answers; ``capture_nondeterminism``
    records clock, random and entropy reads; ``home`` is the data directory
    (default ``BITEXACT_HOME``). ``recorder`` records through a write path the
    caller already holds; ``parent_context`` (default ``BITEXACT_CONTEXT``)
    names the event of a parent agent that caused this run. ``journal_small``
    (default ``BITEXACT_JOURNAL_SMALL=1``, else off) makes small entries
    durable in the call through a journal slot and writes them into the chain
    after it, instead of scanning and writing them in the call as the capture
    contract says: a departure that trades "in the chain when the call
    returns" for a call about half as long (docs/sdk.md).
    """
    # Refused here, where the run is written (a decorator's arguments included), not at its first call: a run's
    # name is text in run_meta and in `bitexact runs`, and strict="yes" would otherwise fail only once called.
    if name is not None and not callable(name) and not isinstance(name, str):
        raise SdkArgumentError(f"name names the run: give a string (or None), not {name!r}", field="name")
    _flag("strict", strict)
    _flag("capture_nondeterminism", capture_nondeterminism)
    if journal_small is not None:
        _flag("journal_small", journal_small)
    options: dict[str, Any] = {"run_id": run_id, "strict": strict, "capture_nondeterminism": capture_nondeterminism,
                               "home": home, "recorder": recorder, "parent_context": parent_context,
                               "journal_small": journal_small}
    if callable(name):  # bare @bitexact.run
        return RunScope(name=None, **options)(name)
    return RunScope(name=name, **options)


def current_run() -> Run | None:
    """The run recording in this context (or the only run open in the process), else None."""
    return active.current_run()


def _check_run_id(run_id: Any) -> None:
    """A run id the agent chose names the run's journal directory and failures record: one holding a path
    separator or ``..`` would write them outside the data directory, so it is refused, naming run_id."""
    try:
        check_run_id(run_id)
    except JournalError:
        rule = ("cannot name the run's files: 1 to 200 letters, digits and ._:- (not starting with . : or -,"
                " and no ..)")
        # The log line and the gap's detail state the rule, not the id: an id is the agent's text.
        raise stated(SdkArgumentError(f"run_id {run_id!r:.80} {rule}", field="run_id"),
                     f"run_id {rule}") from None


def _start_refusal(exc: BaseException) -> str:
    """Why a run could not start, as its gap and log line say it: an argument refused is named with the
    SDK's own words for what is wrong (never the value, which is the agent's); any other error as
    :func:`describe` states it."""
    if isinstance(exc, SdkArgumentError) and not isinstance(getattr(exc, "public", None), str):
        return f"{type(exc).__name__}: {exc.field} was refused (not a value the run can use)"
    return describe(exc)


RESERVED: Final[dict[str, str]] = {
    "aer_source": "aer_source is the recorder's field alone (it names the source of an event a collector "
                  "relayed); an agent may not set it: name the key otherwise",
}
"""Top-level keys of an entry's data that only BitExact writes, refused in an agent's record of any kind:
``capture`` is refused by the capture policy itself (docs/capture.md)."""
RESERVED_IN_MARKER: Final[dict[str, str]] = {
    "gap": "gap in a marker is the recorder's declaration of a recording gap; an agent may not set it: "
           "say it in the note, or name the key otherwise",
}
"""Keys a ``marker`` recorded by an agent may not hold: what reads gaps (health, ``capture backfill``)
trusts a marker's ``gap`` as the recorder's own."""


def _reserved(kind: str, data: Mapping[Any, Any]) -> SdkArgumentError | None:
    """The error for a key of ``data`` only BitExact writes, naming it; None when there is none."""
    for key, reason in (*RESERVED.items(), *(RESERVED_IN_MARKER.items() if kind == "marker" else ())):
        if key in data:
            return SdkArgumentError(reason, field=key)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _judged(value: Any) -> Any:
    """What the identity rule judges of a field: its recorded value, with every number (in a list too)
    standing as ``0``, so that a number is refused where text is asked for, never taken for its text."""
    if _is_number(value):
        return 0
    if isinstance(value, (list, tuple)):
        return [_judged(item) for item in value]
    return to_jsonable(value)
