"""Store edges (the sixth review): each test pins one behaviour that used to break.

Real files, real SQLite, and the CLI as a real subprocess; nothing depends on machine speed.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bitexact.errors import RunNotFoundError, StoreError
from bitexact.store import SQLiteStore

BITEXACT = [str(Path(sys.executable).parent / "bitexact")]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "s.db")
    yield s
    s.close()


def _cli(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "BITEXACT_HOME": str(home)}
    return subprocess.run([*BITEXACT, *args], env=env, capture_output=True, timeout=60, check=False)


# -- 1. a run id no store can hold, asked for by a reading call ----------------


@pytest.mark.parametrize("call", ["head", "run", "checkpoints", "custody", "entries", "entry"])
def test_a_run_id_sqlite_cannot_bind_is_an_unknown_run_when_read(store: SQLiteStore, call: str) -> None:
    """A lone surrogate (what a non-UTF-8 command-line argument decodes to) raised a raw UnicodeEncodeError."""
    run_id = "run-\udcff"
    with pytest.raises(RunNotFoundError):
        if call == "entries":
            list(store.entries(run_id))
        elif call == "entry":
            store.entry(run_id, 0)
        else:
            getattr(store, call)(run_id)


@pytest.mark.parametrize("command", ["show", "verify"])
def test_a_non_utf8_run_argument_is_no_traceback(tmp_path: Path, command: str) -> None:
    """`bitexact show|verify $'\\xff'` on a store printed a Python traceback (UnicodeEncodeError in Store.run)."""
    home = tmp_path / "home"
    with SQLiteStore(_db(home)) as s:
        s.create_run("run-1")
    done = _cli(home, command, b"run-\xff")
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode in (1, 2), done
    assert b"run-" in done.stdout + done.stderr


def _db(home: Path) -> Path:
    home.mkdir(mode=0o700, exist_ok=True)
    return home / "bitexact.db"


# -- 2. another application's database that sets a schema version of its own ------


@pytest.mark.parametrize("version", [1, 2, 3])
def test_another_applications_database_with_a_user_version_is_left_alone(tmp_path: Path, version: int) -> None:
    """docs/store.md "Another application's database is left alone": one that sets PRAGMA user_version
    (many do) to 1 or 2 got BitExact's tables made in it, and at 3 opened as a store with no tables."""
    db = tmp_path / "bitexact.db"
    raw = sqlite3.connect(db)
    raw.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    raw.execute(f"PRAGMA user_version = {version}")
    raw.commit()
    raw.close()
    os.chmod(db, 0o644)
    before = db.read_bytes()
    with pytest.raises(StoreError, match="not a BitExact store: it holds customers"):
        SQLiteStore(db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bitexact.db"]
    assert stat.S_IMODE(db.stat().st_mode) == 0o644


# -- 3. a loosened database's companions ------------------------------------------


def test_tightening_a_loosened_database_tightens_its_wal_and_shm_too(tmp_path: Path) -> None:
    """open_store: "the database file is 0600 (its -wal, -shm and .lock companions too)". A database
    restored as 0644 (a `cp` from a backup) was tightened, but the -wal and -shm SQLite had already made
    beside it at 0644 stayed readable by everyone, and every new entry was written into that -wal."""
    home = tmp_path / "home"
    db = _db(home)
    SQLiteStore(db).close()
    os.chmod(db, 0o644)
    # Another process's connection (or files a kill -9 left): SQLite made -wal/-shm with the db's mode,
    # and the -wal holds frames (SQLite itself re-modes only an empty one).
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("INSERT INTO runs (run_id, head_hash, started_at, updated_at, meta) VALUES ('a', 'h', 't', 't', '{}')")
    try:
        loose = {name: stat.S_IMODE((home / name).stat().st_mode) for name in ("bitexact.db-wal", "bitexact.db-shm")}
        assert loose == {"bitexact.db-wal": 0o644, "bitexact.db-shm": 0o644}
        with SQLiteStore(db) as store:
            store.create_run("run-1")
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in home.iterdir()}
    finally:
        other.close()
    assert modes == dict.fromkeys(
        ["bitexact.db", "bitexact.db-wal", "bitexact.db-shm", "bitexact.db.lock"], 0o600), modes


def test_a_store_of_a_newer_bitexact_is_refused_before_anything_is_changed(tmp_path: Path) -> None:
    """A store written by a newer BitExact was refused only after its mode was tightened, its lock file made
    and its journal mode switched to WAL: a refused file must be left exactly as it was."""
    path = tmp_path / "bitexact.db"
    SQLiteStore(path).close()
    for leftover in (tmp_path / "bitexact.db.lock", tmp_path / "bitexact.db-wal", tmp_path / "bitexact.db-shm"):
        leftover.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    os.chmod(path, 0o644)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="schema version 99, newer"):
        SQLiteStore(path)
    assert path.read_bytes() == before
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bitexact.db"]
