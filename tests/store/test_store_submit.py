"""Pipelined appends: ``Store.submit`` queues, ``result()`` waits for durability.

A writer that keeps several appends in flight gets them committed in the
order it submitted them, each with its own outcome; a refused one takes the
entries chained after it down with it, never anything before it; closing
the store lets what was submitted land first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_chain import check_chain, make_chain, make_entry, tool_data

from bitexact.crypto import GENESIS
from bitexact.errors import RunNotFoundError, StaleHeadError, StoreError
from bitexact.store import RecordError, SQLiteStore, Store, open_store
from bitexact.store.base import SettledAppend


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "home")
    yield s
    s.close()


def test_submitted_entries_land_in_order_with_their_own_results(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 40)
    pending = [store.submit("r", [entry]) for entry in chain]  # all in flight before any wait
    results = [p.result(timeout=30)[0] for p in pending]
    assert [r.step for r in results] == list(range(40))
    assert [r.hash for r in results] == [e["hash"] for e in chain]
    assert all(p.done() for p in pending)
    check_chain(list(store.entries("r")))
    assert store.head("r") == (40, chain[-1]["hash"])


def test_pipelined_writers_on_their_own_runs_share_commits(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    runs = [f"w{n}" for n in range(6)]
    errors: list[BaseException] = []

    def writer(run: str) -> None:
        try:
            chain = make_chain(run, 60)
            window: list = []
            for entry in chain:
                window.append(store.submit(run, [entry]))
                if len(window) == 8:
                    window.pop(0).result(timeout=30)
            for p in window:
                p.result(timeout=30)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    try:
        for run in runs:
            store.create_run(run)
        threads = [threading.Thread(target=writer, args=(run,)) for run in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        for run in runs:
            entries = list(store.entries(run))
            check_chain(entries)
            assert len(entries) == 60
        transactions, appends = store.commit_stats
        assert appends == 6 * 60
        assert transactions < appends, "pipelined appends were never grouped into one commit"
        assert store.pending_appends == 0
    finally:
        store.close()


def test_a_refused_submission_takes_down_only_what_is_chained_after_it(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 6)
    forged = make_entry("r", 3, "f" * 64, tool_data(3))  # step 3 that does not follow step 2
    pending = [store.submit("r", [e]) for e in chain[:3]]
    pending.append(store.submit("r", [forged]))
    pending += [store.submit("r", [e]) for e in chain[4:]]
    assert [p.result(timeout=30)[0].step for p in pending[:3]] == [0, 1, 2]
    for p in pending[3:]:
        with pytest.raises(StaleHeadError):
            p.result(timeout=30)
    assert store.head("r") == (3, chain[2]["hash"])
    check_chain(list(store.entries("r")))


def test_a_malformed_entry_is_refused_at_submit_and_nothing_is_queued(store: Store) -> None:
    store.create_run("r")
    entry = make_chain("r", 1)[0]
    del entry["hash"]
    with pytest.raises(RecordError) as caught:
        store.submit("r", [entry])
    assert caught.value.field == "hash"
    with pytest.raises(RecordError):
        store.submit("r", [])
    assert isinstance(store, SQLiteStore) and store.pending_appends == 0
    assert store.head("r") == (0, GENESIS)


def test_an_unknown_run_fails_its_own_submission(store: Store) -> None:
    pending = store.submit("nobody", make_chain("nobody", 1))
    with pytest.raises(RunNotFoundError):
        pending.result(timeout=30)


def test_close_lets_submitted_entries_land(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(home)
    store.create_run("r")
    chain = make_chain("r", 25)
    for entry in chain:
        store.submit("r", [entry])  # never waited for
    store.close()
    with pytest.raises(StoreError):
        store.submit("r", make_chain("r", 1, start=25, prev=chain[-1]["hash"]))
    reopened = open_store(home)
    try:
        assert reopened.head("r") == (25, chain[-1]["hash"])
        check_chain(list(reopened.entries("r")))
    finally:
        reopened.close()


def test_without_group_commit_submit_is_settled_at_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", group_commit=False)
    try:
        store.create_run("r")
        chain = make_chain("r", 2)
        first = store.submit("r", [chain[0]])
        assert isinstance(first, SettledAppend) and first.done()
        assert first.result()[0].hash == chain[0]["hash"]
        stale = store.submit("r", [chain[0]])
        with pytest.raises(StaleHeadError):
            stale.result()
    finally:
        store.close()
