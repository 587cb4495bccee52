"""Session 20: a store whose data directory was removed is closed when its last run ends.

Session 19 closed such a store at the next run's start: a run whose directory was removed while it recorded
left the store's SQLite connections and lock file (6 descriptors) open after its end, until another run
started in the process (or forever, for a process that ran no other). It is closed at the end of the last run
using it now; a run still open on it keeps it to its end, and a run starting on it (handed the store, not yet
live) keeps it too. Descriptors counted from /proc/self/fd.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import bitexact
from bitexact.sdk import stores


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _one_run(home: Path) -> None:
    with bitexact.run(home=str(home)) as r:
        r.marker("x")
    assert r.sealed


def test_a_store_removed_during_its_run_is_closed_when_the_run_ends(tmp_path: Path) -> None:
    _one_run(tmp_path / "kept")  # the process's own lazily opened files, and a store that stays
    before = _open_fds()
    with bitexact.run(home=str(tmp_path / "gone")) as r:
        r.marker("x")
        assert _open_fds() > before  # its store's connections and lock file
        shutil.rmtree(tmp_path / "gone")
    assert not r.sealed  # the loss is declared as before
    assert _open_fds() == before  # before: 6 more, until another run started


def test_a_run_still_open_on_the_removed_store_keeps_it_to_its_end(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    _one_run(tmp_path / "kept")
    before = _open_fds()
    with bitexact.run(home=str(gone)) as outer:
        outer.marker("before")
        with bitexact.run(home=str(gone)) as inner:
            inner.marker("x")
            shutil.rmtree(gone)
        store = outer.recorder.store
        assert outer.marker("after").step(10) == 2  # the inner run's end left the store to the outer run
        assert [e["kind"] for e in store.entries(outer.run_id)] == ["run_meta", "marker", "marker"]
    assert not inner.sealed and not outer.sealed
    assert _open_fds() == before


def test_a_run_starting_on_the_removed_store_keeps_it_until_it_is_live(tmp_path: Path) -> None:
    # The window between a run taking the shared store (recorder_for) and registering as live: another
    # thread's run ending (or starting) then must not close the store under it.
    gone, kept = tmp_path / "gone", tmp_path / "kept"
    _one_run(kept)
    before = _open_fds()
    recorder, _ = stores.recorder_for(gone, starting=True)
    held = _open_fds()
    shutil.rmtree(gone)
    _one_run(kept)  # another run's start and end each look for stores no path names
    assert _open_fds() == held
    assert recorder.store.runs() == []  # open: a closed store refuses the read
    stores.started(recorder)  # the start is over (live, or failed): the store is its live runs' alone
    _one_run(kept)
    assert _open_fds() == before
