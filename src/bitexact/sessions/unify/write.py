"""Compact JSONL serialization and atomic publication of ``aw_session.jsonl`` (T-UAS-054, T-UAS-059).

Each record is one unindented JSON object on one physical line, keys in the
writer's order, no whitespace outside strings, embedded line breaks escaped,
and an LF after every record including the last.  Output is written to a
temporary file in the destination directory, flushed to disk and renamed
over the destination, so a reader never sees a partial file; the
destination itself must not be a symbolic link, nor anything but a regular
file (the rename would replace a device or a named pipe).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from bitexact.private_files import is_special, write_whole
from bitexact.sessions.unify.files import CollectionIOError, SymlinkRefusedError


def _stdlib_line(record: Any) -> bytes:
    # orjson refuses lone surrogates and integers past 64 bits; the stdlib
    # writes them as valid ASCII-escaped JSON instead.
    return json.dumps(record, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def record_line(record: Any) -> bytes:
    """One compact JSON line (without its LF)."""
    try:
        return orjson.dumps(record)
    except (TypeError, orjson.JSONEncodeError):
        return _stdlib_line(record)


def event_line(record: Any) -> bytes:
    """One record's compact line with its LF."""
    try:
        return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        return _stdlib_line(record) + b"\n"


def _lines(records: Iterable[Any]) -> Iterable[bytes | memoryview]:
    """Each record's compact line with its LF (``bytes``/``memoryview`` items are serialized lines)."""
    for record in records:
        yield record if isinstance(record, (bytes, memoryview)) else event_line(record)


def serialize(records: Iterable[Any]) -> bytes:
    """The compact JSONL bytes of ``records``."""
    return b"".join(_lines(records))


_FLUSH_BYTES = 256 * 1024


def write_records_atomic(out: Path, records: Iterable[Any]) -> tuple[int, int]:
    """Serialize ``records`` straight into an atomic replacement of ``out``.

    Lines are appended to one ~256 KiB buffer that is written and replaced
    when full, so neither the serialized file nor a list of its lines ever
    sits in memory.  Returns ``(records, bytes)`` written.
    """
    counts = [0, 0]

    def chunks() -> Iterable[bytes | bytearray]:
        batch = bytearray()
        for record in records:
            # _lines inline (one generator less per record): most records are already serialized lines.
            batch += record if isinstance(record, (bytes, memoryview)) else event_line(record)
            counts[0] += 1
            if len(batch) >= _FLUSH_BYTES:
                counts[1] += len(batch)
                yield batch
                batch = bytearray()
        counts[1] += len(batch)
        yield batch

    write_atomic(out, chunks())
    return counts[0], counts[1]


def write_atomic(out: Path, data: bytes | Iterable[bytes | bytearray]) -> None:
    """Replace ``out`` with ``data`` (bytes or byte chunks) atomically; never follow a link at ``out``."""
    out = Path(out)
    if out.is_symlink():
        raise SymlinkRefusedError(f"{out}: output path is a symbolic link; refusing to write")
    if is_special(out):
        raise CollectionIOError(f"cannot write {out}: not a regular file (a device or a pipe would be replaced by"
                                " the file); name a file")
    try:
        write_whole(out, data, strict_directory=False)  # owner-only (0600); written again by the next collection
    except OSError as exc:
        raise CollectionIOError(f"cannot write {out}: {exc.strerror}") from None


def remove_stale(out: Path) -> None:
    """Remove a previous output after a failed collection so it cannot be uploaded."""
    out = Path(out)
    try:
        if out.is_symlink() or not out.exists() or is_special(out):  # never a device or a pipe named as -o
            return
        out.unlink()
    except OSError:
        pass
