"""`bitexact health`, session 20: entry times that go back within a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import open_store
from cli.real_command import run_bitexact


def _health(home: Path) -> tuple[int, list[dict[str, Any]]]:
    result = run_bitexact(home, "health", "--json")
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


# -- 2. the clock stepped back mid-run ---------------------------------------------------------------------------

def _run_whose_clock_went_back(home: Path) -> str:
    """A sealed run whose step 2 was recorded at an instant before step 1's (the write path's own ``ts``, as a
    clock stepped back would give it), then step 3 at the clock's time again."""
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="clock")
        writer.append("marker", {"label": "before"})
        writer.append("marker", {"label": "the clock stepped back"}, ts="2020-01-01T00:00:00+00:00")
        writer.append("marker", {"label": "after"})
        writer.seal()
        return writer.run_id
    finally:
        store.close()


def test_an_entry_timed_before_the_one_before_it_is_a_warning_naming_run_and_step(tmp_path: Path) -> None:
    """The run verifies (``ts`` is informational), and health said "healthy": nothing told the operator that
    the run's times jump back years at step 2."""
    home = tmp_path / "home"
    run_id = _run_whose_clock_went_back(home)
    verified = run_bitexact(home, "verify", run_id, "--require-sealed")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    code, findings = _health(home)
    assert code == 1
    [back] = findings
    assert back["name"] == "entry-time-backwards" and back["level"] == "warn" and back["run_id"] == run_id
    assert back["details"]["steps"] == [2]
    assert back["details"]["first"]["ts"] == "2020-01-01T00:00:00+00:00"
    assert back["message"].startswith("1 entry is timed earlier than the entry before (step 2; step 2 at"
                                      " 2020-01-01T00:00:00+00:00, ")
    assert "the recording host's clock stepped back mid-run" in back["message"]


def test_a_run_whose_times_go_forward_has_no_such_finding(tmp_path: Path) -> None:
    """Times are compared as instants, never as text alone: a time with another UTC offset that sorts before
    its predecessor as text but lies after it (05:30-05:00 after 10:00:00.5+00:00) is no step back, nor is a
    time without microseconds (``isoformat`` leaves a 0 out)."""
    base = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) + timedelta(days=1)
    times = [base.isoformat(), (base + timedelta(seconds=0.5)).isoformat(), (base + timedelta(seconds=1)).isoformat(),
             (base + timedelta(minutes=30)).astimezone(timezone(timedelta(hours=-5))).isoformat()]
    assert len(times[1]) > len(times[2]) == len(times[3]) and times[3] < times[2]
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="forward")
        for label, ts in zip("abcd", times):
            writer.append("marker", {"label": label}, ts=ts)
    finally:
        store.close()
    code, findings = _health(home)
    assert code == 0 and findings == []


def test_a_step_back_written_with_another_offset_is_found(tmp_path: Path) -> None:
    """An instant an hour earlier, written with a +02:00 offset, sorts after its predecessor as text: compared
    as text it would pass for a step forward."""
    base = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0) + timedelta(days=1)
    earlier = (base - timedelta(hours=1)).astimezone(timezone(timedelta(hours=2))).isoformat()
    assert earlier > base.isoformat() and len(earlier) == len(base.isoformat())
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="offsets")
        writer.append("marker", {"label": "a"}, ts=base.isoformat())
        writer.append("marker", {"label": "b"}, ts=earlier)
        run_id = writer.run_id
    finally:
        store.close()
    code, findings = _health(home)
    assert code == 1
    [back] = findings
    assert (back["name"], back["run_id"], back["details"]["steps"]) == ("entry-time-backwards", run_id, [2])
    assert back["details"]["max_seconds_back"] == 3600.0


# -- 3. a reader's snapshot keeps the write-ahead log from restarting ---------------------------------------------

