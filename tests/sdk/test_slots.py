"""journal_small: small entries durable in the call through journal slots, then written in record order.

Off by default (the capture contract writes an entry up to 1 MiB in the
call); ``bitexact.run(journal_small=True)`` or ``BITEXACT_JOURNAL_SMALL=1``
turns it on. Large slots serve large entries either way.

The store's writer lock is held (as a slow writer in another process would
hold it) so that what the call made durable can be looked at before the
chain has it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

import bitexact
from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.fold import fold_orphans
from bitexact.recording.journal import JournalRecord, journal_dir, orphan_journals
from bitexact.recording.journal_slots import SLOT_COUNT, JournalSlots, read_slots, slot_files
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries, journaled, kinds
from sdk.test_large import store_write_lock


def _slotted(home: Path, run_id: str | None) -> list[JournalRecord]:
    assert run_id is not None
    host_key = load_host_key(home)
    return [slot.record for path in slot_files(journal_dir(home, run_id))
            for slot in read_slots(path, host_key) if slot.record is not None]


def test_a_small_entry_is_in_its_slot_when_the_call_returns_and_in_the_chain_after(home: Path) -> None:
    with bitexact.run(journal_small=True) as r:
        with store_write_lock(home):
            handle = r.record_tool_call("lookup", args=["HX-1"], result={"estimate": 3840})
            assert not handle.done
            (record,) = _slotted(home, r.run_id)
            assert record.kind == "tool_call" and record.seq == handle.seq
            assert record.data["result"] == {"estimate": 3840}
        assert handle["step"] == 1  # reading the handle waits for the write
        assert _slotted(home, r.run_id) == [], "the slot is released once the entry is in the chain"
    assert kinds(r.run_id) == ["run_meta", "tool_call", "run_end"]
    assert slot_files(journal_dir(home, r.run_id)) == [], "a run that ends whole leaves no slots file"


def test_a_slot_is_sealed_never_plain(home: Path) -> None:
    with bitexact.run(journal_small=True) as r:
        with store_write_lock(home):
            r.record("context", {"name": "card", "content": {"text": "4111 1111 1111 1111"}})
            (path,) = slot_files(journal_dir(home, r.run_id))
            raw = path.read_bytes()
            assert b"4111 1111" not in raw and b"1111 1111" not in raw  # spaced: a header's hex never holds a space
            assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_entries_past_the_free_slots_get_journal_files_and_keep_record_order(home: Path) -> None:
    count = SLOT_COUNT + 3
    with bitexact.run(journal_small=True) as r:
        with store_write_lock(home):
            handles = [r.marker(f"m{n}") for n in range(count)]
            assert len(_slotted(home, r.run_id)) == SLOT_COUNT
            assert len(orphan_journals(home, r.run_id)) == 3, "no slot free: a journal file each"
        assert [h["step"] for h in handles] == list(range(1, count + 1))
    notes = [e["data"]["note"] for e in entries(r.run_id) if e["kind"] == "marker"]
    assert notes == [f"m{n}" for n in range(count)]


def test_without_slots_small_entries_are_written_in_the_call(
    home: Path, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "journals").write_text("not a directory")  # no journal can be made here
    with bitexact.run(journal_small=True) as r:
        handle = r.marker("written now")
        assert handle.written and handle["step"] == 1
    assert r.sealed
    assert any("cannot make journal slots" in rec.getMessage() for rec in sdk_warnings.records
               if rec.levelno == logging.WARNING)


def test_a_slot_left_full_after_its_entry_landed_is_folded_as_already_written(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shipped policy scrubs the card number: the chain holds the scrubbed entry, the slot the raw one.
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    recorder, _ = recorder_for()
    writer = recorder.start()
    data = {"tool": "pay", "args": ["4111 1111 1111 1111"], "status": "ok"}
    slots = JournalSlots(home, load_host_key(home), writer.run_id)
    index = slots.write(JournalRecord(writer.run_id, 1, "tool_call", data, steps_before=writer.steps),
                        b'{"tool":"pay","args":["4111 1111 1111 1111"],"status":"ok"}')
    step = writer.append("tool_call", data).step  # landed; the process died before the release
    assert "4111 1111 1111 1111" not in str(list(recorder.store.entries(writer.run_id))[step]["data"])
    slots.close(remove=False)
    assert fold_orphans(recorder, writer.run_id) == [slots.name(index)]  # type: ignore[arg-type]
    written = list(recorder.store.entries(writer.run_id))
    assert [e["kind"] for e in written] == ["run_meta", "tool_call", "repair"]
    assert written[2]["data"]["already_written"] == {slots.name(index): step}  # type: ignore[arg-type]
    assert slot_files(journal_dir(home, writer.run_id)) == []


def test_a_slot_torn_by_the_crash_is_discarded_not_folded(home: Path) -> None:
    recorder, _ = recorder_for()
    writer = recorder.start()
    slots = JournalSlots(home, load_host_key(home), writer.run_id)
    kept = slots.write(JournalRecord(writer.run_id, 1, "marker", {"note": "returned"}), b'{"note":"returned"}')
    torn = slots.write(JournalRecord(writer.run_id, 2, "marker", {"note": "torn"}), b'{"note":"torn"}')
    slots.close(remove=False)
    assert kept is not None and torn is not None
    with open(slots.path, "r+b") as f:  # the second write was cut short: its tail never reached the disk
        f.seek(torn * slots.slot_bytes + 60)
        f.write(b"\0" * 40)
    assert fold_orphans(recorder, writer.run_id) == [slots.name(kept)]
    written = list(recorder.store.entries(writer.run_id))
    assert [e["kind"] for e in written] == ["run_meta", "marker", "repair"]
    assert written[1]["data"] == {"note": "returned"}
    assert written[2]["data"]["discarded_partial"] == [slots.name(torn)]


def test_after_the_first_large_entry_later_ones_go_into_large_slots(home: Path) -> None:
    big = "z" * ((1 << 20) + 10)
    with bitexact.run() as r:
        with store_write_lock(home):
            first = r.record("tool_call", {"tool": "scan", "result": big})
            assert [p.name for p in orphan_journals(home, r.run_id)] != [], "the first one takes a journal file"
        assert first["step"] == 1
        deadline = time.monotonic() + 30
        while r._large_slots is None:  # made on a thread of their own after the first large entry
            assert time.monotonic() < deadline, "the large slots were never made"
            time.sleep(0.01)
        with store_write_lock(home):
            second = r.record("tool_call", {"tool": "scan", "result": big + "!"})
            (name,) = journaled(home, r.run_id)
            assert "-4160k.bxs#" in name
        assert second["data"]["result"] == big + "!"
    assert slot_files(journal_dir(home, r.run_id)) == [], "both slots files go when the run ends whole"


def test_by_default_a_small_entry_is_scanned_and_written_in_the_call_as_the_contract_says(home: Path) -> None:
    with bitexact.run() as r:
        handle = r.marker("written now")
        assert handle.written and handle["step"] == 1
        assert slot_files(journal_dir(home, r.run_id)) == []
    assert entries(r.run_id)[0]["data"]["journal_small"] is False


def test_the_environment_turns_it_on_and_run_meta_says_so(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_JOURNAL_SMALL", "1")
    with bitexact.run() as r:
        with store_write_lock(home):
            handle = r.marker("journaled")
            assert not handle.done and len(_slotted(home, r.run_id)) == 1
    assert entries(r.run_id)[0]["data"]["journal_small"] is True


def test_a_setting_that_is_not_yes_or_no_is_named(
    home: Path, monkeypatch: pytest.MonkeyPatch, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("BITEXACT_JOURNAL_SMALL", "sometimes")
    with bitexact.run() as r:
        r.marker("not recorded")
    assert r.run_id is None  # the run could not start: nothing recorded, the agent ran on
    assert any("BITEXACT_JOURNAL_SMALL='sometimes'" in rec.getMessage() for rec in sdk_warnings.records)


def test_one_entry_the_write_path_refuses_fails_alone_not_its_batch(home: Path) -> None:
    deep: dict = {}
    inner = deep
    for _ in range(200):  # deeper than an entry may nest
        inner["n"] = {}
        inner = inner["n"]
    with bitexact.run(journal_small=True) as r:
        with store_write_lock(home):  # all three queue up and are written in one batch
            before = r.marker("before")
            bad = r.record("context", {"name": "deep", "content": deep})
            after = r.marker("after")
        assert before["step"] == 1 and after["data"]["note"] == "after"
        assert bad.result(timeout=30) == {} and bad.gap is not None and bad.gap.cause == "invalid_argument"
    notes = [e["data"].get("note") for e in entries(r.run_id) if e["kind"] == "marker"]
    assert notes == ["before", "recording gap: invalid_argument", "after"]  # declared where the entry would be
    assert not r.sealed, "its journal stays for repair, as the contract says of an entry that cannot be written"


def test_a_slots_file_a_kill_left_half_made_is_discarded_by_the_fold(home: Path) -> None:
    recorder, _ = recorder_for()
    writer = recorder.start()
    directory = journal_dir(home, writer.run_id)
    directory.mkdir(parents=True)
    half = directory / ".slots-0badc0de-4160k.bxs.tmp"
    half.write_bytes(b"\0" * 12345)  # the process died while zero-filling it
    load_host_key(home)  # made when the run journaled its first entry
    writer.append("marker", {"note": "n"})
    assert fold_orphans(recorder, writer.run_id) == []
    written = list(recorder.store.entries(writer.run_id))
    assert written[-1]["kind"] == "repair" and written[-1]["data"]["discarded_partial"] == [half.name]
    assert not half.exists()
