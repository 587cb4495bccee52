"""A write waits for another process's write lock at most BITEXACT_LOCK_TIMEOUT, then fails clearly.

The holder is a real process (spawned) that takes the store's lock file and
keeps it until told to let go, as a stopped import would. Nothing here
depends on machine speed: every wait that must run out is against a lock
that is never released in time, and every wait that must succeed is given
30 s.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from lock_holder import free_for_others, held_by_another_process
from main_thread_signal import Signalled, signal_elsewhere, usr1_raises
from store_chain import make_chain

from bitexact.crypto import GENESIS
from bitexact.store import SQLiteStore, StoreBusyError, StoreError, flock

WAITER_THREAD = "bitexact-store-lock-wait"


def test_a_wait_runs_out_and_the_lock_is_not_kept_when_it_comes_later(tmp_path: Path) -> None:
    path = tmp_path / "s.db.lock"
    path.touch()
    fd = os.open(path, os.O_RDWR)
    lock = flock.ProcessLock(fd)
    try:
        with held_by_another_process(path) as (pid, release):
            with pytest.raises(flock.LockTimeout, match="over 0.2 s"):
                lock.acquire(0.2)
            threads, queued = set(threading.enumerate()), lock._pending
            assert queued is not None and any(t.name == WAITER_THREAD for t in threads)
            with pytest.raises(flock.LockTimeout):
                lock.acquire(0.2)  # joins the wait already queued, rather than queueing a second
            assert lock._pending is queued, "the same wait, still queued in the kernel"
            assert set(threading.enumerate()) - threads == set(), "no second waiter thread"
            assert flock.holder_pid(fd) == pid
            release.set()
            # The queued waiter takes the lock with nobody left waiting for it: it must give it back.
            assert free_for_others(path)
        lock.acquire(0.2)  # and ours is free to take again
        assert not free_for_others(path, within=0.05)
        lock.release()
        assert free_for_others(path)
    finally:
        os.close(fd)


def test_a_wait_that_outlasts_the_holder_takes_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.db.lock"
    path.touch()
    fd = os.open(path, os.O_RDWR)
    lock = flock.ProcessLock(fd)
    got = threading.Event()
    try:
        with held_by_another_process(path) as (_, release):
            waiting = threading.Thread(target=lambda: (lock.acquire(30.0), got.set()))
            waiting.start()
            assert not got.wait(0.3)  # still held by the other process
            release.set()
            assert got.wait(30)
            waiting.join()
        assert not free_for_others(path, within=0.05)  # ours now
        lock.release()
        assert free_for_others(path)
    finally:
        os.close(fd)


def test_a_store_write_fails_with_the_holder_named_and_loses_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", lock_timeout=0.3)
    try:
        store.create_run("r")
        chain = make_chain("r", 3)
        store.append("r", chain[0])
        with held_by_another_process(tmp_path / "s.db.lock") as (pid, _):
            with pytest.raises(StoreBusyError) as refused:
                store.append("r", chain[1])
            with pytest.raises(StoreBusyError):
                store.submit("r", [chain[1]]).result(30)
        message = str(refused.value)
        assert f"locked by process {pid}" in message
        assert "BITEXACT_LOCK_TIMEOUT" in message and "nothing was written" in message
        assert store.head("r") == (1, chain[0]["hash"])  # the refused appends left no trace
        store.append("r", chain[1])
        store.append("r", chain[2])
        assert [e["hash"] for e in store.entries("r")] == [e["hash"] for e in chain]
        assert chain[0]["prev"] == GENESIS
    finally:
        store.close()


@pytest.mark.parametrize(("raw", "says"), [("soon", "'soon' is not a number"), ("0", "'0' must be greater than 0"),
                                          ("inf", "must be a finite number"), ("nan", "must be a finite number")])
def test_an_unusable_lock_timeout_setting_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str, says: str
) -> None:
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", raw)
    with pytest.raises(StoreError, match="BITEXACT_LOCK_TIMEOUT") as refused:
        SQLiteStore(tmp_path / "s.db")
    assert says in str(refused.value)
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(("raw", "seconds"), [("2.5", 2.5), (None, 30.0)])
def test_the_lock_timeout_setting_is_read_when_the_store_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str | None, seconds: float
) -> None:
    if raw is None:
        monkeypatch.delenv("BITEXACT_LOCK_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", raw)
    store = SQLiteStore(tmp_path / "s.db")
    try:
        assert store.lock_timeout == seconds
    finally:
        store.close()


def test_a_store_opens_for_reading_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    first = SQLiteStore(tmp_path / "s.db")
    first.create_run("r")
    first.append("r", make_chain("r", 1)[0])
    first.close()
    with held_by_another_process(tmp_path / "s.db.lock"):
        reader = SQLiteStore(tmp_path / "s.db", lock_timeout=0.2)  # at this version: no migration, no lock
        try:
            assert reader.head("r")[0] == 1 and [r.run_id for r in reader.runs()] == ["r"]
        finally:
            reader.close()
    with held_by_another_process(tmp_path / "new.db.lock"):
        with pytest.raises(StoreBusyError, match="new.db stayed locked"):
            SQLiteStore(tmp_path / "new.db", lock_timeout=0.2)  # a new store must make its tables


def test_a_ctrl_c_handed_to_another_thread_cuts_the_wait_short_and_the_lock_is_not_kept(tmp_path: Path) -> None:
    """The kernel hands a process's signal to any of its threads (the lock's waiter thread, blocked in
    flock, as likely as any). Handed to another than the main thread, it never woke the main thread's wait
    for the waiter: a Ctrl-C was heard only once the lock came or the whole lock timeout had passed."""
    path = tmp_path / "s.db.lock"
    path.touch()
    fd = os.open(path, os.O_RDWR)
    lock = flock.ProcessLock(fd)
    try:
        with usr1_raises(), held_by_another_process(path) as (_, release):
            armed, gave_up = signal_elsewhere(20, release.set)
            with pytest.raises(Signalled):
                armed.set()
                lock.acquire(60.0)
            assert not gave_up.is_set(), "the signal was heard only once the holder let go"
            release.set()
            assert free_for_others(path), "the wait given up must not keep the lock when it comes"
        lock.acquire(30.0)
        lock.release()
    finally:
        os.close(fd)
