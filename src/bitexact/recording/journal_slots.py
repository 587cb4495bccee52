"""Journal slots: a small entry made durable in the agent's call by one overwrite and one fdatasync.

A journal written as a new file must be made durable twice, its data and its
directory entry (about 0.5 ms on the development disk, more than the store's
own commit). A slot file is made once per run, zero-filled and synced with
its directory; recording an entry into a free slot is then one ``pwrite`` of
blocks the file already owns and one ``fdatasync`` (about 0.11 ms there),
with no metadata to journal. The entry is written into the chain after the
call returns, in record order, and its slot is released.

Layout: ``<data directory>/journals/<run_id>/slots-<token>.bxs``, ``count``
slots of ``slot_bytes`` each. A slot is a big-endian u32 length, then that
many bytes of a sealed journal exactly as :func:`write_journal` seals one
(ChaCha20-Poly1305 under a random key wrapped by the host key), then zeros.
Length 0 is a free slot. Releasing a slot zeroes its length without a sync:
after a crash a released slot may still read as full, and ``bitexact repair``
then finds its entry already in the chain, as it does for a journal whose
removal was cut short. A slot whose write was cut short by the crash (its
call never returned) does not open, and is discarded as such.
"""

from __future__ import annotations

import os
import secrets
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bitexact.crypto.hostkey import HostKey
from bitexact.crypto.sealed import seal
from bitexact.recording.journal import (
    PURPOSE,
    JournalError,
    JournalRecord,
    ensure_journal_dir,
    fsync_dir,
    journal_dir,
    journal_payload,
    parse_journal,
)

SLOTS_SUFFIX: Final[str] = ".bxs"
SLOT_COUNT: Final[int] = 64
SLOT_BYTES: Final[int] = 16 << 10
_LENGTH: Final = struct.Struct(">I")


@dataclass(frozen=True)
class SlotRecord:
    """What one full slot of a slots file holds: its record, or why it does not open."""

    path: Path
    index: int
    record: JournalRecord | None
    problem: str | None = None

    @property
    def name(self) -> str:
        """How repair entries and failures records name this slot: ``<file>#<index>``."""
        return f"{self.path.name}#{self.index}"


class JournalSlots:
    """A run's slots file, open for writing: reserve a slot, write a record into it, release it.

    Thread-safe: calls from several agent threads take different slots and
    sync them independently.
    """

    def __init__(self, home: Path, host_key: HostKey, run_id: str, *, count: int = SLOT_COUNT) -> None:
        if count < 1:
            raise ValueError("a slots file needs at least one slot")
        self._host_key = host_key
        self.slot_bytes = slot_bytes = SLOT_BYTES
        self._free = list(range(count - 1, -1, -1))  # pop() hands out slot 0 first
        self._lock = threading.Lock()
        directory = journal_dir(home, run_id)
        self.path = directory / f"slots-{secrets.token_hex(4)}{SLOTS_SUFFIX}"
        try:
            ensure_journal_dir(directory)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise JournalError(f"cannot make a slots file in {directory}: {exc.strerror or exc}") from exc
        try:
            # Real zeros, not fallocate: unwritten extents would turn every
            # later overwrite into a metadata change the fdatasync must journal.
            zeros = bytes(1 << 20)
            size = count * slot_bytes
            for offset in range(0, size, len(zeros)):
                os.pwrite(self._fd, zeros[: min(len(zeros), size - offset)], offset)
            os.fsync(self._fd)
            fsync_dir(directory)
        except OSError as exc:
            self._discard()
            raise JournalError(f"cannot make a slots file in {directory}: {exc.strerror or exc}") from exc
        self._closed = False

    def fits(self, data_json: bytes) -> bool:
        """Whether an entry of this size can fit in a slot once sealed (an estimate erring on the safe side)."""
        return len(data_json) + 1024 <= self.slot_bytes

    def write(self, record: JournalRecord, data_json: bytes) -> int | None:
        """Seal ``record`` into a free slot and sync it; the slot's index, or None when none is free or it does not fit.

        Raises :class:`JournalError` when the disk refuses the write (the slot
        is then free again and nothing was promised).
        """
        blob = seal(journal_payload(record, data_json), self._host_key, purpose=PURPOSE)
        if _LENGTH.size + len(blob) > self.slot_bytes:
            return None
        with self._lock:
            if self._closed or not self._free:
                return None
            index = self._free.pop()
        try:
            os.pwrite(self._fd, _LENGTH.pack(len(blob)) + blob, index * self.slot_bytes)
            os.fdatasync(self._fd)
        except OSError as exc:
            self.release(index)
            raise JournalError(f"cannot write slot {index} of {self.path}: {exc.strerror or exc}") from exc
        return index

    def name(self, index: int) -> str:
        """``<file>#<index>``: how a gap or a repair entry names the slot."""
        return f"{self.path.name}#{index}"

    def release(self, index: int) -> None:
        """Free a slot whose entry is in the chain (its length zeroed, not synced: see the module doc)."""
        with self._lock:
            if self._closed:
                return
            try:
                os.pwrite(self._fd, bytes(_LENGTH.size), index * self.slot_bytes)
            except OSError:
                return  # it stays full: repair will find its entry already written
            self._free.append(index)

    @property
    def free(self) -> int:
        """Slots free to take now."""
        with self._lock:
            return len(self._free)

    def close(self, *, remove: bool) -> None:
        """Close the file; ``remove`` deletes it (every entry it held is in the chain)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            os.close(self._fd)
            if remove:
                self._unlink()

    def _discard(self) -> None:
        os.close(self._fd)
        self._unlink()

    def _unlink(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def slot_files(directory: Path) -> list[Path]:
    """The slots files in a run's journal directory."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.startswith("slots-") and p.suffix == SLOTS_SUFFIX)


def read_slots(path: Path, host_key: HostKey) -> list[SlotRecord]:
    """Every full slot of a slots file, in slot order, opened (or with why it does not open)."""
    data = Path(path).read_bytes()
    size = _slot_size(data)
    found: list[SlotRecord] = []
    for index in range(len(data) // size):
        offset = index * size
        (length,) = _LENGTH.unpack_from(data, offset)
        if length == 0:
            continue
        where = f"{path.name}#{index}"
        if length > size - _LENGTH.size:
            found.append(SlotRecord(path, index, None, f"{where}: its length {length} overruns the slot"))
            continue
        blob = data[offset + _LENGTH.size: offset + _LENGTH.size + length]
        try:
            found.append(SlotRecord(path, index, parse_journal(blob, host_key, where)))
        except JournalError as exc:
            found.append(SlotRecord(path, index, None, str(exc)))
    return found


def has_full_slot(path: Path) -> bool:
    """Whether any slot of the file holds a record (without opening it)."""
    data = Path(path).read_bytes()
    size = _slot_size(data)
    return any(_LENGTH.unpack_from(data, offset)[0] for offset in range(0, len(data) - size + 1, size))


def _slot_size(data: bytes) -> int:
    if len(data) % SLOT_BYTES == 0:
        return SLOT_BYTES
    raise JournalError(f"a slots file of {len(data)} bytes is not a whole number of {SLOT_BYTES}-byte slots")
