"""The run's failures record: every recording failure of a non-strict run, declared, never raised.

A non-strict run never changes what the agent sends, receives or raises. A
write that fails becomes a :class:`Gap`: appended (and fsynced) to the run's
failures record ``<data directory>/failures/<run_id>.jsonl``, declared in
the chain as a ``marker`` carrying ``gap`` when the chain still takes
writes, and logged as one warning line. Strict mode raises
:class:`~bitexact.sdk.errors.RecordingError` instead.

Neither the record nor the log line quotes the agent's data: a gap names the
cause, the entry kind, its place in record order, its journal and the
exception type (with the message only for storage, journal, setting and
policy errors, which speak of files, settings and the store, not of values).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bitexact.canon import canonicalize
from bitexact.errors import KeyMaterialError, StoreError
from bitexact.evidence.timefmt import now_iso

if TYPE_CHECKING:
    from bitexact.recording import RunWriter

logger: Final = logging.getLogger("bitexact.sdk")

STORAGE_UNAVAILABLE: Final = "storage_unavailable"
INVALID_ARGUMENT: Final = "invalid_argument"
RECORDING_ERROR: Final = "recording_error"


@dataclass(frozen=True)
class Gap:
    """One declared hole in what a run recorded."""

    cause: str
    detail: str
    kind: str | None = None
    seq: int | None = None
    journal: str | None = None
    fields: dict[str, str] | None = None
    at: str = field(default_factory=now_iso)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"cause": self.cause, "where": "sdk", "detail": self.detail, "at": self.at}
        for name in ("kind", "seq", "journal", "fields"):
            value = getattr(self, name)
            if value is not None:
                doc[name] = value
        return doc


def describe(exc: BaseException) -> str:
    """An exception as a gap states it: its type, and its message only where that holds no values."""
    from bitexact.capture.errors import CaptureInputError, PolicyError
    from bitexact.config import SettingError
    from bitexact.crypto.hostkey import HostKeyError
    from bitexact.recording.journal import JournalError

    # A host key or recorder key error names the file and what is wrong with it, never the key. A policy
    # error is raised only loading the policy, before any agent data: it names the setting or policy field
    # and the file. A capture input error names the shape the data has (nested too deep, not an object),
    # never a value.
    if isinstance(exc, (StoreError, OSError, JournalError, SettingError, HostKeyError, PolicyError,
                        KeyMaterialError, CaptureInputError)):
        return f"{type(exc).__name__}: {exc}"
    public = getattr(exc, "public", None)  # why, in words that quote none of the data (errors.stated)
    if isinstance(public, str):
        return f"{type(exc).__name__}: {public}"
    return type(exc).__name__


def cause_of(exc: BaseException) -> str:
    """The cause word for a failed write."""
    from bitexact.config import SettingError
    from bitexact.recording.journal import JournalError
    from bitexact.store import ConflictError, RecordError

    if isinstance(exc, (RecordError, ConflictError)):  # the store refused what it was given (a run id taken)
        return INVALID_ARGUMENT
    if isinstance(exc, SettingError):  # a setting nobody can use, the store's own (BITEXACT_LOCK_TIMEOUT) too
        return INVALID_ARGUMENT
    if isinstance(exc, (StoreError, OSError, JournalError)):
        return STORAGE_UNAVAILABLE
    if isinstance(exc, (ValueError, TypeError)):
        return INVALID_ARGUMENT
    return RECORDING_ERROR


RETRY_SECONDS: Final[float] = 1.0
"""How long a failures record whose write failed waits before a later gap tries again (the run's exit always does)."""


class FailureLog:
    """The failures record of one run: in memory, on disk, and (when it can be) in the chain."""

    def __init__(self, run_id: str | None, home: Path | None) -> None:
        self.run_id = run_id
        self.path = home / "failures" / f"{run_id}.jsonl" if (home is not None and run_id) else None
        self._gaps: list[Gap] = []
        self._lock = threading.Lock()
        # What could not be written when it was declared (a full disk, a locked store): the record's
        # lines and the chain's markers, written, in order, as soon as they can be (flush), and at the
        # latest before the run seals; a run sealed with one still missing would claim it complete.
        self._unrecorded: list[Gap] = []
        self._unmarked: list[dict[str, Any]] = []
        # After a failed write of the record, the next try waits this long: a disk full for minutes under many
        # calls would otherwise be offered every pending line again with each new gap.
        self._retry_at = 0.0

    @property
    def gaps(self) -> list[Gap]:
        with self._lock:
            return list(self._gaps)

    def declare(self, gap: Gap, writer: RunWriter | None = None,
                marker: Callable[[dict[str, Any]], None] | None = None) -> Gap:
        """Keep ``gap``: in memory, in the failures record, in the chain when it takes writes, in the log.

        ``marker``, when given, takes the chain's marker instead of ``writer``
        (the run queues it behind the entries recorded before the gap).
        """
        from bitexact.sdk.active import busy

        # The marker's salts and the log line's clock are the recorder's reads: under
        # capture_nondeterminism they must not be recorded as the agent's.
        with busy():
            return self._declare(gap, writer, marker)

    def _declare(self, gap: Gap, writer: RunWriter | None,
                 marker: Callable[[dict[str, Any]], None] | None = None) -> Gap:
        with self._lock:
            self._gaps.append(gap)
            self._unrecorded.append(gap)
            self._write_record()
        data = {"note": f"recording gap: {gap.cause}", "gap": gap.to_json()}
        if marker is not None:
            marker(data)  # queued behind the entries before it; a failure comes back through unmarked()
        elif writer is not None and not writer.sealed:
            self.unmarked(data)
            self.flush(writer, force=False)  # this marker, after any the chain refused before (a disk that was full)
        # A record refused before it was given a number (made after the run ended) is named by its kind alone.
        what = (f" ({gap.kind} #{gap.seq})" if gap.seq is not None else f" ({gap.kind})") if gap.kind else ""
        where = f"; journal {gap.journal} kept for `bitexact repair`" if gap.journal else ""
        logger.warning("bitexact: run %s: recording gap %s%s: %s%s", self.run_id or "(not started)", gap.cause,
                       what, gap.detail, where)
        return gap

    def unmarked(self, data: dict[str, Any]) -> None:
        """Keep a gap marker the chain did not take, to append when it takes writes again (:meth:`flush`)."""
        with self._lock:
            self._unmarked.append(data)

    @property
    def pending(self) -> int:
        """Gaps or markers declared but not yet written where they last: the record, the chain."""
        with self._lock:
            return len(self._unrecorded) + len(self._unmarked)

    def flush(self, writer: RunWriter | None, *, force: bool = True) -> bool:
        """Write what could not be written when declared: the record's lines, then the chain's markers (each
        names its record's ``seq``, so one written late still says where the gap is). True when nothing is
        left; what still fails stays for the next try. ``force=False``: the record is not tried again within
        :data:`RETRY_SECONDS` of a failed write (a gap declared meanwhile)."""
        with self._lock:
            self._write_record(force=force)
            while self._unmarked and writer is not None and not writer.sealed:
                try:
                    writer.append_own("marker", self._unmarked[0])
                except Exception:  # noqa: BLE001 - the chain still takes no writes: tried again later
                    break
                self._unmarked.pop(0)
            return not self._unrecorded and not self._unmarked

    def _write_record(self, *, force: bool = False) -> None:
        """Append every line of the failures record not written yet, in order, in one write and one fsync.
        Called with the lock held. A write cut short (a disk that filled) is cut back to the last whole line.
        Within :data:`RETRY_SECONDS` of a failed write it waits for a later gap, unless ``force``."""
        if self.path is None or not self._unrecorded or (not force and time.monotonic() < self._retry_at):
            return
        lines = b"".join(canonicalize(gap.to_json()) + b"\n" for gap in self._unrecorded)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # O_NONBLOCK: a FIFO in the record's place fails the open (ENXIO) instead of hanging the writer.
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
        except OSError:
            self._retry_at = time.monotonic() + RETRY_SECONDS
            return  # kept: written with a later gap, or before the seal
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a device (a link to /dev/null) would swallow the gaps
            os.close(fd)
            self._retry_at = time.monotonic() + RETRY_SECONDS
            return
        try:
            size = os.fstat(fd).st_size
            try:
                written = os.write(fd, lines)
                if written != len(lines):
                    raise OSError(errno.ENOSPC, "the failures record's write was cut short")
                os.fsync(fd)
            except OSError:
                try:
                    os.ftruncate(fd, size)  # never half a line: a reader would refuse the record
                except OSError:
                    pass
                self._retry_at = time.monotonic() + RETRY_SECONDS
                return
            self._unrecorded.clear()
        finally:
            os.close(fd)


def read_failures(home: Path, run_id: str) -> list[dict[str, Any]]:
    """The failures record of ``run_id`` as written (empty when the run had none)."""
    from bitexact.canon import loads

    path = Path(home) / "failures" / f"{run_id}.jsonl"
    if not path.exists():
        return []
    return [loads(line) for line in path.read_bytes().splitlines() if line.strip()]
