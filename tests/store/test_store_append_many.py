"""append_many: consecutive entries of one run in one transaction, all or none."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_chain import check_chain, make_chain, make_checkpoint

from bitexact.crypto import SigningKey
from bitexact.errors import StaleHeadError
from bitexact.store import RecordError, Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "home")
    yield s
    s.close()


def test_a_batch_lands_whole_and_chained(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 10)
    results = store.append_many("r", chain)
    assert [r.step for r in results] == list(range(10))
    assert [r.hash for r in results] == [e["hash"] for e in chain]
    check_chain(list(store.entries("r")))
    assert store.head("r") == (10, chain[-1]["hash"])


def test_a_break_in_the_middle_writes_nothing(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 6)
    broken = chain[:3] + chain[4:]  # step 4 does not follow step 2
    with pytest.raises(StaleHeadError):
        store.append_many("r", broken)
    assert store.head("r")[0] == 0
    assert list(store.entries("r")) == []
    store.append_many("r", chain)  # the whole, correct batch still goes in afterwards
    assert store.head("r")[0] == 6


def test_checkpoints_ride_with_their_entries(store: Store) -> None:
    key = SigningKey.generate()
    store.create_run("r")
    chain = make_chain("r", 4)
    cp0 = make_checkpoint(key, "r", 0, 2, chain[1]["hash"])
    store.append_many("r", chain, [None, cp0, None, None])
    assert [c["steps"] for c in store.checkpoints("r")] == [2]


def test_a_bad_checkpoint_fails_the_whole_batch(store: Store) -> None:
    key = SigningKey.generate()
    store.create_run("r")
    chain = make_chain("r", 3)
    wrong = make_checkpoint(key, "r", 0, 2, "ab" * 32)
    with pytest.raises(RecordError):
        store.append_many("r", chain, [None, wrong, None])
    assert store.head("r")[0] == 0 and store.checkpoints("r") == []


def test_mismatched_checkpoint_slots_are_refused(store: Store) -> None:
    store.create_run("r")
    with pytest.raises(RecordError) as caught:
        store.append_many("r", make_chain("r", 3), [None])
    assert caught.value.field == "checkpoints"
    with pytest.raises(RecordError):
        store.append_many("r", [])


def test_batches_from_threads_on_other_runs_commit_together_without_mixing(store: Store) -> None:
    runs = [f"r{i}" for i in range(8)]
    for run in runs:
        store.create_run(run)

    def work(run: str) -> None:
        chain = make_chain(run, 40)
        for first in range(0, 40, 8):
            store.append_many(run, chain[first : first + 8])

    threads = [threading.Thread(target=work, args=(run,)) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for run in runs:
        entries = list(store.entries(run))
        assert len(entries) == 40
        check_chain(entries)


def test_a_stale_batch_among_good_ones_fails_alone(store: Store) -> None:
    store.create_run("a")
    store.create_run("b")
    good = make_chain("a", 5)
    stale = make_chain("b", 5, start=1, prev="cd" * 32)
    errors: list[BaseException] = []

    def bad() -> None:
        try:
            store.append_many("b", stale)
        except StaleHeadError as exc:
            errors.append(exc)

    thread = threading.Thread(target=bad)
    thread.start()
    store.append_many("a", good)
    thread.join()
    assert len(errors) == 1
    assert store.head("a")[0] == 5 and store.head("b")[0] == 0
