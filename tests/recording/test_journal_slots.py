"""Journal slots: a preallocated, sealed file of fixed slots; write, read back, release, refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.crypto.hostkey import HostKey, load_host_key
from bitexact.recording.journal import JournalError, JournalRecord, journal_dir
from bitexact.recording.journal_slots import (
    LARGE_SLOT_BYTES,
    SLOT_BYTES,
    JournalSlots,
    has_full_slot,
    read_slots,
    slot_files,
)


@pytest.fixture
def host_key(tmp_path: Path) -> HostKey:
    return load_host_key(tmp_path / "home")


def _record(seq: int, note: str = "n") -> tuple[JournalRecord, bytes]:
    return JournalRecord("run-1", seq, "marker", {"note": note}, steps_before=seq), f'{{"note":"{note}"}}'.encode()


def test_the_file_is_made_whole_owner_only_and_empty(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=4)
    assert slot_files(journal_dir(tmp_path / "home", "run-1")) == [slots.path]
    assert slots.path.stat().st_size == 4 * SLOT_BYTES
    assert oct(slots.path.stat().st_mode & 0o777) == "0o600"
    assert not has_full_slot(slots.path) and read_slots(slots.path, host_key) == []
    slots.close(remove=True)
    assert not slots.path.exists()


def test_records_read_back_in_slot_order_and_a_released_slot_is_empty(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=4)
    indexes = [slots.write(*_record(seq, f"n{seq}")) for seq in (1, 2, 3)]
    assert indexes == [0, 1, 2] and slots.free == 1
    slots.release(1)
    opened = read_slots(slots.path, host_key)
    assert [(s.index, s.record.data["note"] if s.record else None) for s in opened] == [(0, "n1"), (2, "n3")]
    assert opened[0].name == f"{slots.path.name}#0" == slots.name(0)
    assert slots.write(*_record(4, "n4")) in (1, 3)  # a released slot is taken again
    slots.close(remove=False)
    assert has_full_slot(slots.path)


def test_no_free_slot_or_an_entry_too_big_gives_none(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=1)
    big = b'{"note":"' + b"x" * SLOT_BYTES + b'"}'
    assert not slots.fits(big)
    assert slots.write(JournalRecord("run-1", 1, "marker", {}), big) is None
    assert slots.write(*_record(2)) == 0
    assert slots.write(*_record(3)) is None, "the only slot is taken"
    slots.close(remove=True)
    assert slots.write(*_record(4)) is None, "a closed file takes nothing"


def test_another_hosts_slots_do_not_open(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=2)
    slots.write(*_record(1))
    slots.close(remove=False)
    other = load_host_key(tmp_path / "elsewhere")
    (opened,) = read_slots(slots.path, other)
    assert opened.record is None and opened.problem is not None
    assert "host key" in opened.problem and opened.name in opened.problem


def test_a_length_that_overruns_its_slot_is_named(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=2)
    slots.close(remove=False)
    with open(slots.path, "r+b") as f:
        f.write((SLOT_BYTES * 2).to_bytes(4, "big"))
    (opened,) = read_slots(slots.path, host_key)
    assert opened.record is None and "overruns the slot" in (opened.problem or "")


def test_a_file_that_is_not_whole_slots_is_refused(tmp_path: Path, host_key: HostKey) -> None:
    path = tmp_path / "slots-00000000-16k.bxs"
    path.write_bytes(b"\0" * (SLOT_BYTES + 7))
    with pytest.raises(JournalError, match="not a whole number"):
        read_slots(path, host_key)
    misnamed = tmp_path / "slots-00000000.bxs"
    misnamed.write_bytes(b"\0" * SLOT_BYTES)
    with pytest.raises(JournalError, match="not named as a slots file"):
        read_slots(misnamed, host_key)


def test_large_slots_hold_a_large_entry_and_name_their_size(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=2, slot_bytes=LARGE_SLOT_BYTES)
    assert slots.path.name.endswith(f"-{LARGE_SLOT_BYTES // 1024}k.bxs")
    big = b'{"note":"' + b"b" * (3 << 20) + b'"}'
    assert slots.fits(big)
    index = slots.write(JournalRecord("run-1", 1, "marker", {}), big)
    assert index == 0
    slots.close(remove=False)
    (opened,) = read_slots(slots.path, host_key)
    assert opened.record is not None and len(opened.record.data["note"]) == 3 << 20


def test_an_unusable_directory_is_a_journal_error(tmp_path: Path, host_key: HostKey) -> None:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "journals").write_text("a file where the directory should be")
    with pytest.raises(JournalError, match="cannot make a slots file"):
        JournalSlots(home, host_key, "run-1")


def test_a_slots_file_is_made_whole_before_it_takes_its_name(tmp_path: Path, host_key: HostKey) -> None:
    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=2)
    directory = slots.path.parent
    assert [p.name for p in directory.iterdir()] == [slots.path.name], "no temporary file left beside it"
    slots.close(remove=True)


def test_a_file_cut_short_is_looked_at_not_skipped(tmp_path: Path, host_key: HostKey) -> None:
    path = tmp_path / "slots-00000000-16k.bxs"
    path.write_bytes(b"\0" * 100)
    assert has_full_slot(path), "a fold must look at it, and name it"


def test_every_slot_write_has_a_key_of_its_own_even_with_keys_made_ahead(tmp_path: Path, host_key: HostKey) -> None:
    import re

    slots = JournalSlots(tmp_path / "home", host_key, "run-1", count=8)
    for round_ in range(3):  # writes, then releases (which make the next keys), then writes again
        indexes = [slots.write(*_record(seq, f"n{seq}")) for seq in range(1, 9)]
        assert indexes and None not in indexes
        if round_ < 2:
            for index in indexes:
                assert index is not None
                slots.release(index)
    blob = slots.path.read_bytes()
    wrapped = re.findall(rb'"wrapped_key":"([0-9a-f]+)"', blob)
    assert len(wrapped) == 8 and len(set(wrapped)) == 8, "eight full slots, eight different journal keys"
    opened = read_slots(slots.path, host_key)
    assert sorted(s.record.data["note"] for s in opened if s.record) == sorted(f"n{seq}" for seq in range(1, 9))
    slots.close(remove=True)
