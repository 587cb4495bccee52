"""`bitexact health` on data directories broken the ways an operator meets them (session 19's audit)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli.real_command import command_env, run_bitexact


def _health(home: Path) -> tuple[int, list[dict[str, Any]]]:
    result = run_bitexact(home, "health", "--json")
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def _demo(home: Path) -> str:
    demo = run_bitexact(home, "demo", "--json")
    assert demo.returncode == 0, demo.stderr
    return str(json.loads(demo.stdout)["run_id"])


# -- a program holding SQLite's own write lock ---------------------------------------------------------------

def _health_while_held(home: Path, shell_script: str) -> tuple[int, list[dict[str, Any]]]:
    """``health --json`` of ``home`` while a Python sqlite3 program (``shell_script``) holds the store as it says;
    the program is let go after."""
    shell = subprocess.Popen([sys.executable, "-c", shell_script, str(home / "bitexact.db")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert shell.stdout is not None and shell.stdout.readline().strip() == "held"
        return _health(home)
    finally:
        shell.communicate("\n", timeout=30)


_SQLITE_SHELL = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_sqlite_shell_holding_the_write_lock_is_reported(tmp_path: Path) -> None:
    """A sqlite3 shell in `BEGIN IMMEDIATE` (outside the store's lock file): health said "healthy", exit 0,
    while every write waited BITEXACT_LOCK_TIMEOUT and failed."""
    home = tmp_path / "home"
    _demo(home)
    code, findings = _health_while_held(home, _SQLITE_SHELL)
    assert code == 1
    [locked] = findings
    assert locked["name"] == "store-locked" and locked["level"] == "warn"
    assert locked["details"] == {"holder": "sqlite"}
    assert locked["message"].startswith("the store's SQLite write lock has been held for over 1 s by a program that"
                                        " is no BitExact writer")
    assert f"fuser -v {home / 'bitexact.db'}" in locked["message"]
    assert _health(home) == (0, [])  # let go: nothing left behind, nothing reported


# -- a clock that went back since the run was written -------------------------------------------------------

_STOPPED = """
import os, sys, time
from pathlib import Path
from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.journal import JournalRecord, write_journal
from bitexact.sdk.stores import close_stores, recorder_for
home = Path(sys.argv[1])
recorder, _ = recorder_for(home)
writer = recorder.start(name="stopped")
write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "tool_call", {"tool": "scan"}, steps_before=1))
close_stores()
print(writer.run_id)
"""


def _written_in_the_future(home: Path, run_id: str, days: int) -> None:
    """What a host whose clock ran ``days`` ahead left (then set right): the run's updated_at and its journals'
    times that far ahead of now (behind it, for negative ``days``)."""
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        with connection:
            connection.execute("UPDATE runs SET updated_at = datetime('now', ?) || '+00:00' WHERE run_id = ?",
                               (f"{days:+d} days", run_id))
    finally:
        connection.close()
    later = time.time() + days * 86400
    for journal in (home / "journals").rglob("*.bxj"):
        os.utime(journal, (later, later))


def test_runs_and_journals_written_before_the_clock_went_back_are_reported(tmp_path: Path) -> None:
    """A run and journal written while the clock ran 200 days ahead were taken for a live recording's (written
    under a minute ago) until the clock caught up: health said "healthy" for 200 days."""
    home = tmp_path / "home"
    stopped = subprocess.run([sys.executable, "-c", _STOPPED, str(home)], env=command_env(home), capture_output=True,
                             text=True, timeout=120, check=True).stdout.strip()
    _written_in_the_future(home, stopped, 200)
    code, findings = _health(home)
    assert code == 1
    [orphans] = findings
    assert (orphans["name"], orphans["run_id"]) == ("orphan-journals", stopped)
    assert run_bitexact(home, "repair", stopped, "--by", "ops", "--note", "clock stepped back").returncode == 0
    _written_in_the_future(home, stopped, 200)  # the repair's own write is now; set it as the clock-ahead host did
    ended = subprocess.run([sys.executable, "-c", _STOPPED.replace("write_journal(", "(lambda *a: None)("),
                            str(home)], env=command_env(home), capture_output=True, text=True, timeout=120,
                           check=True).stdout.strip()
    _written_in_the_future(home, ended, 200)
    code, findings = _health(home)
    assert code == 1
    [unsealed] = findings
    assert (unsealed["name"], unsealed["run_id"]) == ("run-unsealed", ended)
    assert "later than this host's clock says it is now (the clock went back since, or ran ahead then)" \
        in unsealed["message"]


# -- journals whose host key is gone --------------------------------------------------------------------------


def test_journals_whose_host_key_is_gone_are_not_sent_to_a_repair_that_cannot_open_them(tmp_path: Path) -> None:
    """A data directory restored without its host key: health said `bitexact repair` folds the journals, and
    the repair then kept them unopened and accepted the run's history without their entries."""
    home = tmp_path / "home"
    stopped = subprocess.run([sys.executable, "-c", _STOPPED, str(home)], env=command_env(home), capture_output=True,
                             text=True, timeout=120, check=True).stdout.strip()
    _written_in_the_future(home, stopped, -1)  # a day ago: no live recording's
    host_key = tmp_path / "home.host.key"
    host_key.unlink()
    code, findings = _health(home)
    assert code == 1
    [orphans] = findings
    assert (orphans["name"], orphans["run_id"]) == ("orphan-journals", stopped)
    assert orphans["details"]["host_key"] == str(host_key)
    assert f"sealed under a host key that is not at {host_key} any more" in orphans["message"]
    assert "`bitexact repair` cannot open it, and would accept the run's history without its entry" \
        in orphans["message"]
    assert "Restore the host key from a backup (or point BITEXACT_HOST_KEY at it)" in orphans["message"]


