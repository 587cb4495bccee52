"""Edges of a run's exit, its background writer and repair's fold, found in review.

Each test pins one behaviour that used to break; its docstring says how it
broke. Interleavings between threads are forced with events (a recording
call is paused at a known point) or by holding the store's lock, never left
to timing.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.fold import fold_orphans
from bitexact.recording.journal import JournalRecord, journal_dir, write_journal
from bitexact.recording.journal_slots import JournalSlots, slot_files
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries, journaled
from sdk.test_large import BIG, store_write_lock

RUN_MODULE = sys.modules["bitexact.sdk.run"]


def _wait_until(predicate: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


# -- 1. RunScope pops the wrong run when one scope is entered twice concurrently --------------


def test_one_scope_entered_by_two_threads_ends_each_threads_own_run(home: Path) -> None:
    """``bitexact.run()`` is documented as "each use is a new run" and guards its stack with a lock,
    but ``__exit__`` pops the *last* run entered, not the one this thread entered."""
    scope = bitexact.run()
    one_in, two_in, one_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def one() -> None:
        try:
            with scope as r:
                seen["one"] = r
                one_in.set()
                assert two_in.wait(30)
                r.marker("one")
        except BaseException as exc:  # noqa: BLE001
            seen["one raised"] = exc
        finally:
            one_out.set()

    def two() -> None:
        assert one_in.wait(30)
        try:
            with scope as r:
                seen["two"] = r
                two_in.set()
                assert one_out.wait(30)
                seen["two open after one left"] = r.open
                r.marker("two")
        except BaseException as exc:  # noqa: BLE001
            seen["two raised"] = exc

    threads = [threading.Thread(target=one), threading.Thread(target=two)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert "one raised" not in seen, f"a non-strict run raised into the agent: {seen.get('one raised')!r}"
    assert "two raised" not in seen, f"a non-strict run raised into the agent: {seen.get('two raised')!r}"
    assert seen["two open after one left"], "thread one's exit ended thread two's run"
    for name in ("one", "two"):
        run = seen[name]
        assert run.sealed
        notes = [e["data"].get("note") for e in entries(run.run_id) if e["kind"] == "marker"]
        assert notes == [name]


def test_one_scope_used_by_two_asyncio_tasks_ends_each_tasks_own_run(home: Path) -> None:
    """The same with ``async with`` and a module-level scope: the task that entered first leaves first."""
    scope = bitexact.run()

    async def main() -> dict[str, Any]:
        one_in, two_in, one_out = asyncio.Event(), asyncio.Event(), asyncio.Event()
        seen: dict[str, Any] = {}

        async def one() -> None:
            try:
                async with scope as r:
                    seen["one"] = r
                    one_in.set()
                    await two_in.wait()
                    seen["one handle"] = r.marker("one")
            finally:
                one_out.set()

        async def two() -> None:
            await one_in.wait()
            async with scope as r:
                seen["two"] = r
                two_in.set()
                await one_out.wait()
                seen["two handle"] = r.marker("two")

        seen["raised"] = [x for x in await asyncio.gather(one(), two(), return_exceptions=True)
                          if isinstance(x, BaseException)]
        return seen

    seen = asyncio.run(main())
    assert seen["raised"] == [], f"a non-strict run raised into the agent: {seen['raised']!r}"
    for name in ("one", "two"):
        assert seen[f"{name} handle"].written, f"task {name}'s marker was not written into its own run"
        run = seen[name]
        assert run.sealed
        assert [e["data"].get("note") for e in entries(run.run_id) if e["kind"] == "marker"] == [name]


# -- 2. A record racing the run's exit: journaled into a run that is then sealed -------------


def _pause_in_dump_json(monkeypatch: pytest.MonkeyPatch, thread_name: str) -> tuple[threading.Event, threading.Event]:
    """Pause ``thread_name``'s recording call just after it passed the run's ``open`` check."""
    reached, go = threading.Event(), threading.Event()
    real = RUN_MODULE.dump_json

    def paused(data: Any) -> bytes:
        if threading.current_thread().name == thread_name:
            reached.set()
            assert go.wait(30)
        return real(data)

    monkeypatch.setattr(RUN_MODULE, "dump_json", paused)
    return reached, go


def test_a_large_record_racing_the_runs_exit_leaves_no_journal_in_a_sealed_run(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent thread records while the main thread leaves ``with bitexact.run()``.

    ``_submit`` checks ``self.open`` without any lock ``finish`` takes, so the
    call can pass the check, the run can drain and seal, and the call then
    journals its entry and queues it. The writer's append is refused (the run
    is sealed), the journal is kept for repair, and repair refuses a sealed
    run: the call returned, and its entry can never reach the chain.
    """
    load_host_key(home)  # made by the first journal; made here so that finding none can be checked
    reached, go = _pause_in_dump_json(monkeypatch, "agent-worker")
    handles: list[Any] = []
    with bitexact.run() as r:
        worker = threading.Thread(
            target=lambda: handles.append(r.record("tool_call", {"tool": "scan", "result": BIG})),
            name="agent-worker",
        )
        worker.start()
        assert reached.wait(30)  # the worker's call is past the open check
    assert r.sealed
    go.set()
    worker.join(30)
    (handle,) = handles
    handle.result(timeout=10)
    left = journaled(home, r.run_id)
    assert left == [], f"journal {left} was left in sealed run {r.run_id}: `bitexact repair` refuses to fold it"
    assert handle.written or handle.gap is not None


