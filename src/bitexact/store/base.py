"""The store interface: what every backend (SQLite now, PostgreSQL later) offers.

The store persists what the evidence layer builds. It does not build or
re-hash entries; it guarantees that a run's chain only ever grows at its
head (``step`` and ``prev`` must name the current head) and that whatever an
append acknowledged is durable and whole.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol

from bitexact.errors import StaleHeadError, StoreError


class RecordError(StoreError, ValueError):
    """A record handed to the store is malformed; ``field`` names the offending field."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


COMPROMISED_KEY_ROLE = "recorder-compromised"
"""The ``role`` of a recorder key retired as compromised (``keys rotate --compromised``, ``keys
mark-compromised``). Kept beside the evidence as well as in ``keys/compromised.json``: restoring ``keys/``
from an older backup rolls the file back, not the store. Once set it stays (:meth:`Store.put_key`)."""


class StaleCheckpointError(StaleHeadError):
    """A checkpoint's ``seq`` is not the run's next one: another writer checkpointed first."""


class EntryNotFoundError(StoreError, LookupError):
    """The run exists but has no entry at that step."""


class WalKeptError(StoreError):
    """A value destroyed from the database may still be in the WAL: a reader's snapshot kept it from being
    emptied (:meth:`Store.flush_destroyed`); ``bitexact redact --resume`` finishes it."""


class ConflictError(StoreError):
    """A write would change something the store keeps immutable (a run id, a key, an entry's hash)."""


@dataclass(frozen=True)
class RunInfo:
    """One run as the store sees it: its size, head, seal and bookkeeping."""

    run_id: str
    steps: int
    head_hash: str
    sealed: bool
    started_at: str
    updated_at: str
    kinds: dict[str, int] = field(default_factory=dict)
    """Count of entries per kind."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Free metadata given at ``create_run`` (for example the run's name)."""


@dataclass(frozen=True, init=False)
class AppendResult:
    """What an acknowledged (durable) append returns."""

    step: int
    hash: str

    def __init__(self, step: int, hash: str) -> None:  # noqa: A002 - the field
        # Into the instance's dict, not through object.__setattr__ per field: one is made on every append.
        fields = self.__dict__
        fields["step"], fields["hash"] = step, hash


class PendingAppend(Protocol):
    """An append handed to :meth:`Store.submit`, durable once ``result()`` returns."""

    def done(self) -> bool:
        """True once the append was committed or refused."""

    def result(self, timeout: float | None = None) -> list[AppendResult]:
        """Wait (at most ``timeout`` seconds; ``TimeoutError`` past it) and return the results or raise."""


@dataclass(frozen=True)
class SettledAppend:
    """A :class:`PendingAppend` that is already settled (backends without group commit)."""

    results: list[AppendResult] | None = None
    error: StoreError | None = None

    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> list[AppendResult]:
        if self.error is not None:
            raise self.error
        return list(self.results or [])