# -- keys/ that is no directory ---------------------------------------------------------------------------------


def test_a_keys_path_that_is_no_directory_is_critical(tmp_path: Path) -> None:
    """keys/ replaced by a file (or a link to an unmounted volume): health said "healthy", exit 0, while no run
    started ("cannot create …/keys: File exists") and export failed."""
    home = tmp_path / "home"
    _demo(home)
    keys = home / "keys"
    for path in keys.rglob("*"):
        if path.is_file():
            path.unlink()
    for path in sorted(keys.rglob("*"), reverse=True):
        path.rmdir()
    keys.rmdir()
    keys.write_text("not keys\n")
    code, findings = _health(home)
    assert code == 2
    [unusable] = [finding for finding in findings if finding["name"] == "recorder-key-unusable"]
    assert unusable["message"].startswith(f"{keys} is not a directory: no recorder key can be read or made there.")
    assert f"move it aside (`mv {keys} {keys}.aside`) and restore keys/ from a backup" in unusable["message"]
    keys.unlink()
    keys.symlink_to(tmp_path / "unmounted")
    code, findings = _health(home)
    assert code == 2
    [unusable] = [finding for finding in findings if finding["name"] == "recorder-key-unusable"]
    assert unusable["message"].startswith(f"{keys} is a symlink to {tmp_path / 'unmounted'}, which does not exist")
    assert unusable["details"] == {"path": str(keys)}


# -- something other than a file in the store's place -----------------------------------------------------------


def test_a_store_that_is_a_link_to_nothing_or_a_directory_says_so(tmp_path: Path) -> None:
    """A store symlinked to an unmounted volume read "[Errno 2] No such file or directory: …/bitexact.db" (the
    link, which is there), and a directory in its place "unable to open database file", in health and in
    every command."""
    home = tmp_path / "home"
    _demo(home)
    store = home / "bitexact.db"
    store.rename(tmp_path / "kept.db")
    store.symlink_to(tmp_path / "unmounted" / "bitexact.db")
    code, findings = _health(home)
    assert code == 2
    [unreadable] = [finding for finding in findings if finding["name"] == "store-unreadable"]
    said = (f"(it is a symlink to {tmp_path / 'unmounted' / 'bitexact.db'}, which does not exist: an unmounted"
            " volume? mount or restore what it names)")
    assert said in unreadable["message"]
    listed = run_bitexact(home, "runs")
    assert listed.returncode == 1 and said in listed.stderr
    store.unlink()
    store.mkdir()
    code, findings = _health(home)
    assert code == 2
    [unreadable] = [finding for finding in findings if finding["name"] == "store-unreadable"]
    assert f"(it is a directory, not the store's file: move it aside, `mv {store} {store}.aside`)" \
        in unreadable["message"]


# -- keys/ rolled back past a rotation ---------------------------------------------------------------------------


def _current(home: Path) -> str:
    shown = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
    [current] = [key["key_id"] for key in shown if key["status"] == "current"]
    return str(current)


