"""Concurrent writers never fork a chain: threads and processes racing on one head,
and appends grouped into one transaction each settled on its own."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from store_chain import check_chain, digest, make_chain, make_checkpoint, make_entry, tool_data

from bitexact.crypto import GENESIS, SigningKey
from bitexact.errors import RunNotFoundError, StaleHeadError
from bitexact.store import SQLiteStore, open_store

HELPER = Path(__file__).with_name("store_writer_proc.py")


def _race(store: SQLiteStore, run: str, entries: list[dict]) -> list[object]:
    """Append each entry from its own thread, all released at once; return results or errors."""
    outcomes: list[object] = [None] * len(entries)
    barrier = threading.Barrier(len(entries))

    def go(i: int) -> None:
        barrier.wait()
        try:
            outcomes[i] = store.append(run, entries[i])
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test inspects
            outcomes[i] = exc

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(entries))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


def test_threads_racing_for_one_head_leave_exactly_one_winner(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    for attempt in range(5):
        run = f"race-{attempt}"
        store.create_run(run)
        contenders = [make_entry(run, 0, GENESIS, tool_data(i)) for i in range(8)]
        outcomes = _race(store, run, contenders)
        winners = [i for i, o in enumerate(outcomes) if not isinstance(o, Exception)]
        assert len(winners) == 1, outcomes
        assert all(isinstance(o, StaleHeadError) for i, o in enumerate(outcomes) if i != winners[0])
        assert list(store.entries(run)) == [contenders[winners[0]]]
    store.close()


def test_a_thread_extending_a_stale_head_after_a_race_is_refused(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    store.create_run("r")
    first = make_chain("r", 2)
    store.append("r", first[0])
    # Two threads both read head (1, h0) and build step 1; only one may land.
    a = make_entry("r", 1, first[0]["hash"], tool_data(10))
    b = make_entry("r", 1, first[0]["hash"], tool_data(11))
    outcomes = _race(store, "r", [a, b])
    assert sorted(type(o).__name__ for o in outcomes) == ["AppendResult", "StaleHeadError"]
    assert store.head("r")[0] == 2
    check_chain(list(store.entries("r")))
    store.close()


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    """Take SQLite's write lock from outside the store, so its next commit waits."""
    raw = sqlite3.connect(path, isolation_level=None, timeout=30)
    raw.execute("BEGIN IMMEDIATE")
    return raw


def _writer_lock_held(path: Path) -> bool:
    """True while some store writer is inside a write transaction (it holds the lock file)."""
    fd = os.open(f"{path}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock if we took it
    return False


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.005)


def test_appends_queued_during_a_commit_share_one_transaction_and_fail_alone(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    for run in ("a", "b", "c", "d"):
        store.create_run(run)
    raw = _hold_write_lock(store.path)
    results: dict[str, object] = {}

    def append(name: str, run: str, entry: dict, checkpoint: dict | None = None) -> None:
        try:
            results[name] = store.append(run, entry, checkpoint=checkpoint)
        except Exception as exc:  # noqa: BLE001
            results[name] = exc

    a0, a1, a2 = make_chain("a", 3)
    key = SigningKey.generate()
    # The leader takes its batch (just this append) and blocks on the lock.
    leader = threading.Thread(target=append, args=("leader", "d", make_entry("d", 0, GENESIS, tool_data(0))))
    leader.start()
    # Once the leader holds the writer and has taken its batch, later appends queue.
    _wait_for(lambda: _writer_lock_held(store.path) and store.queued_appends == 0, "the leader to take its batch")
    followers = {
        "a0": ("a", a0),
        "a1": ("a", a1),  # extends a0 inside the same batch
        "a2": ("a", a2, make_checkpoint(key, "a", 0, 1, a0["hash"])),  # checkpoints a0, also in the batch
        "b-good": ("b", make_entry("b", 0, GENESIS, tool_data(1))),
        "b-dup": ("b", make_entry("b", 0, GENESIS, tool_data(2))),  # loses to b-good
        "c-fork": ("c", make_entry("c", 0, "ab" * 32, tool_data(3))),  # wrong prev
        "ghost": ("ghost", make_entry("ghost", 0, GENESIS, tool_data(4))),  # unknown run
    }
    threads = []
    for name, (run, entry, *checkpoint) in followers.items():
        t = threading.Thread(target=append, args=(name, run, entry, *checkpoint))
        t.start()
        threads.append(t)
        _wait_for(lambda n=len(threads): store.queued_appends == n, f"{name} to queue")
    raw.execute("COMMIT")
    raw.close()
    for t in [leader, *threads]:
        t.join()
    assert store.commit_stats == (2, 8)  # the leader's batch, then all seven followers in one
    assert [results[n].step for n in ("a0", "a1", "a2")] == [0, 1, 2]
    assert results["b-good"].step == 0
    assert isinstance(results["b-dup"], StaleHeadError)
    assert isinstance(results["c-fork"], StaleHeadError)
    assert isinstance(results["ghost"], RunNotFoundError)
    assert results["leader"].step == 0
    assert list(store.entries("a")) == [a0, a1, a2]
    assert [c["head_hash"] for c in store.checkpoints("a")] == [a0["hash"]]
    assert list(store.entries("b")) == [followers["b-good"][1]]
    assert store.head("c") == (0, GENESIS)
    store.close()


def test_group_commit_uses_fewer_transactions_than_appends(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    runs = [f"w{i}" for i in range(8)]
    for run in runs:
        store.create_run(run)
    chains = [make_chain(run, 40) for run in runs]
    raw = _hold_write_lock(store.path)  # make sure the writers pile up at least once

    def write(run: str, chain: list[dict]) -> None:
        for entry in chain:
            store.append(run, entry)

    threads = [threading.Thread(target=write, args=(r, c)) for r, c in zip(runs, chains)]
    for t in threads:
        t.start()
    _wait_for(lambda: store.pending_appends == 8, "all writers to be waiting on the held lock")
    raw.execute("COMMIT")
    raw.close()
    for t in threads:
        t.join()
    transactions, appends = store.commit_stats
    assert appends == 8 * 40
    assert transactions < appends
    for run, chain in zip(runs, chains):
        assert list(store.entries(run)) == chain
    store.close()


def _helper(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HELPER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HELPER.parent,
    )


def test_processes_racing_for_one_head_leave_exactly_one_winner(tmp_path: Path) -> None:
    home = tmp_path / "home"
    runs = [f"proc-race-{i}" for i in range(6)]
    store = open_store(home)
    for run in runs:
        store.create_run(run)
    go = tmp_path / "go"
    procs = [_helper("race", str(home), str(go), *runs) for _ in range(2)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    go.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outputs.append(out.split("\n"))
    for run in runs:
        lines = [line for out in outputs for line in out if line.split()[1:2] == [run]]
        oks = [line for line in lines if line.startswith("ok ")]
        assert len(lines) == 2 and len(oks) == 1, lines
        assert [digest(e) for e in store.entries(run)] == [oks[0].split()[2]]
    store.close()


def test_processes_and_threads_sharing_one_run_build_one_chain(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(home)
    store.create_run("shared")
    procs = [_helper("shared", str(home), "shared", "15", "2") for _ in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "done", err
    entries = list(store.entries("shared"))
    assert len(entries) == 3 * 2 * 15
    check_chain(entries)
    assert store.head("shared") == (90, entries[-1]["hash"])
    store.close()
