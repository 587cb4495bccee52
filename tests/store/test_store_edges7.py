"""Edges of the store and its write path, found in the seventh review: each test pins one behaviour that used
to break. Real processes, real files; nothing depends on machine speed."""

from __future__ import annotations

import math
import os
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lock_holder import held_by_another_process
from store.pausing import cli_env, pause_at, resume_while_locked
from store_chain import make_chain, make_entry, tool_data

from bitexact.crypto import GENESIS
from bitexact.store import AppendResult, SQLiteStore, StoreBusyError, StoreError, open_store


def _recorded(home: Path, secret: str) -> str:
    """A sealed run whose step 1 holds ``secret`` at result.account."""
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder

    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="claims")
        writer.append("tool_call", {"tool": "lookup", "result": {"account": secret, "plan": "gold"}})
        writer.seal()
        return writer.run_id
    finally:
        store.close()


# -- 1. a redaction whose rewrite landed is reported as "nothing was written" ---------------------------


def test_a_rewrite_that_landed_is_not_reported_as_nothing_written_when_the_wal_flush_finds_the_lock_busy(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rewrite_entry commits the rewrite, lets the write lock go, then takes it again to empty the WAL. If
    another process holds it past BITEXACT_LOCK_TIMEOUT then, StoreBusyError said "nothing was written"
    though the value was already destroyed (docs/store.md: the failure must say the value is gone from the
    database and that `bitexact redact --resume RUN` finishes it)."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    secret = "ZQX-SECRET-7777"
    run_id = _recorded(home, secret)
    env = {**cli_env(home), "BITEXACT_LOCK_TIMEOUT": "0.5"}
    proc = pause_at(home, "bitexact.store.sqlite:SQLiteStore.flush_destroyed", "before",
                    ["redact", run_id, "--field", "1:result.account", "--by", "dpo", "--reason", "erasure"], env=env)
    said = resume_while_locked(home, proc)
    store = open_store(home)
    try:
        destroyed = "account" not in store.entry(run_id, 1)["data"]["result"]
    finally:
        store.close()
    assert "Traceback" not in said, said
    if destroyed:  # the rewrite landed: the message must not deny it, and must say how to finish
        assert "nothing was written" not in said, said
        assert proc.returncode == 0 or "--resume" in said, said


# -- 2. a pipelined append's result() with a long (or infinite) timeout ----------------------------------


@pytest.mark.parametrize("timeout", [1e10, math.inf])
def test_a_submitted_appends_result_waits_under_a_timeout_past_what_a_lock_can_wait(
    tmp_path: Path, timeout: float
) -> None:
    """``pending.result(timeout)`` waits "at most timeout seconds": one past threading.TIMEOUT_MAX (or inf,
    wait for good) raised OverflowError ("timestamp out of range") instead of returning the durable append."""
    with SQLiteStore(tmp_path / "s.db") as store:
        store.create_run("r")
        [entry] = make_chain("r", 1)
        pending = store.submit("r", [entry])
        assert pending.result(timeout) == [AppendResult(0, entry["hash"])]
        assert store.head("r") == (1, entry["hash"])


# -- 3. another application's database whose tables share a name with ours ---------------------------------


@pytest.mark.parametrize("version", [0, 2])
@pytest.mark.parametrize("table", ["keys (k TEXT PRIMARY KEY, v TEXT)", "entries (id INTEGER PRIMARY KEY, title TEXT)"])
def test_another_applications_database_with_a_table_named_like_ours_is_left_alone(
    tmp_path: Path, table: str, version: int
) -> None:
    """docs/store.md "Another application's database is left alone": the check went by table names only, so
    a database holding just a ``keys`` (or ``entries``) table of its own was taken for a store: switched to
    WAL, BitExact's tables and triggers made in it, its schema version set to 3."""
    db = tmp_path / "bitexact.db"
    raw = sqlite3.connect(db)
    raw.execute(f"CREATE TABLE {table}")
    raw.execute(f"PRAGMA user_version = {version}")
    raw.commit()
    raw.close()
    before = db.read_bytes()
    name = table.split()[0]
    with pytest.raises(StoreError, match=f"not a BitExact store: it holds {name}"):
        SQLiteStore(db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bitexact.db"]


# -- 4. a database reached through a symlink: its companions are beside the file it points to ------------


def _loosened_store_behind_a_link(tmp_path: Path) -> tuple[Path, Path, sqlite3.Connection]:
    """A store at real/data.db, loosened to 0644 while another connection keeps its -wal and -shm (made
    by SQLite at 0644, the -wal holding a write), and home/bitexact.db a symlink to it."""
    real = tmp_path / "real" / "data.db"
    real.parent.mkdir()
    with SQLiteStore(real) as store:
        store.create_run("r")
    os.chmod(real, 0o644)
    other = sqlite3.connect(real)
    other.execute("INSERT INTO custody VALUES ('r', 0, x'7b7d')")
    other.commit()
    link = tmp_path / "home" / "bitexact.db"
    link.parent.mkdir()
    link.symlink_to(real)
    return real, link, other


def test_a_loosened_database_opened_through_a_symlink_has_its_wal_and_shm_tightened(tmp_path: Path) -> None:
    """docs/store.md: an existing database readable by others is tightened "with the -wal and -shm SQLite
    made beside it" (the -wal holds entries). SQLite keeps them beside the file a symlink points to, but
    the store tightened ``<link>-wal``: the real -wal stayed readable by everyone."""
    real, link, other = _loosened_store_behind_a_link(tmp_path)
    try:
        with SQLiteStore(link) as store:
            [entry] = make_chain("r", 1)
            store.append("r", entry)
            modes = {name: stat.S_IMODE(Path(f"{real}{name}").stat().st_mode) for name in ("", "-wal", "-shm")}
    finally:
        other.close()
    assert modes == {"": 0o600, "-wal": 0o600, "-shm": 0o600}


def test_a_store_opened_through_a_symlink_grows_the_wal_sqlite_uses_not_a_file_beside_the_link(
    tmp_path: Path,
) -> None:
    """The first commit grows the WAL (walcheckpoint.presize) at ``<path>-wal``: through a symlink that is
    not the WAL SQLite writes (it resolves the link), so a 9.8 MB file of zeros was left beside the link."""
    real, link, other = _loosened_store_behind_a_link(tmp_path)
    other.close()
    with SQLiteStore(link) as store:
        [entry] = make_chain("r", 1)
        store.append("r", entry)
        assert sorted(p.name for p in link.parent.iterdir()) == ["bitexact.db"]
        assert Path(f"{real}-wal").stat().st_size > 1_000_000  # grown, as for a store opened by its own name


# -- 5. `bitexact verify RUN` while the store it must upgrade stays locked --------------------------------


def test_verify_of_a_stored_run_reports_a_store_that_stays_locked_not_a_missing_file(tmp_path: Path) -> None:
    """Opening a store of an older schema takes the write lock to upgrade it. While another process kept
    it past BITEXACT_LOCK_TIMEOUT, `bitexact verify RUN` read the StoreBusyError as "no run here" and said
    "FAIL: no such file: RUN" (exit 2), though the run is there: `show RUN` says the store is locked."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    with SQLiteStore(home / "bitexact.db") as store:
        store.create_run("run-1")
    raw = sqlite3.connect(home / "bitexact.db")
    raw.execute("PRAGMA user_version = 2")  # a store the next open upgrades in place, under the lock
    raw.commit()
    raw.close()
    env = {**cli_env(home), "BITEXACT_LOCK_TIMEOUT": "0.5"}
    with held_by_another_process(home / "bitexact.db.lock"):
        done = subprocess.run([str(Path(sys.executable).with_name("bitexact")), "verify", "run-1"], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
    said = done.stdout + done.stderr
    assert "no such file" not in said, said
    assert "locked" in said and done.returncode == 1, said


def test_a_database_opened_through_a_symlink_and_by_its_own_path_has_one_write_lock(tmp_path: Path) -> None:
    """The lock file sat beside the path the store was opened by, so one database opened through a link
    and by its own name had two write locks: a writer stopped holding one did not hold up the other's
    writes (no StoreBusyError), and a first commit's WAL growth (done "under the store's write lock",
    walcheckpoint.presize) could run beside the other's commit."""
    real, link, other = _loosened_store_behind_a_link(tmp_path)
    other.close()
    with held_by_another_process(Path(f"{real}.lock")), SQLiteStore(link, lock_timeout=0.5) as store:
        [entry] = make_chain("r", 1)
        with pytest.raises(StoreBusyError):
            store.append("r", entry)
    assert sorted(p.name for p in link.parent.iterdir()) == ["bitexact.db"]


def test_export_o_naming_a_symlinked_store_is_refused_and_leaves_it(tmp_path: Path) -> None:
    """README: an ``-o`` that names one of BitExact's own files (the store ...) is refused. With the store a
    symlink, ``bitexact export RUN -o $BITEXACT_HOME/bitexact.db`` was not (the guard compared the path the
    link resolves to with the unresolved store path): the bundle replaced the link, and the store no
    longer opened ("file is not a database")."""
    real, link, other = _loosened_store_behind_a_link(tmp_path)
    other.close()
    with SQLiteStore(real) as store:
        store.append("r", make_chain("r", 1)[0])
    home = link.parent
    env = {**cli_env(home)}
    bitexact = str(Path(sys.executable).with_name("bitexact"))
    assert subprocess.run([bitexact, "keys", "init"], env=env, capture_output=True, timeout=60, check=False).returncode == 0
    done = subprocess.run([bitexact, "export", "r", "-o", str(link)], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode != 0 and "own files" in done.stderr, done
    assert link.is_symlink()
    with open_store(home) as store:
        assert store.run("r").run_id == "r"


def test_a_redaction_whose_claim_landed_but_whose_removal_found_the_lock_busy_says_to_resume(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bitexact redact` appends the claim, then removes the values. When another process kept the store
    locked past BITEXACT_LOCK_TIMEOUT between the two, it printed the store's "... so nothing was written"
    (exit 2), though the claim is on the chain and `bitexact verify` then reports it as not applied: the
    operator was never told that `bitexact redact --resume RUN` finishes it."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    run_id = _recorded(home, "ZQX-SECRET-8888")
    env = {**cli_env(home), "BITEXACT_LOCK_TIMEOUT": "0.5"}
    proc = pause_at(home, "bitexact.cli.audit:record_claim", "after",
                    ["redact", run_id, "--field", "1:result.account", "--by", "dpo", "--reason", "erasure"], env=env)
    said = resume_while_locked(home, proc)
    assert "Traceback" not in said, said
    assert "nothing was written" not in said, said
    assert "--resume" in said and proc.returncode == 1, said


# -- 6. a store opened by a relative path, in a process that then changes directory ------------------------


def test_the_wal_checkpointer_of_a_store_opened_by_a_relative_path_checkpoints_that_store_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BITEXACT_HOME may be relative. The background checkpointer opens its own connection when it first
    runs, by the store's path as given: after the agent changed directory, it opened (and so made) an
    empty `data/bitexact.db` there and checkpointed that, never the store, whose writer leaves checkpoints
    to it (wal_autocheckpoint=0): the store's WAL was never copied back or restarted."""
    (tmp_path / "a" / "data").mkdir(parents=True)
    (tmp_path / "b" / "data").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    with SQLiteStore(Path("data") / "bitexact.db") as store:
        store.create_run("r")
        monkeypatch.chdir(tmp_path / "b")  # the agent moves on, to its workspace
        prev = GENESIS
        for step in range(100):  # some 300 WAL frames: past the 128 that wake the checkpointer
            entry = make_entry("r", step, prev, tool_data(step, pad=6000))
            store.append("r", entry)
            prev = entry["hash"]
        deadline = time.monotonic() + 30
        while store._wal.passes == 0:
            assert time.monotonic() < deadline, "the WAL checkpointer never ran a pass"
            time.sleep(0.01)
    assert sorted(os.listdir(tmp_path / "b" / "data")) == []
