"""Session 19: the shared stores of data directories removed again and again.

A process whose data directory was removed (a test suite making and deleting temporary homes, ``BITEXACT_HOME``
pointed at each) kept every removed directory's store open, SQLite connections and lock file, until it ended:
6 descriptors a directory, 306 open after 50 homes. A store no path names is now closed once no run uses it;
a run still open on it records to its end, and its exit declares the loss as before.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

import pytest

import bitexact
from bitexact.store import StoreError
from bitexact.sdk.failures import read_failures


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _one_run(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_HOME", str(home))
    with bitexact.run() as r:
        r.marker("x")
    assert r.sealed


def test_removed_data_directories_leave_no_descriptors_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _one_run(tmp_path / "home-0", monkeypatch)
    shutil.rmtree(tmp_path / "home-0")
    _one_run(tmp_path / "home-1", monkeypatch)  # the first store, closed here, and this one open
    shutil.rmtree(tmp_path / "home-1")
    first = _open_fds()
    for i in range(2, 32):
        _one_run(tmp_path / f"home-{i}", monkeypatch)
        shutil.rmtree(tmp_path / f"home-{i}")
    # Before: 6 more a directory (180 here).
    assert _open_fds() <= first


def test_a_run_open_on_a_removed_directory_keeps_its_store_to_its_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone, other = tmp_path / "gone", tmp_path / "other"
    monkeypatch.setenv("BITEXACT_HOME", str(gone))
    with bitexact.run() as r:
        r.marker("before")
        store = r.recorder.store
        shutil.rmtree(gone)
        _one_run(other, monkeypatch)  # another run starts: the removed directory's store is still r's
        handle = r.marker("after")
        assert handle.step(10) == 2  # written into its store, still open
        assert [e["kind"] for e in store.entries(r.run_id)] == ["run_meta", "marker", "marker"]
    assert not r.sealed
    assert r.run_id is not None
    assert [g["cause"] for g in read_failures(gone, r.run_id)] == ["storage_unavailable"]

    _one_run(other, monkeypatch)  # no run uses it any more: closed now
    with pytest.raises(StoreError):
        list(store.entries(r.run_id))


def test_a_removed_directory_s_store_a_given_up_write_still_waits_on_is_left_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's exit gave up on a batch waiting on another process's lock: a run started meanwhile leaves the
    store open for it (closing would wait out the lock inside that run's start, then fail the batch)."""
    from bitexact.store.sqlite import companions
    from store.lock_holder import held_by_another_process

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "60")
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    gone, other = tmp_path / "gone", tmp_path / "other"
    monkeypatch.setenv("BITEXACT_HOME", str(gone))
    with contextlib.ExitStack() as held:
        with bitexact.run() as r:
            assert r.recorder is not None
            store = r.recorder.store
            lock = companions(store.path, ".lock")[0]  # type: ignore[attr-defined]
            _pid, release = held.enter_context(held_by_another_process(lock))
            r.record("marker", {"note": "x" * ((1 << 20) + 1)})  # journaled; the writer waits on the lock
        assert not r.sealed  # the exit's drain gave up on it
        shutil.rmtree(gone)
        _one_run(other, monkeypatch)  # the store is no path's, yet its writer still needs it
        release.set()
        deadline = time.monotonic() + 60
        while len(list(store.entries(r.run_id))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # the writer's batch lands once the lock is free
        assert [e["kind"] for e in store.entries(r.run_id)] == ["run_meta", "marker"]
