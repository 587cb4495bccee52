"""Journal slots: a small entry made durable in the agent's call by one overwrite and one fdatasync.

A journal written as a new file must be made durable twice, its data and its
directory entry (about 0.5 ms on the development disk, more than the store's
own commit). A slot file is made once per run, zero-filled and synced with
its directory; recording an entry into a free slot is then one ``pwrite`` of
blocks the file already owns and one ``fdatasync`` (about 0.11 ms there),
with no metadata to journal. On a filesystem without a journal (the
development disk's ext4 has none) that ``fdatasync`` also writes the file's
inode whenever the ``pwrite`` moved its timestamps, one more disk round trip
(0.04-0.09 ms there): on any call 4 ms or more after the last, and on nearly
every call while other programs read the timestamps of files they change,
which makes the kernel stamp every write finely. No way of writing keeps the
timestamps still, so this module cannot avoid it; a journaled filesystem's
``fdatasync`` is expected to leave timestamps to its journal (not measured there). The entry is written into the chain
after the call returns, in record order, and its slot is released.

Layout: ``<data directory>/journals/<run_id>/slots-<token>-<KiB>k.bxs``,
``count`` slots of ``<KiB>`` KiB each (the SDK keeps 64 slots of 16 KiB for
small entries, and makes 2 of 4 MiB + 64 KiB once a run records a large
one). A slot is a big-endian u32 length, then that
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
import re
import secrets
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bitexact.crypto.hostkey import HostKey
from bitexact.crypto.sealed import FileKey, WrongHostKeyError, new_file_key, seal_pieces
from bitexact.recording.journal import (
    PURPOSE,
    JournalError,
    JournalRecord,
    ensure_journal_dir,
    journal_dir,
    journal_payload,
    parse_journal,
)
from bitexact.private_files import fsync_directory
from bitexact.zerofill import write_zeros

SLOTS_SUFFIX: Final[str] = ".bxs"
SLOT_COUNT: Final[int] = 64
SLOT_BYTES: Final[int] = 16 << 10
LARGE_SLOT_COUNT: Final[int] = 2
LARGE_SLOT_BYTES: Final[int] = (4 << 20) + (64 << 10)
_LENGTH: Final = struct.Struct(">I")
_FILE_NAME: Final = re.compile(r"slots-[0-9a-f]{8}-([1-9][0-9]{0,6})k\.bxs")
KEYS_AHEAD: Final[int] = 2
"""Journal keys kept made and wrapped ahead of the calls that use them (each is used once)."""
_SEAL_ROOM: Final[int] = 2048
"""Bytes a sealed journal adds to the entry's JSON, at most (header, record fields, chunk framing)."""


@dataclass(frozen=True)
class SlotRecord:
    """What one full slot of a slots file holds: its record, or why it does not open."""

    path: Path
    index: int
    record: JournalRecord | None
    problem: str | None = None
    foreign: bool = False
    """It does not open because it was sealed under another host key: whole, not a write cut short."""

    @property
    def name(self) -> str:
        """How repair entries and failures records name this slot: ``<file>#<index>``."""
        return f"{self.path.name}#{self.index}"


class JournalSlots:
    """A run's slots file, open for writing: reserve a slot, write a record into it, release it.

    Thread-safe: calls from several agent threads take different slots and
    sync them independently.
    """

    def __init__(self, home: Path, host_key: HostKey, run_id: str, *,
                 count: int = SLOT_COUNT, slot_bytes: int = SLOT_BYTES) -> None:
        if count < 1 or slot_bytes < 4096 or slot_bytes % 1024:
            raise ValueError("a slots file needs at least one slot, of a whole number of KiB, at least 4")
        self._host_key = host_key
        self.slot_bytes = slot_bytes
        self._free = list(range(count - 1, -1, -1))  # pop() hands out slot 0 first
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._writing = 0  # writes between taking a slot and syncing it: close waits for them
        # Each journal still gets a random key of its own, wrapped by the host key; making one is a
        # fifth of a slot write's CPU, so they are made here and as slots are released, off the calls.
        self._keys: list[FileKey] = [new_file_key(host_key, purpose=PURPOSE) for _ in range(KEYS_AHEAD)]
        directory = journal_dir(home, run_id)
        self.path = directory / f"slots-{secrets.token_hex(4)}-{slot_bytes // 1024}k{SLOTS_SUFFIX}"
        # Made whole under a dot-name, then renamed: a process killed while
        # making it leaves a temporary file (discarded by repair), never a
        # slots file cut short.
        temporary = directory / f".{self.path.name}.tmp"
        try:
            ensure_journal_dir(directory)
            self._fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise JournalError(f"cannot make a slots file in {directory}: {exc.strerror or exc}") from exc
        try:
            write_zeros(self._fd, 0, count * slot_bytes)  # so that a slot's sync is of its data alone
            os.fsync(self._fd)
            os.rename(temporary, self.path)
            fsync_directory(directory)
        except OSError as exc:
            os.close(self._fd)
            for leftover in (temporary, self.path):
                try:
                    os.unlink(leftover)
                except OSError:
                    pass
            raise JournalError(f"cannot make a slots file in {directory}: {exc.strerror or exc}") from exc
        self._closed = False

    def fits(self, data_json: bytes) -> bool:
        """Whether an entry of this size can fit in a slot once sealed (an estimate erring on the safe side)."""
        return len(data_json) + _SEAL_ROOM <= self.slot_bytes

    def write(self, record: JournalRecord, data_json: bytes) -> int | None:
        """Seal ``record`` into a free slot and sync it; the slot's index, or None when none is free or it does not fit.

        Raises :class:`JournalError` when the disk refuses the write (the slot
        is then free again and nothing was promised).
        """
        with self._lock:
            key = self._keys.pop() if self._keys else None
        buffers = seal_pieces(journal_payload(record, data_json), self._host_key, purpose=PURPOSE, key=key)
        length = sum(len(b) for b in buffers)
        if _LENGTH.size + length > self.slot_bytes:
            return None
        with self._lock:
            if self._closed or not self._free:
                return None
            index = self._free.pop()
            self._writing += 1
        try:
            try:
                _pwrite_all(self._fd, [_LENGTH.pack(length), *buffers], index * self.slot_bytes)
                os.fdatasync(self._fd)
            finally:
                with self._lock:
                    self._writing -= 1
                    self._idle.notify_all()
        except OSError as exc:
            self.release(index)
            raise JournalError(f"cannot write slot {index} of {self.path}: {exc.strerror or exc}") from exc
        return index

    def name(self, index: int) -> str:
        """``<file>#<index>``: how a gap or a repair entry names the slot."""
        return f"{self.path.name}#{index}"

    def release(self, index: int, *, sync: bool = False) -> None:
        """Free a slot whose entry is in the chain (its length zeroed, not synced: see the module doc), or
        whose entry was journaled again elsewhere (``sync``: the old copy must not outlive a crash)."""
        with self._lock:
            if self._closed:
                return
            try:
                os.pwrite(self._fd, bytes(_LENGTH.size), index * self.slot_bytes)
                if sync:
                    os.fdatasync(self._fd)
            except OSError:
                return  # it stays full: repair will find its entry already written (or superseded)
            self._free.append(index)
            missing = KEYS_AHEAD - len(self._keys)
        # Made outside the lock (a call taking a slot must not wait for it), by the thread that releases.
        made = [new_file_key(self._host_key, purpose=PURPOSE) for _ in range(missing)]
        with self._lock:
            self._keys.extend(made[:KEYS_AHEAD - len(self._keys)])

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
            # A write between taking its slot and its sync still uses the descriptor: closing it
            # then could hand the number to another file, which the write would land in.
            self._idle.wait_for(lambda: self._writing == 0)
            os.close(self._fd)
            if remove:
                self._unlink()

    def _unlink(self) -> None:
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def _pwrite_all(fd: int, buffers: list[bytes], offset: int) -> None:
    """``pwritev`` until every byte is written (a short write is possible for large writes)."""
    total = sum(len(b) for b in buffers)
    done = os.pwritev(fd, buffers, offset)
    if done < total:  # rare: finish the rest from one joined copy
        rest = b"".join(buffers)[done:]
        while rest:
            written = os.pwrite(fd, rest, offset + done)
            done += written
            rest = rest[written:]


