"""entry25: ``append``/``append_many``/``submit`` take the entries' canonical bytes (``encoded``) from the write path.

Given, they are the row as they are (the store does not canonicalize the entry again); every other check (the
shape, the chain, the row's size) runs as without them; a slot of None, or no ``encoded`` at all, is the
store's own canonicalization, as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_chain import make_chain

from bitexact.canon import canonicalize
from bitexact.errors import StaleHeadError
from bitexact.store import RecordError, Store, open_store
from bitexact.store.checks import MAX_ROW_BYTES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    s = open_store(home)
    yield s
    s.close()


def _bodies(home: Path, run_id: str) -> list[bytes]:
    conn = sqlite3.connect(f"file:{home / 'bitexact.db'}?mode=ro", uri=True)
    try:
        return [bytes(b) for (b,) in conn.execute("SELECT body FROM entries WHERE run_id = ? ORDER BY step",
                                                  (run_id,))]
    finally:
        conn.close()


def test_the_bytes_given_are_the_row(store: Store, home: Path) -> None:
    store.create_run("r")
    chain = make_chain("r", 3)
    # The canonical bytes with a space the store's own canonicalization never writes: kept as given.
    given = [canonicalize(e)[:-1] + b" }" for e in chain]
    store.append_many("r", chain, encoded=given)
    assert _bodies(home, "r") == given
    assert list(store.entries("r")) == chain  # read back as the entries they are


def test_a_slot_of_none_and_no_encoded_are_the_stores_own_bytes(store: Store, home: Path) -> None:
    store.create_run("r")
    chain = make_chain("r", 4)
    store.append_many("r", chain[:2], encoded=[None, canonicalize(chain[1])])
    store.append("r", chain[2])
    store.append("r", chain[3], encoded=None)
    assert _bodies(home, "r") == [canonicalize(e) for e in chain]


def test_append_and_submit_take_them_too(store: Store, home: Path) -> None:
    store.create_run("r")
    chain = make_chain("r", 2)
    store.append("r", chain[0], encoded=canonicalize(chain[0]) + b" ")
    store.submit("r", [chain[1]], encoded=[canonicalize(chain[1]) + b"  "]).result()
    assert _bodies(home, "r") == [canonicalize(chain[0]) + b" ", canonicalize(chain[1]) + b"  "]


def test_the_other_checks_still_run(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 3)
    bad = {**chain[0], "prev": "not hex"}
    with pytest.raises(RecordError, match="entry.prev must be 64 lowercase hex"):
        store.append_many("r", [bad], encoded=[canonicalize(chain[0])])
    with pytest.raises(RecordError, match="entry.alg"):
        store.append("r", {**chain[0], "alg": "md5"}, encoded=canonicalize(chain[0]))
    with pytest.raises(StaleHeadError):
        store.append("r", chain[1], encoded=canonicalize(chain[1]))
    with pytest.raises(RecordError, match="over the") as refused:
        store.append("r", chain[0], encoded=b" " * (MAX_ROW_BYTES + 1))
    assert refused.value.field == "entry"
    assert store.head("r") == (0, chain[0]["prev"])


def test_a_count_of_encoded_slots_that_is_not_the_entries_is_refused(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 2)
    with pytest.raises(RecordError, match="1 encoded slots for 2 entries") as refused:
        store.append_many("r", chain, encoded=[None])
    assert refused.value.field == "encoded"
    with pytest.raises(RecordError, match="3 encoded slots for 2 entries"):
        store.submit("r", chain, encoded=[None, None, None])
    assert store.head("r")[0] == 0
