"""Durability edges (the third review): journals, the live lock, the background writer, repair.

Each test fails on the current code because of one bug; its docstring quotes the rule it breaks.
Interleavings are forced with events and monkeypatched pauses, never left to timing.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.errors import BitExactError
from bitexact.recording.fold import fold_orphans
from bitexact.recording.journal import LIVE_LOCK
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries
from sdk.test_large import BIG

RUN_MODULE = sys.modules["bitexact.sdk.run"]


def _pause_queued_writes(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """The background writer's next batch pauses before the write path runs (as a long policy scan
    would); ``reached`` is set when it is paused, ``go`` lets it on."""
    reached, go = threading.Event(), threading.Event()
    real = RUN_MODULE.Run._queued_write

    def paused(self: Any, items: list[Any]) -> Any:
        reached.set()
        assert go.wait(60)
        return real(self, items)

    monkeypatch.setattr(RUN_MODULE.Run, "_queued_write", paused)
    return reached, go


# -- 1. the exit gives up on an in-flight batch, releases the live lock, and the batch lands anyway ---


def test_an_entry_in_flight_when_the_exit_gives_up_is_never_written_twice_by_repair(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: "A run being recorded holds a lock file in its journal directory (`.recording.lock`,
    flock) from its first journal to its end: `bitexact repair` of a run a live process is still
    recording is refused, since folding or removing its journals would write an entry twice".

    An exit whose drain times out abandons the queue (``OrderedWriter.abandon``), declares the batch in
    flight unwritten, and releases the live lock, but the writer thread goes on writing that batch.
    A repair run now (the agent process lives on: a service running one run per request) folds the
    journal, and then the writer thread writes the same entry again."""
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    reached, go = _pause_queued_writes(monkeypatch)
    try:
        with bitexact.run() as r:
            handle = r.record("tool_call", {"tool": "scan", "result": BIG})  # journaled, queued
            assert reached.wait(30)  # its write is in flight when the exit begins
        assert not r.sealed and handle.gap is not None
        recorder, _ = recorder_for()
        try:
            fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
        except BitExactError:
            pass  # refused while the run's writer still writes: what the docs promise
    finally:
        go.set()
    assert r._queue is not None and r._queue._thread is not None
    r._queue._thread.join(30)
    steps = [e["step"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert len(steps) == 1, f"the entry whose call returned was written once; the chain holds it at steps {steps}"


# -- 2/3. a run id the store takes but the journal directory refuses: repair and redact fail ----------


def _cli(home: Path, *args: str) -> Any:
    from click.testing import CliRunner

    from bitexact.cli import cli

    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})


def _unsealed_run_named(run_id: str) -> None:
    """A run recorded under ``run_id`` (the store takes any printable id) whose process died unsealed."""
    recorder, _ = recorder_for()
    writer = recorder.start(run_id=run_id)
    writer.append("marker", {"note": "customer account 7731"})


def test_repair_records_the_acceptance_of_a_run_whose_id_names_no_journal_directory(home: Path) -> None:
    """`bitexact repair --help`: "Record an operator's explicit acceptance of a truncated or damaged
    history. Use it for a run whose process died before sealing." fold_orphans' own rule: "no journal
    was ever made for the run: nothing to fold".

    The store takes any printable run id ("nightly batch 7", with spaces), and the SDK records such a run
    (it writes in the call when it cannot journal). Its repair is refused with exit 2 ("run_id ... cannot
    name a journal directory"): fold_orphans calls journal_dir, which refuses the id, before it looks
    for journals, so the operator can never record the acceptance of that run's history."""
    run_id = "nightly batch 7"
    _unsealed_run_named(run_id)
    result = _cli(home, "repair", run_id, "--by", "ops:alice", "--note", "host lost power")
    assert result.exit_code == 0, result.output
    assert [e["kind"] for e in entries(run_id)][-1] == "repair"


