"""Operator commands killed at bad moments, and under contention (the eighteenth session's crash audit)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli.real_command import demo_run, run_bitexact

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


# Another program's write transaction on the store (as a sqlite3 shell's BEGIN IMMEDIATE): it holds SQLite's
# lock, not BitExact's lock file. Prints "locked" once it holds it, and keeps it until its stdin closes.
_HOLD_WRITE_TRANSACTION = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


def _hold_write_transaction(home: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_WRITE_TRANSACTION, str(home / "bitexact.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


def _release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    assert holder.wait(timeout=60) == 0


def test_a_write_under_another_programs_transaction_says_what_holds_the_store(tmp_path: Path) -> None:
    """A sqlite3 shell in a write transaction made `redact` (and `repair`) wait SQLite's own 30 s whatever
    BITEXACT_LOCK_TIMEOUT said, then fail with SQLite's bare "PATH: database is locked"."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    holder = _hold_write_transaction(home)
    try:
        started = time.monotonic()
        done = run_bitexact(home, "redact", run_id, "--field", "3:result.excess_eur", "--by", "dpo", "--reason",
                            "erasure", BITEXACT_LOCK_TIMEOUT="1")
        waited = time.monotonic() - started
    finally:
        _release(holder)
    assert done.returncode == 1, done.stderr
    said = " ".join(done.stderr.split())
    assert (f"the store at {home / 'bitexact.db'} stayed locked by another program's SQLite transaction for over"
            " 1 s") in said
    assert "so nothing was written; end that transaction (or raise BITEXACT_LOCK_TIMEOUT)" in said
    assert waited < 20  # the bound asked for (1 s), not SQLite's 30 s
    shown = run_bitexact(home, "show", run_id, "--json")
    assert len(json.loads(shown.stdout)["steps"]) == 8  # no claim landed
    assert run_bitexact(home, "redact", run_id, "--field", "3:result.excess_eur", "--by", "dpo", "--reason",
                        "erasure").returncode == 0



def test_stored_runs_still_verify_after_a_compromised_rotation_was_cut_short(tmp_path: Path) -> None:
    """`keys rotate --compromised` killed after it recorded the current key as compromised and before the new
    key replaced it (strace: SIGKILL at its second fsync) left a key nothing may sign with; `verify RUN` then
    failed for every stored run, exit 2 ("cannot read the input"), though a run needs no new signature to be
    verified. It verifies unsigned now, as an auditor's copy of the store does; export still refuses."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    shown = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
    current = next(key for key in (shown if isinstance(shown, list) else shown["keys"]) if key["status"] == "current")
    # What the rotation writes first (keys/compromised.json, docs/store.md), before the kill.
    record = {"compromised": [{"key_id": current["key_id"], "public_key": current["public_key"],
                               "compromised_at": "2026-12-01T14:00:00+00:00"}]}
    compromised = home / "keys" / "compromised.json"
    compromised.write_text(json.dumps(record))
    compromised.chmod(0o600)

    verified = run_bitexact(home, "verify", run_id)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"OK: {run_id} - 8 steps") and "unsigned" in verified.stdout
    exported = run_bitexact(home, "export", run_id, "-o", str(tmp_path / "b.json"))
    assert exported.returncode == 1 and "is recorded as compromised" in exported.stderr  # it must not sign
    assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0  # finishes it
    assert run_bitexact(home, "verify", run_id).returncode == 0


def test_a_rotation_the_store_could_not_record_says_it_is_done(tmp_path: Path) -> None:
    """`keys rotate` changes the key files, then records the keys in the store. A store another program kept
    locked failed the second step with the store's "nothing was written ... run the command again", though
    the key was rotated: run again, it rotated a second time."""
    home = tmp_path / "home"
    demo_run(home)
    before = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
    holder = _hold_write_transaction(home)
    try:
        done = run_bitexact(home, "keys", "rotate", BITEXACT_LOCK_TIMEOUT="1")
    finally:
        _release(holder)
    assert done.returncode == 1
    said = " ".join(done.stderr.split())
    after = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)

    def current(listed: object) -> str:
        keys = listed if isinstance(listed, list) else listed["keys"]  # type: ignore[index]
        return next(str(key["key_id"]) for key in keys if key["status"] == "current")

    old, new = current(before), current(after)
    assert old != new  # the files were rotated
    assert f"the key is rotated: {old} retired, {new} current (the key files are in place: do not rotate again)" in said
    assert said.endswith("Do not run the command again for it.")