class Store(ABC):
    """Persistent runs, entries, checkpoints, custody records and key metadata."""

    @abstractmethod
    def create_run(self, run_id: str, meta: dict[str, Any] | None = None) -> None:
        """Create an empty run (head GENESIS). Raises ConflictError when ``run_id`` exists."""

    @abstractmethod
    def append(
        self, run_id: str, entry: dict[str, Any], *, checkpoint: dict[str, Any] | None = None,
        encoded: bytes | None = None,
    ) -> AppendResult:
        """Append ``entry`` at the run's head, with ``checkpoint`` in the same transaction.

        ``encoded``: the entry's canonical bytes, as :meth:`append_many` takes them.

        ``entry["step"]`` must equal the run's step count and ``entry["prev"]``
        its head hash (GENESIS for step 0), otherwise ``StaleHeadError`` is
        raised and nothing is written. Durable when it returns. Raises
        ``RunNotFoundError`` for an unknown run and ``RecordError`` for a
        malformed entry or checkpoint.
        """

    @abstractmethod
    def append_many(
        self,
        run_id: str,
        entries: Sequence[dict[str, Any]],
        checkpoints: Sequence[dict[str, Any] | None] | None = None,
        *,
        encoded: Sequence[bytes | None] | None = None,
    ) -> list[AppendResult]:
        """Append consecutive entries (each with its optional checkpoint) in one transaction.

        All land or none do: the first entry must chain onto the head and each
        later one onto the one before it, else ``StaleHeadError`` and nothing is
        written. Durable when it returns. One writer with many entries ready
        (an import, a batch of relayed events) pays one commit for all of them.

        ``encoded`` gives, per entry, its canonical bytes when the caller has
        them already (``bitexact.recording``'s write path, from
        :func:`~bitexact.evidence.entry.encode_entry`), or None: they are
        stored as they are, trusted to be ``canonicalize(entry)``, instead of
        canonicalizing the entry again. Every other check runs as without them.
        """

    def submit(
        self,
        run_id: str,
        entries: Sequence[dict[str, Any]],
        checkpoints: Sequence[dict[str, Any] | None] | None = None,
        *,
        encoded: Sequence[bytes | None] | None = None,
    ) -> PendingAppend:
        """Queue ``append_many(run_id, entries, checkpoints, encoded=encoded)`` and return at once.

        For a pipelined writer (a connection relaying a stream of events)
        that keeps several appends in flight: ``pending.result()`` waits until
        they are durable and returns what ``append_many`` would, or raises its
        error. Submissions commit in the order they were made, so a writer
        may submit the next entries before the earlier ones land; if one
        fails, the ones chained after it fail with ``StaleHeadError``. An
        entry is acknowledged only once its ``result()`` returned. Shape
        errors (``RecordError``) are raised here, before anything is queued.

        This default appends at once and returns the settled outcome; a
        backend with group commit overrides it to overlap the writer's work
        with the commit.
        """
        try:
            return SettledAppend(self.append_many(run_id, entries, checkpoints, encoded=encoded))
        except RecordError:
            raise
        except StoreError as exc:
            return SettledAppend(error=exc)

    @abstractmethod
    def head(self, run_id: str) -> tuple[int, str]:
        """``(steps, head_hash)``; the head of an empty run is GENESIS."""

    @abstractmethod
    def run(self, run_id: str) -> RunInfo:
        """The run's summary. Raises ``RunNotFoundError``."""

    @abstractmethod
    def runs(self) -> list[RunInfo]:
        """Every run, newest first."""

    @abstractmethod
    def entries(self, run_id: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """Entries ``start <= step < stop`` in step order, streamed in constant memory.

        ``stop=None`` means the head as it is when iteration starts.
        """

    def entries_of_kind(self, run_id: str, kind: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """The entries of ``kind`` among steps ``start <= step < stop``, in step order.

        A backend that stores each entry's kind beside it reads no other entry's body: one entry that no
        longer reads back (a damaged row) then hides nothing of another kind. This default filters
        :meth:`entries`.
        """
        return (entry for entry in self.entries(run_id, start, stop) if entry.get("kind") == kind)

    @abstractmethod
    def entry(self, run_id: str, step: int) -> dict[str, Any]:
        """One entry. Raises ``RunNotFoundError`` or ``EntryNotFoundError``."""

    @abstractmethod
    def checkpoints(self, run_id: str) -> list[dict[str, Any]]:
        """The run's checkpoints in ``seq`` order."""

    def iter_checkpoints(self, run_id: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """Checkpoints ``start <= seq < stop`` in ``seq`` order; raises ``RunNotFoundError`` before iterating.

        ``stop=None`` means every checkpoint stored when the call is made. A
        backend that can read in pages streams them in constant memory (a
        million-entry run carries thousands); this default reads the list.
        """
        return iter(self.checkpoints(run_id)[start:stop])

    @abstractmethod
    def add_checkpoint(self, run_id: str, checkpoint: dict[str, Any]) -> None:
        """Store a checkpoint minted apart from an append; its ``seq`` must be the next one."""

    @abstractmethod
    def rewrite_entry(self, run_id: str, step: int, entry: dict[str, Any]) -> None:
        """Replace ``data``, ``salts`` and ``redacted`` of a stored entry (store redaction, step 2).

        Everything the chain hashes, and ``hash`` itself, must be unchanged;
        otherwise ``ConflictError`` names the field and nothing is written.
        A ``run_meta`` entry's redacted top-level keys leave the run's
        ``meta`` too (its name), so no copy of a destroyed value stays.
        """

    def flush_destroyed(self) -> None:
        """Leave no copy of a value a rewrite destroyed in the backend's own logs (SQLite: its WAL).

        :meth:`rewrite_entry` does this itself; this finishes one it could
        not (``bitexact redact --resume``). A backend without such a log has
        nothing to do.
        """

    @abstractmethod
    def add_custody(self, run_id: str, record: dict[str, Any]) -> int:
        """Append a custody record (who opened or tested what); returns its sequence number."""

    @abstractmethod
    def custody(self, run_id: str) -> list[dict[str, Any]]:
        """The run's custody records in sequence order."""

    @abstractmethod
    def put_key(
        self,
        key_id: str,
        public_key: str,
        role: str,
        created_at: str,
        retired_at: str | None = None,
        compromised_at: str | None = None,
    ) -> None:
        """Record key metadata, or update ``role`` and ``retired_at`` of a known key.

        ``compromised_at`` is when the key was retired as compromised; a key
        keeps the first one it was given (a mark made again, after ``keys/``
        was restored from a backup older than it, keeps the first date), and
        :meth:`keys` lists it only where it is set.

        The key id must derive from the public key. A known key keeps the
        ``created_at`` it was first recorded with, and a retired key stays
        retired (``ConflictError`` otherwise). A key recorded with the role
        :data:`COMPROMISED_KEY_ROLE` keeps it whatever role a later call names:
        a rotation after ``keys/`` was restored from an older backup must not
        clear the store's record that the key leaked (the SQLite store's
        trigger ``keys_compromised_stays`` holds it against any writer).
        """

    @abstractmethod
    def keys(self) -> list[dict[str, Any]]:
        """All key metadata, oldest first."""

    def integrity_problems(self, limit: int = 10) -> list[str]:
        """What a check of the store's own structure finds wrong (at most ``limit`` lines), or ``[]``; a store
        with no such check (or nothing wrong) says ``[]``. ``bitexact health`` reports them."""
        return []

    def write_lock_kept(self, seconds: float) -> bool:
        """True when something other than a BitExact writer kept the store's own write lock for ``seconds``
        (a sqlite3 shell or a backup tool in a write transaction): every write then waits its lock timeout
        and fails. Nothing is written. A store with no such lock says False."""
        return False

    def wal_uncopied(self) -> tuple[int, int] | None:
        """``(frames, page_size)``: the write-ahead log's frames a checkpoint tried now could not copy into
        the database, because a reader's snapshot still needs them (a long read transaction: SQLite cannot
        restart the log, which grows by everything written meanwhile). None when that is not known (a
        checkpoint already running, a store with no such log). The database's content is unchanged."""
        return None

    def check_intact(self) -> None:
        """Raise :class:`~bitexact.errors.StoreDamagedError` when :meth:`integrity_problems` finds the store
        damaged. Called once before a command (or a process's first run) writes: a write lands on the pages it
        touches alone, so one onto a store whose other pages do not read back succeeded, while every read
        of the run then failed. A store with no such check passes."""

    def trust_intact(self) -> None:
        """Skip :meth:`check_intact` for this store object: the SDK's stores, whose process would otherwise
        read the whole file before its first run (about 0.5 s per GB, on every agent's start). Damage there is
        found by what reads it (an append meeting a damaged page fails as ``StoreDamagedError``, declared as a
        gap) and reported by ``bitexact health``; the operator's commands still check before they write."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; later calls raise ``StoreError``."""

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
