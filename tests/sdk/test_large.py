"""Entries over 1 MiB: journaled in the call, written after it in record order, RecordHandle, drain, repair."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import bitexact
from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.journal import (
    JournalError,
    JournalRecord,
    orphan_journals,
    read_journal,
    write_journal,
)
from bitexact.recording.fold import fold_orphans
from bitexact.sdk.failures import read_failures
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries, journaled

BIG = "x" * ((1 << 20) + 10)


@contextmanager
def store_write_lock(home: Path) -> Iterator[None]:
    """Hold the store's writer lock (as another process writing would): appends wait behind it."""
    fd = os.open(home / "bitexact.db.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_a_large_entry_is_written_after_the_call_in_record_order(home: Path) -> None:
    with bitexact.run() as r:
        r.marker("first")
        with store_write_lock(home):
            big = r.record("tool_call", {"tool": "scan", "result": BIG})
            small = r.marker("after the big one")  # queues behind it: record order holds
            assert not big.done and not small.done
            assert dict(big.result(timeout=0.05)) == {}, "an unwritten entry reads as empty"
            (journal,) = [p for p in orphan_journals(home, r.run_id) if p.name.startswith("000000000002")]
            record = read_journal(journal, load_host_key(home))
            assert record.data == {"tool": "scan", "result": BIG} and record.seq == 2
        assert big["step"] == 2 and small["step"] == 3
        assert big["data"]["result"] == BIG
    assert [e["kind"] for e in entries(r.run_id)] == ["run_meta", "marker", "tool_call", "marker", "run_end"]
    assert orphan_journals(home, r.run_id) == [], "a journal is removed once its entry is written"


def test_the_journal_is_sealed_never_plain(home: Path) -> None:
    secret = "4111 1111 1111 1111 " * 60000
    with bitexact.run() as r:
        with store_write_lock(home):
            r.record("context", {"name": "n", "content": {"text": secret}})
            (journal,) = orphan_journals(home, r.run_id)
            raw = journal.read_bytes()
            mode = journal.parent.stat().st_mode  # the run's end removes the emptied directory
    assert b"4111 1111" not in raw and b"1111 1111" not in raw  # spaced: a header's hex never holds a space
    assert oct(mode & 0o777) == "0o700"


def test_exit_waits_at_most_the_drain_timeout_then_declares_gaps_and_leaves_the_run_unsealed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    scope = bitexact.run()
    r = scope.__enter__()
    with store_write_lock(home):
        handles = [r.record("tool_call", {"tool": "scan", "result": BIG, "n": n}) for n in range(2)]
        scope.__exit__(None, None, None)  # exit while the store is still held
        journals = journaled(home, r.run_id)
        assert len(journals) == 2
    assert not r.sealed
    gaps = r.failures.gaps
    assert [g.cause for g in gaps] == ["storage_unavailable", "storage_unavailable"]
    assert sorted(g.journal for g in gaps) == sorted(journals)  # type: ignore[type-var]
    assert [g["journal"] for g in read_failures(home, r.run_id)] == [g.journal for g in gaps]
    # The batch that was in flight at the exit may still land (the store was only slow): one
    # entry or both, as the background writer commits what is queued together; their journals go
    # with them. Whatever did not land, repair folds, in record order, naming the journals.
    r.drain(10)
    landed = [h.seq for h in handles if h.written]
    recorder, _ = recorder_for()
    left = journaled(home, r.run_id)
    assert len(left) + len(landed) == 2
    assert fold_orphans(recorder, r.run_id) == left
    written = entries(r.run_id)
    assert [e["kind"] for e in written] == ["run_meta", "tool_call", "tool_call"] + (["repair"] if left else [])
    assert [e["data"]["n"] for e in written[1:3]] == [0, 1]
    if left:
        assert written[3]["data"]["journals"] == left
    assert journaled(home, r.run_id) == []
    assert fold_orphans(recorder, r.run_id) == [], "nothing left to fold"


def test_a_fold_cut_short_never_writes_an_entry_twice(home: Path) -> None:
    recorder, _ = recorder_for()
    writer = recorder.start()
    data = {"tool": "scan", "result": BIG}
    journal = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "tool_call", data,
                                                                      steps_before=writer.steps))
    writer.append("tool_call", data)  # written, then the process died before the journal was removed
    assert fold_orphans(recorder, writer.run_id) == [journal.name]
    written = list(recorder.store.entries(writer.run_id))
    assert [e["kind"] for e in written] == ["run_meta", "tool_call", "repair"]
    assert written[2]["data"]["already_written"] == {journal.name: 1}
    assert written[2]["data"]["steps"] == {}