def test_a_redaction_of_a_run_whose_id_names_no_journal_directory_reports_success(home: Path) -> None:
    """docs: exit codes mean something; a redaction that destroyed the value must not report that it
    failed. apply_pending (recording/audit.py) rewrites the entry, then calls discard_folded, whose
    journal_dir refuses the run's id (a space): JournalError, `bitexact redact` exits 2 with "run_id ...
    cannot name a journal directory" although the value is already destroyed."""
    run_id = "nightly batch 7"
    _unsealed_run_named(run_id)
    result = _cli(home, "redact", run_id, "--field", "1:note", "--by", "dpo", "--reason", "erasure request")
    assert "note" not in entries(run_id)[1]["data"], "the value was destroyed"
    assert result.exit_code == 0, f"the redaction was applied, but the command says: {result.output}"


# -- 4. a repair between the recording's open and flock of .recording.lock unlinks the lock it takes ---


def test_a_repair_at_the_runs_start_leaves_the_recording_protected_by_its_live_lock(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: "A run being recorded holds a lock file in its journal directory (`.recording.lock`,
    flock) from its start to its end: `bitexact repair` of a run a live process is still recording is
    refused, since folding or removing its journals would write an entry twice".

    hold_live_lock opens (creates) ``.recording.lock`` and then flocks it. A repair that runs between
    the two takes the same file, finds nothing to fold, and (fold_orphans' ``finally``) unlinks it
    before closing. The recording's flock then succeeded on the unlinked file: it believed it held the
    live lock, but the next repair created a fresh ``.recording.lock``, locked it, and folded the live
    run's journals while its background writer wrote the same entries."""
    import fcntl

    real_flock = fcntl.flock
    armed = {"on": True, "inside": False}

    def flock(fd: int, operation: int) -> Any:
        path = os.readlink(f"/proc/self/fd/{fd}")
        if armed["on"] and not armed["inside"] and path.endswith(f"/{LIVE_LOCK}"):
            # The recording has opened .recording.lock at its start; a repair runs now.
            armed["on"], armed["inside"] = False, True
            try:
                first_repair.append(fold_orphans(recorder_for()[0], Path(path).parent.name))
            finally:
                armed["inside"] = False
        return real_flock(fd, operation)

    first_repair: list[Any] = []
    monkeypatch.setattr(fcntl, "flock", flock)
    reached, go = _pause_queued_writes(monkeypatch)
    refused = False
    try:
        with bitexact.run() as r:
            assert first_repair == [[]], "the first repair ran between the open and the flock, folding nothing"
            r.record("tool_call", {"tool": "scan", "result": BIG})  # journaled, its write held back
            assert reached.wait(30)  # the entry is journaled and its write in flight
            try:
                fold_orphans(recorder_for()[0], r.run_id)  # type: ignore[arg-type]
            except BitExactError:
                refused = True
            go.set()
    finally:
        go.set()
    steps = [e["step"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert len(steps) == 1, f"the entry whose call returned was written once; the chain holds it at steps {steps}"
    assert refused, "a repair of a run its live process is still recording was not refused"


# -- 5. a write that fails after the exit gave up on it takes the live lock again, for good ----------


def test_a_write_failing_after_the_exit_gave_up_does_not_keep_the_run_locked_against_repair(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: the live lock is held "from its first journal to its end"; capture-controls.md:
    past the drain timeout "the run is left unsealed - its journals stay for bitexact repair to fold".

    The exit abandons the batch in flight and releases the live lock; the writer thread goes on with
    it. When that write then fails, ``_queued_failed`` journals the entry again as ``unwritten``
    through ``_journal``, whose ``_hold_live_lock`` finds no lock held and takes it again. Nothing
    ever releases it: for as long as the agent's process lives, `bitexact repair` of the ended run is
    refused as "still being recorded by a live process", and the entry never reaches the chain."""
    from bitexact.errors import StoreBusyError

    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    reached, go = threading.Event(), threading.Event()

    def failing(self: Any, items: list[Any]) -> Any:
        reached.set()
        assert go.wait(60)
        raise StoreBusyError("another process held the store's write lock")

    monkeypatch.setattr(RUN_MODULE.Run, "_queued_write", failing)
    try:
        with bitexact.run() as r:
            r.record("tool_call", {"tool": "scan", "result": BIG})
            assert reached.wait(30)
        assert not r.sealed
    finally:
        go.set()
    assert r._queue is not None and r._queue._thread is not None
    r._queue._thread.join(30)
    assert not r._queue._thread.is_alive()
    recorder, _ = recorder_for()
    try:
        fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    except BitExactError as exc:
        pytest.fail(f"repair of the ended run {r.run_id} is refused: {exc}")
    steps = [e["step"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert len(steps) == 1, f"the entry whose call returned is folded once; the chain holds it at steps {steps}"


# -- 6. an entry that cannot be journaled while the queue is busy is queued with no journal at all ---


def test_an_entry_that_cannot_be_journaled_is_durable_or_declared_when_its_call_returns(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: "Whatever the path, the entry is durable before the call returns"; the fallback for
    a journal that cannot be written is "writing them in the call" (the warning ``_journal`` logs),
    and a write that fails is a declared gap.

    While an earlier large entry is still being written, a small one queues behind it through a journal
    file. If that journal cannot be written (the disk full for a moment), ``_submit`` waits for the
    queue to drain and writes in the call; but when the drain times out it queues the entry anyway,
    with ``journal=None``: the call returns, the entry is in memory only, and no gap says so. A kill -9
    now loses an entry whose call returned, silently."""
    from bitexact.crypto.hostkey import load_host_key

    load_host_key(home)
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    reached, go = _pause_queued_writes(monkeypatch)
    real_write_journal = RUN_MODULE.write_journal

    def write_journal(home_: Path, key: Any, record: Any, data_json: bytes | None = None) -> Path:
        if record.kind == "marker":
            raise OSError(28, "No space left on device")
        return real_write_journal(home_, key, record, data_json)

    monkeypatch.setattr(RUN_MODULE, "write_journal", write_journal)
    try:
        with bitexact.run() as r:
            r.record("tool_call", {"tool": "scan", "result": BIG})  # journaled; its write in flight
            assert reached.wait(30)
            handle = r.marker("returned to the agent")  # queued behind it; its journal cannot be written
            durable = any(name.startswith(f"{handle.seq:012d}") for name in _journal_files(home, r.run_id))
            declared = handle.gap is not None or any(g.seq == handle.seq for g in r.failures.gaps)
            go.set()
    finally:
        go.set()
    assert durable or declared, (
        f"marker #{handle.seq}'s call returned with the entry neither journaled, nor written, nor declared a"
        " gap: a kill -9 at that moment loses it without a trace")


def _journal_files(home: Path, run_id: str | None) -> list[str]:
    from bitexact.recording.journal import journal_dir

    assert run_id is not None
    directory = journal_dir(home, run_id)
    return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def test_a_repair_under_another_hash_algorithm_recognizes_an_orphan_already_written(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A context whose content the policy scrubs stores the hash of its content as stored, under the
    run's algorithm. A repair run under the other one (BITEXACT_HASH_ALG set differently on the repair
    host) compared the orphan as its own algorithm would have written it, found nothing, and wrote the
    entry a second time."""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording import Recorder
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.sdk.records import context_data

    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")  # scrubs the card number below
    recorder, _ = recorder_for()
    assert recorder.alg == "blake2b-256" and not recorder.policy.off
    writer = recorder.start()
    data = context_data("page", "card 4111 1111 1111 1111 on file", None, recorder.alg)
    journal = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "context", data,
                                                                      steps_before=writer.steps))
    writer.append("context", dict(data))  # written, then the process died before the journal was removed
    stored = [e for e in recorder.store.entries(writer.run_id) if e["kind"] == "context"]
    assert "4111" not in str(stored[0]["data"]) and stored[0]["data"]["content_hash"] != data["content_hash"]
    repairing = Recorder(recorder.store, recorder.key, alg="sha256", policy=recorder.policy)
    assert fold_orphans(repairing, writer.run_id) == [journal.name]
    kinds = [e["kind"] for e in recorder.store.entries(writer.run_id)]
    assert kinds == ["run_meta", "context", "repair"], kinds
