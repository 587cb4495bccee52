"""Checkpoints run on a thread of their own: no commit copies the WAL, yet the WAL still starts over."""

from __future__ import annotations

import shutil
import sqlite3
import stat
import time
from pathlib import Path

from store_chain import check_chain, make_chain

from bitexact.store import SQLiteStore
from bitexact.store.sqlite_schema import connect
from bitexact.store.walcheckpoint import PRESIZE_FRAMES, WalCheckpointer, presize


def _wait_for(condition, what: str, seconds: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _wal_frames(path: Path) -> int:
    """Frames in the WAL now (a passive checkpoint reports it; -1 while the thread's own pass holds the lock)."""
    conn = sqlite3.connect(path)
    try:
        frames: list[int] = []

        def read() -> bool:
            frames.append(int(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]))
            return frames[-1] >= 0

        _wait_for(read, "a checkpoint of our own to run")
        return frames[-1]
    finally:
        conn.close()


def test_the_writer_never_checkpoints_inside_a_commit(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    try:
        assert store._writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    finally:
        store.close()


def test_a_long_wal_is_flagged_and_the_next_commit_starts_it_over(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(path)
    own = connect(str(path))
    try:
        store._wal.restart_frames = 10**9  # the thread stays asleep: the test runs the pass itself
        store.create_run("r")
        chain = make_chain("r", 41)
        for entry in chain[:40]:
            store.append("r", entry)
        before = _wal_frames(path)
        store._wal.restart_frames, store._wal.pass_frames = 20, 10
        store._wal._pass(own)
        assert store._wal.restart_due, f"{before} frames is past 20: a restart is due"
        store.append("r", chain[40])  # its leader copies what is left, and its transaction restarts the WAL
        assert not store._wal.restart_due
        assert _wal_frames(path) < before, "the WAL started over"
        check_chain(list(store.entries("r")))
    finally:
        own.close()
        store.close()


def test_the_thread_wakes_once_enough_frames_piled_up(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    try:
        store._wal.restart_frames, store._wal.pass_frames = 20, 10
        store.create_run("r")
        for entry in make_chain("r", 12):
            store.append("r", entry)
        _wait_for(lambda: store._wal.passes > 0, "the checkpoint thread to run a pass")
    finally:
        store.close()


def test_a_shared_commit_wakes_the_thread_sooner_than_a_lone_one(tmp_path: Path) -> None:
    checkpointer = WalCheckpointer(lambda: connect(str(tmp_path / "s.db")), pass_frames=100, busy_pass_frames=10)
    try:
        checkpointer.committed(12, appends=1)
        assert checkpointer._thread is None, "12 frames from a lone writer's commit are short of its 100"
        checkpointer.committed(0, appends=3)
        assert checkpointer._thread is not None, "12 frames are past 10 once a commit carried several appends"
        assert checkpointer._added == 0
    finally:
        checkpointer.stop()


def test_close_stops_the_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    store.create_run("r")
    store._wal.restart_frames, store._wal.pass_frames = 2, 1
    store.append("r", make_chain("r", 1)[0])
    thread = store._wal._thread
    assert thread is not None and thread.is_alive()
    store.close()
    assert not thread.is_alive()


def test_without_a_thread_connection_the_automatic_checkpoint_comes_back(tmp_path: Path) -> None:
    writer = connect(str(tmp_path / "s.db"))
    writer.execute("PRAGMA wal_autocheckpoint = 0")

    def refuse() -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    wal = WalCheckpointer(refuse, fallback_pages=1234)
    wal.committed(wal.restart_frames)
    assert wal._thread is not None
    wal._thread.join(30)
    wal.restart(writer)
    assert writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1234
    writer.close()


# -- the WAL grown before the first commit -------------------------------


def test_the_first_commit_grows_the_wal_past_the_restart_point(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    try:
        wal = Path(f"{tmp_path / 's.db'}-wal")
        store.create_run("r")
        before = wal.stat().st_size
        store.append("r", make_chain("r", 1)[0])
        target = 32 + PRESIZE_FRAMES * (24 + 4096)
        assert before < target <= wal.stat().st_size
        assert stat.S_IMODE(wal.stat().st_mode) == 0o600
    finally:
        store.close()


def test_a_commit_after_the_wal_was_truncated_grows_it_again(tmp_path: Path) -> None:
    # A redaction truncates the WAL (no copy of the destroyed value may stay in it);
    # the next commit grows it back, so commits again overwrite rather than extend it.
    store = SQLiteStore(tmp_path / "s.db")
    try:
        wal = Path(f"{tmp_path / 's.db'}-wal")
        store.create_run("r")
        chain = make_chain("r", 2)
        store.append("r", chain[0])
        store.flush_destroyed()
        assert wal.stat().st_size == 0
        store.append("r", chain[1])
        assert wal.stat().st_size >= 32 + PRESIZE_FRAMES * (24 + 4096)
        check_chain(list(store.entries("r")))
    finally:
        store.close()


def test_presize_only_writes_past_the_end(tmp_path: Path) -> None:
    wal = tmp_path / "w"
    wal.write_bytes(b"frames already here")
    assert presize(wal, 512, frames=4)
    data = wal.read_bytes()
    assert data.startswith(b"frames already here") and len(data) == 32 + 4 * (24 + 512)
    assert set(data[len(b"frames already here"):]) == {0}
    assert not presize(wal, 512, frames=4)  # already that long: nothing written


def test_a_crash_image_with_a_grown_wal_recovers_every_committed_entry(tmp_path: Path) -> None:
    """The files as a kill -9 leaves them: committed frames, then the zeros the WAL was grown with."""
    (tmp_path / "live").mkdir()
    store = SQLiteStore(tmp_path / "live" / "s.db")
    store._wal.restart_frames = store._wal.pass_frames = 10**9  # every frame stays in the WAL only
    try:
        store.create_run("r")
        chain = make_chain("r", 40)
        for entry in chain:
            store.append("r", entry)
        image = tmp_path / "image"
        image.mkdir()
        for suffix in ("", "-wal"):  # no -shm: the reopening connection must rebuild it from the WAL
            shutil.copyfile(f"{tmp_path / 'live' / 's.db'}{suffix}", f"{image / 's.db'}{suffix}")
    finally:
        store.close()
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(image / "s.db", alone / "s.db")
    raw = sqlite3.connect(alone / "s.db")
    assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'entries'").fetchone()[0] == 0  # all in the WAL
    raw.close()
    with SQLiteStore(image / "s.db") as recovered:
        assert recovered.head("r") == (40, chain[-1]["hash"])
        check_chain(list(recovered.entries("r")))