@pytest.mark.parametrize("written_before_the_kill", [False, True])
def test_two_identical_entries_both_left_in_journals_each_get_their_own_entry(
    home: Path, written_before_the_kill: bool
) -> None:
    """The same tool result recorded twice, both journals left: folded as two entries (neither written
    yet), or, when one batch wrote both before the process died, each claiming its own step."""
    recorder, _ = recorder_for()
    writer = recorder.start()
    data = {"tool": "read_file", "result": BIG}
    key = load_host_key(home)
    first, second = (write_journal(home, key, JournalRecord(writer.run_id, seq, "tool_call", data,
                                                            steps_before=writer.steps)) for seq in (1, 2))
    if written_before_the_kill:
        writer.append_each([("tool_call", data, None, None, None)] * 2)  # one batch; journals not yet removed
    assert fold_orphans(recorder, writer.run_id) == [first.name, second.name]
    written = list(recorder.store.entries(writer.run_id))
    assert [e["kind"] for e in written] == ["run_meta", "tool_call", "tool_call", "repair"]
    steps = {first.name: 1, second.name: 2}
    repair = written[3]["data"]
    assert repair.get("already_written", {}) == (steps if written_before_the_kill else {})
    assert repair["steps"] == ({} if written_before_the_kill else steps)


def test_a_sealed_run_refuses_a_fold_and_keeps_its_journals(home: Path) -> None:
    recorder, _ = recorder_for()
    writer = recorder.start()
    journal = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "marker", {"note": "n"}))
    writer.seal()
    with pytest.raises(JournalError, match="sealed"):
        fold_orphans(recorder, writer.run_id)
    assert journal.exists()


def test_strict_mode_writes_even_a_large_entry_in_the_call(home: Path) -> None:
    with bitexact.run(strict=True) as r:
        handle = r.record("tool_call", {"tool": "scan", "result": BIG})
        assert handle.written and handle["step"] == 1
        assert orphan_journals(home, r.run_id) == []


def test_a_failed_small_write_is_journaled_so_repair_can_fold_it(home: Path, tmp_path: Path) -> None:
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.store import open_store

    other = tmp_path / "other"
    recorder = Recorder(open_store(other), KeyStore(other).current_or_init())
    with bitexact.run(recorder=recorder) as r:
        recorder.store.close()
        handle = r.record_tool_call("lookup", result={"estimate": 3840})
    assert handle.gap is not None and handle.gap.journal is not None
    assert not r.sealed
    reopened = Recorder(open_store(other), recorder.key)
    assert fold_orphans(reopened, r.run_id) == [handle.gap.journal]
    kinds = [e["kind"] for e in reopened.store.entries(r.run_id)]
    assert kinds == ["run_meta", "tool_call", "repair"]
    reopened.store.close()


def test_reading_a_handle_waits_at_most_the_drain_timeout_and_reads_as_empty_until_written(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    with bitexact.run() as r:
        with store_write_lock(home):
            handle = r.record("tool_call", {"tool": "scan", "result": BIG})
            with pytest.raises(KeyError):
                handle["step"]
            assert len(handle) == 0 and list(handle) == [] and not handle.done
        written = handle.result(10)
        assert written["step"] == 1 and written["kind"] == "tool_call" and handle.written
        assert dict(handle)["hash"] == entries(r.run_id)[1]["hash"]
        with pytest.raises(TypeError):
            handle["step"] = 7  # type: ignore[index]
