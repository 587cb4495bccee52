"""A write made after the lock's holder left never waits for, nor blames another process for, its own waiter.

A bounded wait that ran out leaves the store's waiter thread queued in the
kernel's ``flock``. When the holder lets go, the kernel gives the lock to
that thread (on the store's own open file description), which must then run
to give it back or hand it over. A write made before it had run (the thread
not yet scheduled on a loaded machine, the GIL kept by another thread)
joined the stale wait, whose bound had already run out, and failed at once
without asking the kernel: "stayed locked by another process" (the lock was
free) or "by process <its own pid>" (its waiter had it).
tests/sdk/test_store_busy.py's call after the holder left failed so once in
a full run.

Here the waiter is starved deterministically: the holder is a real process
told to let go through shared memory, and this thread keeps the GIL (a
100 s switch interval, and no blocking call) from before the holder unlocks
until the write has its answer. Nothing depends on machine speed: the only
time asserted is a lower bound that a bounded wait cannot undercut.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from lock_holder import flag_holder, free_for_others, in_flock, no_thread_switch, waits_for_gil
from store_chain import make_chain

from bitexact.store import SQLiteStore, StoreBusyError, flock

WAITER_THREAD = "bitexact-store-lock-wait"


def _settled(lock: flock.ProcessLock) -> bool:
    """True once the waiter thread has dealt with its queued wait (it needs the GIL: this thread sleeps)."""
    deadline = time.monotonic() + 30
    while lock._pending is not None and time.monotonic() < deadline:
        time.sleep(0.005)
    return lock._pending is None


def _lock_file(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "s.db.lock"
    path.touch()
    return path, os.open(path, os.O_RDWR)


def test_a_call_after_the_holder_left_takes_the_lock_its_starved_waiter_has_not_handed_over(tmp_path: Path) -> None:
    path, fd = _lock_file(tmp_path)
    lock = flock.ProcessLock(fd)
    try:
        with flag_holder(path) as holder:
            with pytest.raises(flock.LockTimeout):
                lock.acquire(0.3)  # ran out: the waiter thread stays queued in the kernel
            with no_thread_switch():
                holder.let_go()  # the kernel gives the waiter the lock (or will), but it cannot run to act on it
                lock.acquire(0.3)  # before: LockTimeout at once, "held by another process", with no flock call
            # The waiter now runs: its flock returned because the description had the lock, which a caller
            # holds. Had it given it back, another process could take it while this one writes.
            assert _settled(lock)
            assert not free_for_others(path, within=0.05), "the waiter gave back a lock a caller holds"
        lock.release()
        assert free_for_others(path)
        lock.acquire(0.3)  # and ours again, the plain way
        assert not free_for_others(path, within=0.05)
        lock.release()
        assert free_for_others(path)
    finally:
        lock.close()
        os.close(fd)


def test_a_lock_taken_past_the_waiter_and_released_before_it_ran_is_not_kept(tmp_path: Path) -> None:
    path, fd = _lock_file(tmp_path)
    lock = flock.ProcessLock(fd)
    try:
        with flag_holder(path) as holder:
            with pytest.raises(flock.LockTimeout):
                lock.acquire(0.3)
            with no_thread_switch():
                holder.let_go()
                lock.acquire(0.3)
                lock.release()  # before the waiter ran: whatever its flock gets, nobody wants it
            assert _settled(lock)
            assert free_for_others(path), "the waiter kept a lock nobody in this process holds"
        lock.acquire(0.3)
        lock.release()
    finally:
        lock.close()
        os.close(fd)


def test_a_store_write_after_the_holder_left_is_written_while_its_waiter_is_starved(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", lock_timeout=0.3)
    try:
        store.create_run("r")
        chain = make_chain("r", 3)
        store.append("r", chain[0])
        with flag_holder(tmp_path / "s.db.lock") as holder:
            with pytest.raises(StoreBusyError, match=f"locked by process {holder.pid} for over 0.3 s"):
                store.append("r", chain[1])
            with no_thread_switch():
                holder.let_go()
                # before: StoreBusyError "stayed locked by another process" (or by this process's own pid)
                store.append("r", chain[1])
        store.append("r", chain[2])
        assert [e["hash"] for e in store.entries("r")] == [e["hash"] for e in chain]
    finally:
        store.close()
    assert free_for_others(tmp_path / "s.db.lock")


def _waiter(lock: flock.ProcessLock) -> int:
    """The native thread id of the lock's waiter thread."""
    thread = lock._waiter
    assert thread is not None and thread.name == WAITER_THREAD and thread.native_id is not None
    return thread.native_id


def test_a_stale_flock_of_the_waiter_is_not_handed_over_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    """The waiter's flock returns as soon as the description has the lock, also when a caller took it past the
    waiter. If that caller lets go and another process takes the lock before the waiter runs, handing the next
    caller the lock on the strength of that old flock would make two writers; it must wait for the lock again.
    And that caller waits the whole bound for the new holder: the wait's clock, which started when this process
    first queued, starts again (counted on, the write failed at once, blaming a holder of a moment)."""
    path, fd = _lock_file(tmp_path)
    lock = flock.ProcessLock(fd)
    try:
        with flag_holder(path) as first, flag_holder(path, holding=False) as second:
            with pytest.raises(flock.LockTimeout):
                lock.acquire(0.3)
            waiter = _waiter(lock)
            if not in_flock(waiter):
                pytest.skip("this kernel's /proc/<tid>/wchan does not show a thread waiting in flock")
            with no_thread_switch():
                first.let_go()
                lock.acquire(0.3)  # taken past the waiter, whose flock now returns: the description has the lock
                _spin_until_returned(waiter)
                lock.release()
                second.take()  # with the waiter's flock returned, and the waiter not yet run
                began = time.monotonic()
                with pytest.raises(flock.LockTimeout, match="over 0.3 s"):
                    lock.acquire(0.3)  # gives up the GIL: the waiter runs, and must not hand over its old flock
                waited = time.monotonic() - began
            assert flock.holder_pid(fd) == second.pid
            assert not free_for_others(path, within=0.05)
            second.let_go()
            assert _settled(lock)
            assert free_for_others(path), "the waiter kept the lock it got after the second holder"
        assert waited >= 0.3, f"failed after {waited:.3f} s, not the whole bound"
        lock.acquire(0.3)
        lock.release()
    finally:
        lock.close()
        os.close(fd)


def _spin_until_returned(tid: int) -> None:
    """Until thread ``tid`` is back from ``flock`` and asks for the GIL, which this thread keeps."""
    deadline = time.monotonic() + 30
    while not waits_for_gil(tid):
        assert time.monotonic() < deadline, "the waiter thread's flock did not return"