# -- 3. A call waiting for queue room when the run exits raises RuntimeError into the agent ----


def test_a_call_waiting_for_queue_room_when_the_run_exits_does_not_raise(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past BITEXACT_QUEUE_MAX_BYTES a call waits for room; if the run's exit times out meanwhile it
    abandons the queue, and ``OrderedWriter.put`` raises ``RuntimeError`` straight out of
    ``r.record`` (``_submit`` does not catch it) in a non-strict run."""
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", str(3 << 19))  # 1.5 MiB: room for one large entry
    scope = bitexact.run()
    r = scope.__enter__()
    errors: list[BaseException] = []

    def agent_thread() -> None:
        try:
            r.record("tool_call", {"tool": "scan", "result": BIG, "n": 2})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    with store_write_lock(home):
        r.record("tool_call", {"tool": "scan", "result": BIG, "n": 1})  # in flight, held by the lock
        worker = threading.Thread(target=agent_thread)
        worker.start()
        _wait_until(lambda: len(journaled(home, r.run_id)) == 2, "the second entry was never journaled")
        # The worker now waits for room, up to the drain timeout it read (30 s). The exit's drain
        # started later than that wait in the real race; here it is simply given a shorter bound.
        r._timeout = 0.2
        scope.__exit__(None, None, None)
        worker.join(30)
    assert not worker.is_alive()
    assert errors == [], f"a non-strict recording call raised into the agent: {errors[0]!r}"


# -- 4. An exception in the writer's "written" step kills the writer thread -------------------


def test_a_journal_that_cannot_be_removed_does_not_stop_the_rest_of_its_batch(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OrderedWriter._write_batch`` calls ``written`` outside its try; ``remove_journal`` lets any
    OSError but FileNotFoundError through. One failed unlink ends the writer thread: the rest of
    the batch is in the chain but never settled, their journals stay, and the run still seals
    (queue and in-flight are empty), so repair refuses those journals for ever."""
    failing: set[str] = set()
    real_remove = RUN_MODULE.remove_journal

    def remove(path: Path) -> None:
        if path.name[:12] in failing:
            raise PermissionError(13, "Permission denied", str(path))
        real_remove(path)

    monkeypatch.setattr(RUN_MODULE, "remove_journal", remove)
    monkeypatch.setattr(threading, "excepthook", lambda args: None)  # the thread's death is what is tested
    with bitexact.run() as r:
        with store_write_lock(home):
            first = r.record("tool_call", {"tool": "scan", "result": BIG, "n": 0})  # in flight alone
            second = r.marker("queued: a journal file")
            third = r.marker("queued too: same batch as the second")
            failing.add(f"{second.seq:012d}")
        assert r.drain(30)
        assert first.written and second.written
        assert third.written, "the entry after it in the batch is in the chain, but its handle never settled"
    left = journaled(home, r.run_id)
    assert not any(name.startswith(f"{third.seq:012d}") for name in left), "its journal was never removed"


# -- 5. Fold: an orphan the write path refuses stops every repair of the run --------------------


def _nested(depth: int) -> dict[str, Any]:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(depth):
        inner["n"] = {}
        inner = inner["n"]
    return deep


def test_an_orphan_the_write_path_refuses_does_not_block_the_fold_of_the_others(home: Path) -> None:
    """A 126-level entry: the SDK journals it (its JSON and the journal are fine), the write path
    refuses it (data nests at most 125 levels), and the SDK keeps its journal "for repair"
    (test_slots: the run is left unsealed). fold_orphans then raises on it, every time: the
    orphans journaled after it (the rest of a run killed mid-queue) are never folded."""
    recorder, _ = recorder_for()
    writer = recorder.start()
    key = load_host_key(home)
    bad = write_journal(home, key, JournalRecord(writer.run_id, 1, "context",
                                                 {"name": "deep", "content": _nested(126)},
                                                 steps_before=writer.steps))
    good = write_journal(home, key, JournalRecord(writer.run_id, 2, "marker", {"note": "after it"},
                                                  steps_before=writer.steps))
    try:
        folded = fold_orphans(recorder, writer.run_id)
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"repair raised {type(exc).__name__}: {exc}; {good.name} (a call that returned) is never folded")
    assert good.name in folded
    written = list(recorder.store.entries(writer.run_id))
    assert [e["data"].get("note") for e in written if e["kind"] == "marker"] == ["after it"]
    assert bad.name in str(written[-1]["data"])  # the repair entry names the refused journal