def slot_files(directory: Path) -> list[Path]:
    """The slots files in a run's journal directory."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if _FILE_NAME.fullmatch(p.name))


def slot_blobs(path: Path) -> list[tuple[int, bytes, str | None]]:
    """Every full slot of a slots file, unopened: ``(index, sealed bytes, problem)`` in slot order.

    ``problem`` says why a slot's bytes cannot be a whole journal (a length
    that overruns the slot); the bytes are then empty. Raises
    :class:`JournalError` for a file that is not a slots file.
    """
    data = Path(path).read_bytes()
    size = _slot_size(path, len(data))
    found: list[tuple[int, bytes, str | None]] = []
    for index in range(len(data) // size):
        offset = index * size
        (length,) = _LENGTH.unpack_from(data, offset)
        if length == 0:
            continue
        if length > size - _LENGTH.size:
            found.append((index, b"", f"{Path(path).name}#{index}: its length {length} overruns the slot"))
            continue
        found.append((index, data[offset + _LENGTH.size: offset + _LENGTH.size + length], None))
    return found


def slot_count(path: Path) -> int:
    """How many slots a slots file has, full or free; raises :class:`JournalError` for a file that is not
    whole slots of the size its name gives (or not named as a slots file)."""
    length = Path(path).stat().st_size
    return length // _slot_size(path, length)


def read_slots(path: Path, host_key: HostKey) -> list[SlotRecord]:
    """Every full slot of a slots file, in slot order, opened (or with why it does not open)."""
    found: list[SlotRecord] = []
    for index, blob, problem in slot_blobs(path):
        where = f"{Path(path).name}#{index}"
        if problem is not None:
            found.append(SlotRecord(path, index, None, problem))
            continue
        try:
            found.append(SlotRecord(path, index, parse_journal(blob, host_key, where)))
        except JournalError as exc:
            foreign = isinstance(exc.__cause__, WrongHostKeyError)
            found.append(SlotRecord(path, index, None, str(exc), foreign=foreign))
    return found


def is_slots_file(path: Path) -> bool:
    """Whether ``path`` is named as a slots file (``slots-<token>-<KiB>k.bxs``)."""
    return _FILE_NAME.fullmatch(Path(path).name) is not None


def has_full_slot(path: Path) -> bool:
    """Whether any slot of the file holds a record (without opening it); True for a file that is not
    whole slots, so that a fold looks at it and names it."""
    try:
        data = Path(path).read_bytes()
        size = _slot_size(path, len(data))
    except (OSError, JournalError):
        return True
    return any(_LENGTH.unpack_from(data, offset)[0] for offset in range(0, len(data) - size + 1, size))


def _slot_size(path: Path, length: int) -> int:
    """The slot size the file's name gives, checked against the file's length (bytes)."""
    named = _FILE_NAME.fullmatch(Path(path).name)
    if named is None:
        raise JournalError(f"{Path(path).name} is not named as a slots file (slots-<token>-<KiB>k.bxs)")
    size = int(named.group(1)) * 1024
    if length % size:
        raise JournalError(f"{Path(path).name}: {length} bytes is not a whole number of {size}-byte slots")
    return size
