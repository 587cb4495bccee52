"""Heads moved in SQL (schema version 3): the ``appends`` view, its trigger, and the one-statement commit."""

from __future__ import annotations

import multiprocessing as mp
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from store_chain import make_chain, make_checkpoint, make_entry, tool_data

from bitexact.crypto import GENESIS, SigningKey
from bitexact.errors import StaleHeadError
from bitexact.store import SQLiteStore, flock
from bitexact.store.sqlite_schema import SCHEMA_VERSION


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "s.db")
    yield s
    s.close()


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def test_the_view_refuses_a_row_that_does_not_extend_the_head(store: SQLiteStore) -> None:
    """Any writer of the file, not only this store, is held to the head: a wrong step or prev is refused whole."""
    store.create_run("r")
    first, second = make_chain("r", 2)
    store.append("r", first)
    raw = _raw(store.path)
    row = ("r", 1, GENESIS, "tool_call", "observed", second["ts"], second["hash"], b"{}", "now")
    with pytest.raises(sqlite3.IntegrityError, match="does not extend the run head"):
        raw.execute("INSERT INTO appends VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)  # prev is not step 0's hash
    skipped = ("r", 2, first["hash"], "tool_call", "observed", second["ts"], second["hash"], b"{}", "now")
    with pytest.raises(sqlite3.IntegrityError):
        raw.execute("INSERT INTO appends VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", skipped)
    raw.close()
    assert store.head("r") == (1, first["hash"])
    assert [e["step"] for e in store.entries("r")] == [0]


def test_a_multi_row_insert_lands_whole_or_not_at_all(store: SQLiteStore) -> None:
    store.create_run("a")
    store.create_run("b")
    a0, a1 = make_chain("a", 2)
    b0 = make_chain("b", 1)[0]
    raw = _raw(store.path)

    def row(run: str, entry: dict, prev: str) -> tuple:
        return (run, entry["step"], prev, entry["kind"], entry["prov"], entry["ts"], entry["hash"], b"{}", "now")

    # The last row is stale (b's step 0 twice): the rows before it are not kept either.
    with pytest.raises(sqlite3.IntegrityError):
        raw.execute(
            "INSERT INTO appends VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?)"] * 4),
            [*row("a", a0, GENESIS), *row("a", a1, a0["hash"]), *row("b", b0, GENESIS), *row("b", b0, GENESIS)],
        )
    raw.close()
    assert store.head("a") == (0, GENESIS) and store.head("b") == (0, GENESIS)


def test_kinds_and_seal_are_counted_by_the_trigger(store: SQLiteStore) -> None:
    store.create_run("r")
    prev = GENESIS
    kinds = ["run_meta", "tool_call", "tool_call", 'odd "kind" \\ ü', "run_end"]
    for step, kind in enumerate(kinds):
        entry = make_entry("r", step, prev, tool_data(step), kind=kind)
        store.append("r", entry)
        prev = entry["hash"]
    info = store.run("r")
    assert info.kinds == {"run_meta": 1, "tool_call": 2, 'odd "kind" \\ ü': 1, "run_end": 1}
    assert info.sealed and info.steps == 5 and info.head_hash == prev


def test_checkpoints_are_counted_by_their_trigger(store: SQLiteStore) -> None:
    key = SigningKey.generate()
    store.create_run("r")
    chain = make_chain("r", 3)
    store.append("r", chain[0])
    store.append("r", chain[1], checkpoint=make_checkpoint(key, "r", 0, 2, chain[1]["hash"]))
    store.add_checkpoint("r", make_checkpoint(key, "r", 1, 2, chain[1]["hash"]))
    store.append("r", chain[2], checkpoint=make_checkpoint(key, "r", 2, 3, chain[2]["hash"]))
    assert [c["seq"] for c in store.checkpoints("r")] == [0, 1, 2]
    raw = _raw(store.path)
    assert raw.execute("SELECT checkpoints FROM runs WHERE run_id = 'r'").fetchone()[0] == 3
    raw.close()


def test_a_batch_with_one_stale_append_still_lands_the_others(store: SQLiteStore) -> None:
    """The one-statement commit fails as a whole; the checked path then gives each append its own outcome."""
    store.create_run("good")
    store.create_run("stale")
    good = make_chain("good", 1)[0]
    wrong = make_entry("stale", 1, GENESIS, tool_data(1))  # step 1 onto an empty run
    pending = [store.submit("good", [good]), store.submit("stale", [wrong])]
    assert pending[0].result(10)[0].step == 0
    with pytest.raises(StaleHeadError):
        pending[1].result(10)
    assert store.head("good") == (1, good["hash"]) and store.head("stale") == (0, GENESIS)


def test_a_version_2_store_is_upgraded_and_its_counts_carry_on(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        store.create_run("r")
        chain = make_chain("r", 3)
        store.append("r", chain[0])
    raw = _raw(path)  # what version 2 had: no view, no triggers, kinds as canonical bytes
    raw.execute("DROP TRIGGER appends_extend_head")
    raw.execute("DROP TRIGGER checkpoints_count")
    raw.execute("DROP VIEW appends")
    raw.execute("UPDATE runs SET kinds = CAST('{\"tool_call\":1}' AS BLOB)")
    raw.execute("PRAGMA user_version = 2")
    raw.close()
    with SQLiteStore(path) as store:
        raw = _raw(path)
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        # The upgrade made kinds JSON text: SQLite 3.45+ reads a BLOB handed to json_each as JSONB.
        assert raw.execute("SELECT typeof(kinds), kinds FROM runs").fetchone() == ("text", '{"tool_call":1}')
        raw.close()
        store.append("r", chain[1])
        store.append("r", chain[2])
        assert store.run("r").kinds == {"tool_call": 3}
        assert store.head("r") == (3, chain[2]["hash"])


# -- the lock file -----------------------------------------------------


def _hold_lock(path: str, held: "mp.synchronize.Event", release: "mp.synchronize.Event") -> None:
    fd = os.open(path, os.O_RDWR)
    lock = flock.ProcessLock(fd)
    lock.acquire()
    held.set()
    release.wait(30)
    lock.release()
    os.close(fd)


def test_flock_waits_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.db.lock"
    path.touch()
    ctx = mp.get_context("spawn")
    held, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(path), held, release))
    holder.start()
    try:
        assert held.wait(30)
        fd = os.open(path, os.O_RDWR)
        lock = flock.ProcessLock(fd)
        got = threading.Event()
        waiter = threading.Thread(target=lambda: (lock.acquire(), got.set()))  # no bound: blocks in flock
        waiter.start()
        assert not got.wait(0.3)  # still held by the other process
        release.set()
        assert got.wait(30)
        waiter.join()
        lock.release()
        os.close(fd)
    finally:
        release.set()
        holder.join(30)
    assert holder.exitcode == 0


def test_flock_unlocks_for_the_next_process(tmp_path: Path) -> None:
    path = tmp_path / "s.db.lock"
    path.touch()
    fd = os.open(path, os.O_RDWR)
    lock = flock.ProcessLock(fd)
    lock.acquire(5.0)
    lock.release()
    other = os.open(path, os.O_RDWR)
    import fcntl

    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again: would raise BlockingIOError if not
    fcntl.flock(other, fcntl.LOCK_UN)
    os.close(other)
    os.close(fd)