def test_the_sdk_leaves_a_journal_that_repair_can_fold(home: Path) -> None:
    """The same through the SDK: a run left unsealed for repair whose repair always raises."""
    with bitexact.run(journal_small=True) as r:
        with store_write_lock(home):  # queued, so it is journaled before the write path sees it
            r.marker("before")
            bad = r.record("context", {"name": "deep", "content": _nested(126)})
            r.marker("after")
    assert bad.gap is not None and bad.gap.journal is not None and not r.sealed
    recorder, _ = recorder_for()
    try:
        fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001
        pytest.fail(f"`bitexact repair` of the run the SDK left for it raised {type(exc).__name__}: {exc}")
    assert journaled(home, r.run_id) == []


# -- 6. Fold: a slot named unreadable is deleted with its slots file ---------------------------


def test_a_slot_the_fold_names_unreadable_is_kept(home: Path) -> None:
    """fold_orphans keeps what it names ``unreadable`` (it does so for a journal file of another run),
    but removes a slots file unless ``path.name`` is in ``unreadable``, whose keys for a slot are
    ``<file>#<index>``: the slot it just named as kept is deleted."""
    recorder, _ = recorder_for()
    writer = recorder.start()
    other = recorder.start()
    slots = JournalSlots(home, load_host_key(home), writer.run_id)
    index = slots.write(JournalRecord(other.run_id, 1, "marker", {"note": "of the other run"}),
                        b'{"note":"of the other run"}')
    slots.close(remove=False)
    fold_orphans(recorder, writer.run_id)
    repair = list(recorder.store.entries(writer.run_id))[-1]
    assert repair["kind"] == "repair" and slots.name(index) in repair["data"]["unreadable"]  # type: ignore[arg-type]
    assert slot_files(journal_dir(home, writer.run_id)) == [slots.path], "named unreadable and kept, yet deleted"


# -- 7. capture_nondeterminism: the SDK's own reads outside active.busy() are recorded -----------


def test_a_withheld_entry_under_capture_nondeterminism_declares_its_gap_and_nothing_else(home: Path) -> None:
    """``_withheld`` (and ``_declare_failure``, ``finish``) call ``FailureLog.declare`` outside
    ``active.busy()``. Building the gap marker reads ``os.urandom`` (salts) through the patched
    source: each read is recorded as the agent's ``nondet`` entry, re-entrantly on the same
    writer, which moves the head under the marker's own build until the writer gives up
    (StaleHeadError, swallowed by ``declare``). The chain gets dozens of nondet entries the agent
    never read and loses the gap marker."""
    with bitexact.run(capture_nondeterminism=True) as r:
        handle = r.record("marker", {"note": "n"}, custody={"note": "not a custody"})
    assert handle.gap is not None and handle.gap.cause == "invalid_argument"
    written = entries(r.run_id)
    sources = [e["data"]["source"] for e in written if e["kind"] == "nondet"]
    assert sources == [], f"{len(sources)} nondet entries for reads the agent never made: {sorted(set(sources))}"
    assert [e["kind"] for e in written] == ["run_meta", "marker", "run_end"]
    assert written[1]["data"]["gap"]["cause"] == "invalid_argument"


