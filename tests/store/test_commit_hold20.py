"""The store's hold on its writer (``_exclusive``), which every group commit enters: a class since perf20, where
it was two nested ``@contextmanager`` generators. What it must still do: give the writer connection with the
store's thread lock and the cross-process lock file both held, and give both back however the block ends, also
when taking the second one fails (another process holds the lock file, the store is closed).

The other process is real (spawned, tests/store/lock_holder.py); nothing waits on machine speed: every wait
that must run out is against a lock never released in time, every wait that must succeed is given 30 s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lock_holder import free_for_others, held_by_another_process
from store_chain import make_chain

from bitexact.crypto import GENESIS
from bitexact.store import SQLiteStore, StoreBusyError, StoreError


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "s.db", lock_timeout=0.3)
    opened.create_run("r")
    try:
        yield opened
    finally:
        opened.close()


def _lock_file(tmp_path: Path) -> Path:
    return tmp_path / "s.db.lock"


def _until(condition: Callable[[], bool], within: float = 30.0) -> bool:
    """True once ``condition`` holds, polled for at most ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.005)
    return False


def test_the_hold_is_the_writer_with_both_locks_and_an_append_waits_for_it(store: SQLiteStore, tmp_path: Path) -> None:
    chain = make_chain("r", 1)
    appended: list[object] = []
    with store._exclusive() as conn:
        assert conn is store._writer
        assert store._write_lock.locked()
        assert not free_for_others(_lock_file(tmp_path), within=0.05)  # another process cannot write meanwhile
        writer = threading.Thread(target=lambda: appended.append(store.append("r", chain[0])))
        writer.start()
        assert _until(lambda: store.pending_appends == 1)
        assert store.head("r") == (0, GENESIS)  # it cannot commit while the hold is kept
    writer.join(30)
    assert len(appended) == 1 and store.head("r") == (1, chain[0]["hash"])
    assert not store._write_lock.locked()
    assert free_for_others(_lock_file(tmp_path))


def test_an_error_in_the_block_gives_both_locks_back(store: SQLiteStore, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="inside the hold"):
        with store._exclusive():
            raise RuntimeError("inside the hold")
    assert not store._write_lock.locked()
    assert free_for_others(_lock_file(tmp_path))
    chain = make_chain("r", 1)
    store.append("r", chain[0])
    assert store.head("r") == (1, chain[0]["hash"])


def test_a_lock_file_another_process_holds_leaves_the_thread_lock_free(store: SQLiteStore, tmp_path: Path) -> None:
    chain = make_chain("r", 2)
    with held_by_another_process(_lock_file(tmp_path)) as (pid, _):
        with pytest.raises(StoreBusyError, match=f"locked by process {pid}"):
            with store._exclusive():
                pytest.fail("the hold was given while another process held the lock file")
        assert not store._write_lock.locked()  # else every later write in this process would hang
        with pytest.raises(StoreBusyError):
            store.append("r", chain[0])  # refused again, not hung on the thread lock
        assert not store._write_lock.locked()
    assert [result.step for result in store.append_many("r", chain)] == [0, 1]


def test_a_closed_store_refuses_the_hold_and_keeps_no_lock(store: SQLiteStore, tmp_path: Path) -> None:
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        with store._exclusive():
            pytest.fail("a closed store gave its writer")
    assert not store._write_lock.locked()
    assert free_for_others(_lock_file(tmp_path))
