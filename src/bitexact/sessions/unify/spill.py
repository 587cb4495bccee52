"""One source's serialized events and ordering keys, spilled to disk past a small threshold.

Collection must hold every source until the last one is read (timestamps
interleave across sources), but not in memory: a ``SpillStore`` keeps the
compact JSONL line of each event together with its observed ordering key,
in a small in-memory buffer that moves to an anonymous temporary file once
it passes ``SPILL_THRESHOLD``.  Peak collection memory is therefore a
constant per source (at most the threshold, plus the read window while the
merged file is written) instead of the whole serialized output.

Record framing inside the store: ``<key>\\t<compact JSON line>\\n`` where
``<key>`` is the decimal ordering key (integer nanoseconds, any size, may
be negative) or ``-`` for an untimed event.  Compact JSON lines never hold
a raw tab or line break (both are escaped inside strings), so the first tab
and the next LF delimit a record exactly.

The temporary file is created with ``tempfile.TemporaryFile`` (on Linux an
``O_TMPFILE`` inode without a name), so nothing is left behind even if the
process dies; it is read back with ``pread`` so several iterations of one
store are independent.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import IO

from bitexact.sessions.unify.files import CollectionIOError

SPILL_THRESHOLD = 64 * 1024
"""Bytes a store keeps in memory before it moves them to its temporary file."""
READ_WINDOW = 64 * 1024
"""Bytes read from a temporary file at a time while the merged file is written."""
_UNTIMED = b"-"


class SpillStore:
    """Append-only ``(ordering key, serialized line)`` records, in the order appended."""

    def __init__(self, spill_dir: Path | None = None) -> None:
        self._dir = spill_dir
        self._buffer = bytearray()
        self._file: IO[bytes] | None = None
        self._spilled = 0
        """Bytes already written to the temporary file."""

    def append(self, key: int | None, line: bytes | bytearray) -> None:
        """Add one record; ``line`` is a compact JSON line ending with LF."""
        buffer = self._buffer
        buffer += _UNTIMED if key is None else b"%d" % key
        buffer += b"\t"
        buffer += line
        if len(buffer) >= SPILL_THRESHOLD:
            self._spill()

    @property
    def spilled(self) -> int:
        """Bytes moved to the temporary file so far (0 while the store fits in memory)."""
        return self._spilled

    def mark(self) -> int:
        """The byte position of the next record (for ``records(start=...)``)."""
        return self._spilled + len(self._buffer)

    def _spill(self) -> None:
        try:
            if self._file is None:
                directory = None if self._dir is None else str(self._dir)
                self._file = tempfile.TemporaryFile(prefix=".aw_session.spill.", dir=directory)
            self._file.write(self._buffer)
            # Flushed at once: ``records`` reads with ``pread``, which sees only what reached the OS.
            self._file.flush()
        except OSError as exc:
            where = self._dir if self._dir is not None else tempfile.gettempdir()
            raise CollectionIOError(f"cannot write temporary collection data in {where}: {exc.strerror}") from None
        self._spilled += len(self._buffer)
        self._buffer = bytearray()

    def records(self, start: int = 0) -> Iterator[tuple[int | None, bytes]]:
        """``(key, line)`` of every record from byte position ``start`` (a ``mark()``), in order.

        ``line`` keeps its LF.  Only a window of the temporary file is in
        memory at a time (more only for a single record longer than it).
        """
        if self._file is not None and start < self._spilled:
            yield from _parse_file(self._file.fileno(), start, self._spilled)
            start = self._spilled
        yield from _records(bytes(self._buffer[start - self._spilled:]))

    def close(self) -> None:
        """Release the temporary file (its data is gone: it never had a name)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._buffer = bytearray()
        self._spilled = 0


def _records(data: bytes) -> Generator[tuple[int | None, bytes], None, int]:
    """The complete records of ``data``; returns the offset of the unfinished rest."""
    at = 0
    find = data.find
    while True:
        end = find(b"\n", at)
        if end < 0:
            return at
        tab = find(b"\t", at, end)
        key = data[at:tab]
        yield (None if key == _UNTIMED else int(key)), data[tab + 1:end + 1]
        at = end + 1


def _parse_file(fd: int, start: int, end: int) -> Iterator[tuple[int | None, bytes]]:
    offset = start
    carry = b""
    while offset < end:
        # A record longer than the window grows the next read, so one long
        # record costs linear, not quadratic, copying.
        size = min(max(READ_WINDOW, 2 * len(carry)), end - offset)
        try:
            chunk = os.pread(fd, size, offset)
        except OSError as exc:
            raise CollectionIOError(f"cannot read temporary collection data: {exc.strerror}") from None
        if not chunk:
            raise CollectionIOError("cannot read temporary collection data: file truncated")
        offset += len(chunk)
        data = carry + chunk if carry else chunk
        consumed = yield from _records(data)
        carry = data[consumed:]
    if carry:
        raise CollectionIOError("cannot read temporary collection data: unterminated record")