def test_leaving_a_run_that_captures_nondeterminism_after_a_drain_timeout_does_not_raise(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same root cause at exit: ``finish`` declares each abandoned entry outside ``busy()``; the
    warning's ``time.time()`` is observed as the agent's, its nondet entry is put on the queue
    ``finish`` just abandoned, and ``put`` raises RuntimeError out of the ``with`` block."""
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    scope = bitexact.run(capture_nondeterminism=True)
    r = scope.__enter__()
    with store_write_lock(home):
        r.record("tool_call", {"tool": "scan", "result": BIG})
        try:
            scope.__exit__(None, None, None)
        except BaseException as exc:  # noqa: BLE001
            pytest.fail(f"a non-strict run's exit raised into the agent: {exc!r}")
    assert [g.cause for g in r.failures.gaps] == ["storage_unavailable"]


# -- 8. Fold claims a later, identical entry for an orphan a failed write left -------------------


def test_an_entry_whose_write_failed_is_not_taken_for_a_later_identical_one(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store is busy (another process holds its lock): the call's write fails, the entry is
    journaled and declared a gap "kept for `bitexact repair`". The store frees up and the agent
    records the same thing again (a heartbeat, a repeated tool call): written in the call. Repair
    then finds an entry with the same content after the orphan's ``steps_before`` and names the
    orphan ``already_written``: an entry whose call returned is never written. No process died,
    so this is not the documented kill -9 limitation."""
    from store.lock_holder import held_by_another_process

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run() as r:
        with held_by_another_process(home / "bitexact.db.lock"):
            first = r.marker("heartbeat")  # waits out the lock's bound: journaled, a declared gap
        second = r.marker("heartbeat")  # the store is free again: written in the call
    assert first.gap is not None and first.gap.journal is not None and second.written
    recorder, _ = recorder_for()
    fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    beats = [e for e in entries(r.run_id) if e["kind"] == "marker" and e["data"].get("note") == "heartbeat"]
    repair = entries(r.run_id)[-1]["data"]
    assert len(beats) == 2, f"two calls returned, {len(beats)} entry in the chain; repair said {repair}"


# -- 9. JournalSlots: close() while a write is between taking its slot and writing it -----------


def test_closing_a_slots_file_never_lets_a_write_in_progress_land_in_another_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``JournalSlots`` says it is thread-safe, but ``write`` takes a slot under the lock and writes
    and syncs the fd outside it, and ``close`` closes that fd at once. The run's exit closes its
    slots in ``finish`` while an agent thread may be mid-write (the exit race above): the write
    then goes to a closed fd or, once the number is reused by the next open in the process, into
    whatever file that is, at ``index * slot_bytes``."""
    import os

    import bitexact.recording.journal_slots as journal_slots

    recorder, _ = recorder_for()
    writer = recorder.start()
    slots = JournalSlots(home, load_host_key(home), writer.run_id, count=2, slot_bytes=4096)
    reached, go = threading.Event(), threading.Event()
    real = journal_slots._pwrite_all

    def paused(fd: int, buffers: list[bytes], offset: int) -> None:
        reached.set()
        assert go.wait(30)
        real(fd, buffers, offset)

    monkeypatch.setattr(journal_slots, "_pwrite_all", paused)
    outcome: dict[str, Any] = {}

    def write() -> None:
        try:
            outcome["index"] = slots.write(JournalRecord(writer.run_id, 1, "marker", {}), b'{"note":"n"}')
        except Exception as exc:  # noqa: BLE001 - a refused write is fine; a misdirected one is not
            outcome["error"] = exc

    thread = threading.Thread(target=write)
    thread.start()
    assert reached.wait(30)
    number = slots._fd
    closer = threading.Thread(target=slots.close, kwargs={"remove": False})  # the run's exit
    closer.start()
    closer.join(2)  # a close that waits for the write in progress is not an error
    victim = home / "agent-file.bin"
    victim.write_bytes(bytes(8192))
    fd = os.open(victim, os.O_RDWR)
    if not closer.is_alive() and fd != number:
        os.dup2(fd, number)  # what the next open in the process gets: the lowest free number
        os.close(fd)
        fd = number
    go.set()
    thread.join(30)
    closer.join(30)
    os.close(fd)
    assert victim.read_bytes() == bytes(8192), f"the slot's bytes were written into {victim.name}"


def test_a_fold_the_store_refuses_keeps_every_journal_for_the_next_attempt(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store error is not the entry's fault: the fold stops and nothing is named refused or removed."""
    from bitexact.store import StoreBusyError
    from store.lock_holder import held_by_another_process

    recorder, _ = recorder_for()
    writer = recorder.start()
    key = load_host_key(home)
    journal = write_journal(home, key, JournalRecord(writer.run_id, 1, "marker", {"note": "returned"},
                                                     steps_before=writer.steps))
    recorder.store.lock_timeout = 0.2  # type: ignore[attr-defined]
    with held_by_another_process(home / "bitexact.db.lock"):
        with pytest.raises(StoreBusyError):
            fold_orphans(recorder, writer.run_id)
    assert journal.exists()
    assert fold_orphans(recorder, writer.run_id) == [journal.name]
    assert [e["data"].get("note") for e in recorder.store.entries(writer.run_id)][1] == "returned"


def test_a_drain_that_times_out_as_the_last_batch_lands_still_seals(home: Path) -> None:
    """The exit's drain ran out just as the writer finished: nothing was left, so nothing was declared,
    and the run used to be left unsealed with nothing for repair to fold."""
    with bitexact.run() as r:
        r.marker("written")
        assert r.drain(30)
        r._queue.drain = lambda timeout: False  # type: ignore[method-assign, union-attr]
    assert r.sealed and r.failures.gaps == []
