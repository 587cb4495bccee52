"""The SQLite schema and the connection settings every BitExact connection uses.

Entries are kept as canonical JSON bytes next to the columns the store
indexes. A run's row holds its head; appends check and move it inside one
``BEGIN IMMEDIATE`` transaction, which is what keeps a chain from forking.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Final

from bitexact.errors import StoreError

SCHEMA_VERSION: Final[int] = 3
BUSY_TIMEOUT_MS: Final[int] = 30_000
CACHE_KIB: Final[int] = 32_000
"""Page cache per connection. SQLite's default (2 MB) evicts index pages a
batch touches again moments later, and re-reads them from the WAL."""
CHECKPOINT_PAGES: Final[int] = 4_000
"""WAL pages (16 MiB) before a commit runs SQLite's automatic checkpoint, on
connections that rely on it (readers, tools, a store whose background
checkpointer could not start). A store's writer turns it off and leaves
checkpoints to its background thread (walcheckpoint.py), so that no append
waits for one."""

COMPROMISE_TRIGGER: Final[str] = "keys_compromised_stays"
"""The trigger that keeps a recorder key's role ``recorder-compromised`` once set (any writer, any version)."""

_TABLES: Final[tuple[str, ...]] = (
    # id orders runs by creation (newest first) even when clocks tie. kinds
    # (canonical JSON, kind -> count) lives in the row the append already
    # rewrites, so counting costs no extra statement or page.
    """CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        steps INTEGER NOT NULL DEFAULT 0,
        head_hash TEXT NOT NULL,
        sealed INTEGER NOT NULL DEFAULT 0,
        checkpoints INTEGER NOT NULL DEFAULT 0,
        custody INTEGER NOT NULL DEFAULT 0,
        kinds BLOB NOT NULL DEFAULT '{}',
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        meta BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS entries (
        run_id TEXT NOT NULL,
        step INTEGER NOT NULL,
        kind TEXT NOT NULL,
        prov TEXT NOT NULL,
        ts TEXT NOT NULL,
        hash TEXT NOT NULL,
        body BLOB NOT NULL,
        UNIQUE (run_id, step)
    )""",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        steps INTEGER NOT NULL,
        head_hash TEXT NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (run_id, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS custody (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        body BLOB NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS keys (
        key_id TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL,
        retired_at TEXT,
        compromised_at TEXT
    )""",
)

_UPGRADES: Final[tuple[str, ...]] = (
    # Version 2 drops version 1's index on entries.hash: no query used it,
    # and its random leaf pages were a third of every commit's WAL frames.
    "DROP INDEX IF EXISTS entries_by_hash",
    # Version 3 moves a run's head in SQL. An append is a row inserted into
    # the view `appends`: its trigger refuses the row unless it extends the
    # run's head (same step count, prev = head hash), stores the entry and
    # moves the head, kind counts included. A batch of appends is then one
    # INSERT statement that SQLite runs and commits on its own, outside
    # Python's interpreter lock (sqlite.py, _commit_fast).
    """CREATE VIEW IF NOT EXISTS appends AS
        SELECT run_id, step, '' AS prev, kind, prov, ts, hash, body, '' AS at FROM entries WHERE 0""",
    """CREATE TRIGGER IF NOT EXISTS appends_extend_head INSTEAD OF INSERT ON appends
    BEGIN
        SELECT RAISE(ABORT, 'bitexact: the append does not extend the run head')
            WHERE NOT EXISTS (SELECT 1 FROM runs
                              WHERE run_id = NEW.run_id AND steps = NEW.step AND head_hash = NEW.prev);
        INSERT INTO entries (run_id, step, kind, prov, ts, hash, body)
            VALUES (NEW.run_id, NEW.step, NEW.kind, NEW.prov, NEW.ts, NEW.hash, NEW.body);
        UPDATE runs SET steps = NEW.step + 1, head_hash = NEW.hash,
            sealed = sealed OR NEW.kind = 'run_end',
            kinds = json_patch(CAST(kinds AS TEXT), json_object(NEW.kind,
                coalesce((SELECT value FROM json_each(CAST(runs.kinds AS TEXT)) WHERE key = NEW.kind), 0) + 1)),
            updated_at = NEW.at
            WHERE run_id = NEW.run_id;
    END""",
    # Versions 1 and 2 stored kinds as canonical JSON in a BLOB; SQLite 3.45 and later read a
    # BLOB given to a JSON function as its binary JSONB format, so the text is made TEXT.
    "UPDATE runs SET kinds = CAST(kinds AS TEXT) WHERE typeof(kinds) = 'blob'",
    # A stored checkpoint moves the run's checkpoint count with it.
    """CREATE TRIGGER IF NOT EXISTS checkpoints_count AFTER INSERT ON checkpoints
    BEGIN
        UPDATE runs SET checkpoints = NEW.seq + 1 WHERE run_id = NEW.run_id;
    END""",
    # A recorder key marked compromised stays so, whoever updates its row: a BitExact before session 21
    # rotating a leaked key that keys/ restored from an older backup made current again set its role back to
    # `recorder`, and the store's mark (the one that outlives such a restore) was gone. The role is put back
    # in the same statement (SQLite's triggers do not recurse by default, nor would this one: the WHEN no
    # longer holds), so that writer's rotation still succeeds. Added to version 3 stores too (needs_migration).
    f"""CREATE TRIGGER IF NOT EXISTS {COMPROMISE_TRIGGER} AFTER UPDATE OF role ON keys
    WHEN OLD.role = 'recorder-compromised' AND NEW.role IS NOT 'recorder-compromised'
    BEGIN
        UPDATE keys SET role = 'recorder-compromised' WHERE key_id = NEW.key_id;
    END""",
)
"""Run after the tables, on a new or an older database alike (each is idempotent)."""


def connect(path: str) -> sqlite3.Connection:
    """A connection in WAL mode with ``synchronous=FULL`` and a busy timeout.

    ``isolation_level=None`` leaves transactions to us: the store issues
    ``BEGIN IMMEDIATE`` itself, so the head is read under the write lock.
    """
    conn = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False,
        # One INSERT shape per batch size (up to 128 rows, sqlite.py) beside the other statements.
        cached_statements=512,
    )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    try:
        _refuse_foreign(conn)  # before WAL mode, which would already change another application's file
    except BaseException:
        conn.close()
        raise
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        conn.close()
        raise StoreError(f"{path}: SQLite refused WAL mode (got {mode!r}); put BITEXACT_HOME on a local disk")
    # FULL: the WAL is fsync'd at every commit, so an acknowledged append
    # survives power loss, not only a killed process.
    conn.execute("PRAGMA synchronous = FULL")
    # Redaction destroys values: freed cells and pages are zeroed, not left for
    # a disk reader to find (some SQLite builds default to this; say it).
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
    return conn


def needs_migration(conn: sqlite3.Connection) -> bool:
    """True when the tables must be made or upgraded; refuse a database written by a newer BitExact.

    A read, so a store already at this version opens without the write lock:
    reading commands work while another process holds it. A version 3 store
    without the trigger that keeps a compromise mark or the keys' column
    ``compromised_at`` (one made before session 22) is upgraded in place, its
    version unchanged: a BitExact before it still opens the store (a new
    version would lock every older agent out of it; its statements name their
    columns), and the trigger holds against its writes too.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"this store has schema version {version}, newer than this BitExact understands "
            f"({SCHEMA_VERSION}); upgrade bitexact"
        )
    if version < SCHEMA_VERSION:
        return True
    column, trigger = conn.execute(  # one statement: it runs at every open
        "SELECT (SELECT count(*) FROM pragma_table_info('keys') WHERE name = 'compromised_at'),"
        " (SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?)", (COMPROMISE_TRIGGER,)).fetchone()
    return not (column and trigger)


def _has_compromise_column(conn: sqlite3.Connection) -> bool:
    """Whether the keys table has ``compromised_at`` (a store made before session 22 has not)."""
    return conn.execute("SELECT 1 FROM pragma_table_info('keys') WHERE name = 'compromised_at'").fetchone() is not None


def why_unopenable(path: Path, exc: BaseException | None = None) -> str:
    """What the directory holding the store says of a store that did not open, where SQLite's own words
    ("unable to open database file", "disk I/O error") do not: a read-only file system, a directory this
    user cannot write, a full disk. SQLite writes the store's -wal and -shm files even to read it. And what
    is in the store's place, when it is no file: a symlink to nothing ("No such file or directory" named the
    link alone), a directory ("unable to open database file"). And, for ``exc`` "database is locked" at
    the open, what holds it: a program outside BitExact (it waited 5 s and named nothing)."""
    if isinstance(exc, sqlite3.OperationalError) and getattr(exc, "sqlite_errorcode", 0) & 0xFF == _SQLITE_BUSY:
        return (f" (another program holds the file locked: a sqlite3 shell in exclusive locking mode, or one in"
                f" the middle of a write; `fuser -v {path}` lists the processes that have it open: end it)")
    if os.path.islink(path) and not os.path.exists(path):
        return (f" (it is a symlink to {os.readlink(path)}, which does not exist: an unmounted volume? mount or"
                " restore what it names)")
    if os.path.isdir(path):
        return f" (it is a directory, not the store's file: move it aside, `mv {path} {path}.aside`)"
    directory = path.parent
    try:
        fs = os.statvfs(directory)
    except OSError:
        return ""
    copy = f"; copy the data directory to a writable place (cp -a {directory} DIR) and read the copy with --home DIR"
    if fs.f_flag & os.ST_RDONLY:
        return f" (the file system holding {directory} is mounted read-only, and SQLite writes beside a store even" \
               f" to read it{copy})"
    if not os.access(directory, os.W_OK):
        return f" ({directory} is not writable by this user, and SQLite writes beside a store even to read it{copy})"
    if fs.f_bavail == 0:
        return f" (the disk holding {directory} is full)"
    return ""


_SQLITE_BUSY: Final[int] = 5
"""SQLite's primary result code for a lock another connection holds."""
_READONLY_ROLLBACK: Final[int] = 776
"""SQLITE_READONLY_ROLLBACK: a read-only connection met a hot journal it may not roll back."""


def refuse_foreign_file(path: str) -> None:
    """Refuse an existing file that is another application's database (or no database), read-only:
    before the store tightens its mode or makes its lock file beside it, so a refused file is left
    exactly as it was."""
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return  # not readable as a database here: the store's own open reports why
    try:
        _refuse_foreign(conn)
        needs_migration(conn)  # a newer BitExact's store is refused here too, before anything is changed
    except sqlite3.DatabaseError as exc:  # not a database at all: left as it is too
        if getattr(exc, "sqlite_errorcode", None) == _READONLY_ROLLBACK:
            # A hot journal: a write was killed mid-way (a first open's switch to WAL mode, when a `keys init`
            # or the first recording was killed). Only a read-write open rolls it back; refusing here would
            # refuse the store for ever. The store's own open rolls it back, then checks the file again.
            return
        raise StoreError(f"cannot open the store at {path}: {exc}{why_unopenable(Path(path), exc)}") from exc
    finally:
        conn.close()


def _refuse_foreign(conn: sqlite3.Connection) -> None:
    """Refuse a database of another application found where the store goes: making BitExact's tables in
    it would change a file that is not ours (and `bitexact health` would then call it a healthy store)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    names = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")]
    if version != 0 and (version > SCHEMA_VERSION or "runs" in names):
        return  # a BitExact store (every version has its runs table), or one from a newer BitExact
    # Version 0, or a version of another application's own (many set user_version): a file with no
    # runs table that says version 1 to 3 is not one of ours, and upgrading it would change it. Nor is
    # a version 0 file with any table at all, even one named as ours (`keys`, `entries`): a store's
    # tables and its version are made in one transaction.
    foreign = sorted(name for name in names if not name.startswith("sqlite_"))
    if foreign:
        raise StoreError(
            f"this SQLite database is not a BitExact store: it holds {', '.join(foreign[:5])}"
            f"{' ...' if len(foreign) > 5 else ''}; BitExact leaves it as it is"
        )


def migrate(conn: sqlite3.Connection) -> None:
    """Create the tables if needed; refuse a database written by a newer BitExact. Call under the write lock."""
    if not needs_migration(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in _TABLES:
            conn.execute(statement)
        if not _has_compromise_column(conn):  # added in place (no rewrite); older BitExacts name their columns
            conn.execute("ALTER TABLE keys ADD COLUMN compromised_at TEXT")
        for statement in _UPGRADES:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