READER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN")
connection.execute("SELECT count(*) FROM entries").fetchone()
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_reader_holding_a_snapshot_while_the_log_grows_is_reported_with_its_pid(tmp_path: Path) -> None:
    """A sqlite3 program in a read transaction while 70 MiB was recorded: the WAL grew to 70 MiB and on, and
    health said "healthy". Once it ends, the same store (the WAL file still that large) is healthy again."""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="big")
        writer.append("marker", {"label": "first"})
        reader = subprocess.Popen([sys.executable, "-c", READER, str(home / "bitexact.db")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert reader.stdout is not None and reader.stdout.readline().strip() == "held"
            for _ in range(14):
                writer.append_batch([("marker", {"note": "p" * 100_000}, None) for _ in range(50)])
            code, findings = _health(home)
        finally:
            reader.communicate("\n", timeout=30)
        assert code == 1
        [pinned] = findings
        assert pinned["name"] == "store-wal-pinned" and pinned["level"] == "warn"
        assert pinned["details"]["uncopied_bytes"] >= 64 << 20
        # Every other process with the store open: the reader, and apart from it this one, the writer, which
        # holds the store's lock file open as every BitExact store does (test_health22 pins the split).
        assert [int(holder.split()[0]) for holder in pinned["details"]["holders"]] == [reader.pid]
        assert [int(holder.split()[0]) for holder in pinned["details"]["bitexact_holders"]] == [os.getpid()]
        assert f"{reader.pid} (" in pinned["message"] and str(home / "bitexact.db-wal") in pinned["message"]
        assert os.path.getsize(home / "bitexact.db-wal") >= 64 << 20
        code, findings = _health(home)
        assert (code, findings) == (0, [])  # the log is as large, but nothing pins it now
    finally:
        store.close()


# -- 4. `keys init` killed once its key file is written -----------------------------------------------------------

_INIT_KILLED_AFTER_THE_KEY_FILE = """
import os, signal, sys
from bitexact.crypto.keystore import KeyStore
made = KeyStore.init
def made_then_killed(self):
    made(self)
    os.kill(os.getpid(), signal.SIGKILL)  # before the key's row is recorded, and before the store is closed
KeyStore.init = made_then_killed
from bitexact.cli import main
sys.argv = ["bitexact", "keys", "init"]
main()
"""


def test_keys_init_killed_after_its_key_file_leaves_no_store_missing(tmp_path: Path) -> None:
    """`keys init` opens (makes) the store before it writes the key file, so a kill between the key file and the
    key's row leaves a store beside the key, never keys with no store (which `store-missing` would call a deleted
    store). Health is right to say healthy: the next recording records the key's row."""
    from cli.real_command import command_env

    home = tmp_path / "home"
    killed = subprocess.run([sys.executable, "-c", _INIT_KILLED_AFTER_THE_KEY_FILE], env=command_env(home),
                            capture_output=True, text=True, timeout=120, check=False)
    assert killed.returncode == -9, killed.stderr
    assert (home / "keys" / "recorder.key").is_file() and (home / "bitexact.db").exists()
    code, findings = _health(home)
    assert (code, findings) == (0, [])
    assert run_bitexact(home, "demo", "--json").returncode == 0
    shown = run_bitexact(home, "keys", "show", "--json")
    assert [key["status"] for key in json.loads(shown.stdout)] == ["current"]
    assert _health(home) == (0, [])


def test_an_entry_a_repair_folded_with_its_earlier_time_is_no_clock_step(tmp_path: Path) -> None:
    """A journaled entry folded by `bitexact repair` keeps the instant its call journaled it, and lands after an
    entry written since: its time goes back with no clock to blame, and the repair entry names the journal."""
    import time

    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.sdk.stores import close_stores, recorder_for

    home = tmp_path / "home"
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="stopped")
    path = write_journal(home, load_host_key(home),
                         JournalRecord(writer.run_id, 1, "tool_call", {"tool": "scan"}, steps_before=1))
    writer.append("marker", {"label": "written after the journal"})
    then = time.time() - 600  # a journal older than health's grace: its process is gone
    os.utime(path, (then, then))
    close_stores()
    repaired = run_bitexact(home, "repair", writer.run_id, "--by", "op", "--note", "folded")
    assert repaired.returncode == 0, repaired.stderr
    shown = json.loads(run_bitexact(home, "show", writer.run_id, "--json").stdout)["steps"]
    assert [step["kind"] for step in shown[1:4]] == ["marker", "tool_call", "repair"]
    assert shown[2]["ts"] < shown[1]["ts"]  # the folded entry is timed before the one before it
    assert _health(home) == (0, [])


def test_steps_back_after_a_fold_are_kept_when_those_before_it_filled_the_cap(monkeypatch: Any) -> None:
    """The kept cases are bounded per run; the folded entries' own (excused) steps back must not use up that
    bound, or a real step back after the repair went unreported."""
    from bitexact.health import context

    monkeypatch.setattr(context, "CLOCK_BACK_KEPT", 1)
    times = context._Times()
    entries = [("marker", "2026-01-01T00:00:02+00:00", None), ("tool_call", "2026-01-01T00:00:01+00:00", None),
               ("repair", "2026-01-01T00:00:03+00:00", {"journals": ["j1"]}),
               ("marker", "2026-01-01T00:00:00+00:00", None)]
    for step, (kind, ts, data) in enumerate(entries, start=1):
        times.see({"step": step, "kind": kind, "ts": ts, "data": data})
    assert [(back.step, back.seconds) for back in times.backwards()] == [(4, 3.0)]