def test_a_current_key_the_store_recorded_as_retired_is_critical_and_its_remedy_works(tmp_path: Path) -> None:
    """keys/ restored from a backup older than `keys rotate --compromised`: the exposed key was current again and
    signed new runs, and health only warned that the newer key's file was missing. The rotation it advises then
    said "the store did not record it (… a retired key stays retired)", exit 1."""
    home = tmp_path / "home"
    _demo(home)
    backup = tmp_path / "keys-backup"
    shutil.copytree(home / "keys", backup)
    exposed = _current(home)
    assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0
    shutil.rmtree(home / "keys")
    shutil.copytree(backup, home / "keys")
    # The restored file is current again; the store's mark (keys21) lists it as what it is, never as trusted.
    shown = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
    assert [key["status"] for key in shown if key["key_id"] == exposed] == ["compromised"]
    code, findings = _health(home)
    assert code == 2
    [retired] = [finding for finding in findings if finding["name"] == "recorder-key-retired"]
    assert retired["level"] == "critical" and retired["details"]["key_id"] == exposed
    assert retired["message"].startswith(f"the current recorder key {exposed} ({home / 'keys' / 'recorder.key'}) was"
                                         " retired by a rotation at ")
    assert f"`bitexact keys rotate --compromised --expect-current {exposed}` replaces it" in retired["message"]
    rotated = run_bitexact(home, "keys", "rotate", "--compromised", "--expect-current", exposed)
    assert rotated.returncode == 0, rotated.stderr
    code, findings = _health(home)
    assert "recorder-key-retired" not in {finding["name"] for finding in findings}


_EXCLUSIVE_SHELL = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA locking_mode = EXCLUSIVE")
connection.execute("BEGIN IMMEDIATE")
connection.execute("COMMIT")  # the lock is kept: exclusive locking mode gives it back only on close
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_store_held_in_exclusive_locking_mode_says_what_holds_it(tmp_path: Path) -> None:
    """A sqlite3 shell in exclusive locking mode keeps every other connection out: health (and every command)
    said "cannot open the store at …: database is locked" alone."""
    home = tmp_path / "home"
    _demo(home)
    code, findings = _health_while_held(home, _EXCLUSIVE_SHELL)
    assert code == 2
    [unreadable] = [finding for finding in findings if finding["name"] == "store-unreadable"]
    assert unreadable["message"].startswith(
        f"cannot open the store at {home / 'bitexact.db'}: database is locked (another program holds the file"
        f" locked: a sqlite3 shell in exclusive locking mode, or one in the middle of a write; `fuser -v"
        f" {home / 'bitexact.db'}` lists the processes that have it open: end it)")


# -- the store gone from a data directory that recorded --------------------------------------------------------


def test_a_store_deleted_or_emptied_beside_its_keys_is_reported(tmp_path: Path) -> None:
    """bitexact.db deleted (or truncated to nothing) with keys/ left: health said "healthy", exit 0, though
    every run recorded there was gone and the next recording would start an empty store."""
    home = tmp_path / "home"
    _demo(home)
    store = home / "bitexact.db"
    for companion in (store, Path(f"{store}-wal"), Path(f"{store}-shm")):
        companion.unlink(missing_ok=True)
    code, findings = _health(home)
    assert code == 1
    [missing] = findings
    assert missing["name"] == "store-missing" and missing["details"] == {"path": str(store), "keys": ["recorder.key"]}
    assert missing["message"].startswith(f"{home} holds recorder key files (recorder.key) but no store: {store} was"
                                         " deleted, moved or emptied")
    store.write_bytes(b"")
    assert [finding["name"] for finding in _health(home)[1]] == ["store-missing"]
    fresh = tmp_path / "fresh"
    assert run_bitexact(fresh, "keys", "init").returncode == 0
    assert _health(fresh) == (0, [])


def test_journals_a_new_host_key_does_not_open_are_not_sent_to_a_repair_that_cannot_open_them(tmp_path: Path) -> None:
    """The host key made anew after a restore lost the old one: health said `bitexact repair` folds the
    journals; the repair kept them unopened and accepted the run's history without their entries."""
    home = tmp_path / "home"
    stopped = subprocess.run([sys.executable, "-c", _STOPPED, str(home)], env=command_env(home), capture_output=True,
                             text=True, timeout=120, check=True).stdout.strip()
    _written_in_the_future(home, stopped, -1)
    host_key = tmp_path / "home.host.key"
    host_key.unlink()
    made = "import sys\nfrom bitexact.crypto.hostkey import load_host_key\nload_host_key(sys.argv[1])\n"
    subprocess.run([sys.executable, "-c", made, str(home)], env=command_env(home), check=True, timeout=60)
    assert host_key.is_file()
    code, findings = _health(home)
    assert code == 1
    [orphans] = findings
    [journal] = orphans["details"]["journals"]
    assert orphans["details"]["unopened"].startswith(f"{journal} does not open under the host key at {host_key} (")
    assert "`bitexact repair` would keep it unopened and accept the run's history without its entry" \
        in orphans["message"]
