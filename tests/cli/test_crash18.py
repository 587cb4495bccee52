"""Operator commands killed at bad moments, and under contention (the eighteenth session's crash audit)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from cli.real_command import run_bitexact

# A write to a new database in SQLite's rollback-journal mode (the mode a store is in until its first open
# switches it to WAL), killed after it spilled pages into the file: what `keys init`, or any first command,
# leaves when it is killed inside that switch. Made here without timing: a one-page cache spills at once.
_KILLED_MID_WRITE = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA cache_size = 1")
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE half (x BLOB)")
for _ in range(64):
    conn.execute("INSERT INTO half VALUES (zeroblob(4096))")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_store_whose_first_open_was_killed_mid_write_opens(tmp_path: Path) -> None:
    """`keys init` killed inside the store's first switch to WAL mode (strace: SIGKILL at its first unlink)
    left a hot journal beside the new database; the read-only check for another application's file cannot
    roll it back, so every later command failed with "attempt to write a readonly database", for ever."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    database = home / "bitexact.db"
    database.touch(mode=0o600)
    killed = subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(database)], check=False, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert (home / "bitexact.db-journal").stat().st_size > 0  # the hot journal the kill left

    runs = run_bitexact(home, "runs")
    assert runs.returncode == 0, runs.stderr
    assert "No runs" in runs.stdout
    assert not (home / "bitexact.db-journal").exists()  # rolled back by the store's own open
    init = run_bitexact(home, "keys", "init")
    assert init.returncode == 0, init.stderr
    assert run_bitexact(home, "demo").returncode == 0
