"""The Store contract on the SQLite store: runs, appends at the head, reads, checkpoints,
rewrites, custody, keys, and refusals of malformed input that name the field."""

from __future__ import annotations

import copy
import os
import sqlite3
import tracemalloc
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from store_chain import body_hash, check_chain, make_chain, make_checkpoint, make_entry, tool_data

from bitexact.canon import canonicalize
from bitexact.crypto import GENESIS, SigningKey
from bitexact.errors import RunNotFoundError, StaleHeadError, StoreError
from bitexact.store.sqlite_schema import SCHEMA_VERSION
from bitexact.store import (
    AppendResult,
    ConflictError,
    EntryNotFoundError,
    RecordError,
    SQLiteStore,
    StaleCheckpointError,
    Store,
    open_store,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(tmp_path / "home")
    yield s
    s.close()


@pytest.fixture
def key() -> SigningKey:
    return SigningKey.generate()


def _append_chain(store: Store, run: str, n: int) -> list[dict]:
    chain = make_chain(run, n)
    for entry in chain:
        store.append(run, entry)
    return chain


# -- runs -------------------------------------------------------------


def test_a_new_run_is_empty_with_the_genesis_head(store: Store) -> None:
    store.create_run("r1", {"name": "claims triage"})
    assert store.head("r1") == (0, GENESIS)
    info = store.run("r1")
    assert (info.run_id, info.steps, info.head_hash, info.sealed) == ("r1", 0, GENESIS, False)
    assert info.meta == {"name": "claims triage"}
    assert info.kinds == {}
    assert datetime.fromisoformat(info.started_at).utcoffset() is not None
    assert list(store.entries("r1")) == []
    assert store.checkpoints("r1") == []
    assert store.custody("r1") == []


def test_create_run_refuses_an_existing_run_id(store: Store) -> None:
    store.create_run("r1")
    _append_chain(store, "r1", 2)
    with pytest.raises(StoreError, match="already exists"):
        store.create_run("r1", {"name": "again"})
    assert store.head("r1")[0] == 2  # the existing run is untouched
    assert store.run("r1").meta == {}


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.head("nope"),
        lambda s: s.run("nope"),
        lambda s: s.entries("nope"),
        lambda s: s.entry("nope", 0),
        lambda s: s.checkpoints("nope"),
        lambda s: s.custody("nope"),
        lambda s: s.add_custody("nope", {"actor": "a"}),
        lambda s: s.append("nope", make_entry("nope", 0, GENESIS, tool_data(0))),
        lambda s: s.rewrite_entry("nope", 0, make_entry("nope", 0, GENESIS, tool_data(0))),
    ],
)
def test_an_unknown_run_is_refused_with_run_not_found(store: Store, call) -> None:
    with pytest.raises(RunNotFoundError, match="nope"):
        call(store)


def test_add_checkpoint_to_an_unknown_run_is_refused(store: Store, key: SigningKey) -> None:
    with pytest.raises(RunNotFoundError):
        store.add_checkpoint("nope", make_checkpoint(key, "nope", 0, 0, GENESIS))


def test_runs_lists_newest_first_with_kind_counts_and_seal(store: Store) -> None:
    for run in ("first", "second", "third"):
        store.create_run(run)
    chain = make_chain("second", 3)
    for entry in chain:
        store.append("second", entry)
    end = make_entry("second", 3, chain[-1]["hash"], {"steps": 4}, kind="run_end")
    store.append("second", end)
    runs = store.runs()
    assert [r.run_id for r in runs] == ["third", "second", "first"]
    second = runs[1]
    assert second.steps == 4 and second.head_hash == end["hash"]
    assert second.kinds == {"tool_call": 3, "run_end": 1}
    assert second.sealed is True
    assert runs[0].sealed is False
    assert second.updated_at >= second.started_at


def test_run_id_must_be_a_printable_non_empty_string(store: Store) -> None:
    for bad in ("", "a\nb", 7, "x" * 300):
        with pytest.raises(RecordError) as caught:
            store.create_run(bad)  # type: ignore[arg-type]
        assert caught.value.field == "run_id"


def test_meta_must_be_a_json_object(store: Store) -> None:
    with pytest.raises(RecordError) as caught:
        store.create_run("r", ["not", "an", "object"])  # type: ignore[arg-type]
    assert caught.value.field == "meta"


# -- appends ----------------------------------------------------------


def test_append_returns_step_and_hash_and_moves_the_head(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 3)
    for entry in chain:
        result = store.append("r", entry)
        assert result == AppendResult(entry["step"], entry["hash"])
        assert store.head("r") == (entry["step"] + 1, entry["hash"])


def test_stored_entries_round_trip_exactly_in_step_order(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 5)
    got = list(store.entries("r"))
    assert got == chain
    assert [canonicalize(e) for e in got] == [canonicalize(e) for e in chain]
    assert store.entry("r", 3) == chain[3]
    assert list(store.entries("r", 1, 3)) == chain[1:3]
    assert list(store.entries("r", 4)) == chain[4:]
    assert list(store.entries("r", 2, 99)) == chain[2:]
    check_chain(got)


def test_entries_streams_past_page_boundaries_in_order(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 600)  # more than two 256-entry pages
    streamed = store.entries("r")
    assert not isinstance(streamed, list)
    assert [e["step"] for e in streamed] == list(range(600))
    assert list(store.entries("r", 250, 520)) == chain[250:520]


def test_entries_streams_in_constant_memory(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    store.create_run("big")
    prev = GENESIS
    for step in range(1500):
        entry = make_entry("big", step, prev, tool_data(step, pad=4000))
        store.append("big", entry)
        prev = entry["hash"]
    tracemalloc.start()
    try:
        count = 0
        for entry in store.entries("big"):
            count += len(entry["data"]["result"]["notes"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        store.close()
    assert count == 1500 * 4000
    # The run is ~7 MB of JSON (far more as dicts); a page is 256 entries.
    assert peak < 3_000_000, f"peak {peak} bytes: entries() is not streaming"


def test_entries_stop_defaults_to_the_head_when_iteration_starts(store: Store) -> None:
    store.create_run("r")
    chain = make_chain("r", 4)
    for entry in chain[:2]:
        store.append("r", entry)
    stream = store.entries("r")
    for entry in chain[2:]:
        store.append("r", entry)
    assert [e["step"] for e in stream] == [0, 1]


def test_entry_past_the_head_is_entry_not_found(store: Store) -> None:
    store.create_run("r")
    _append_chain(store, "r", 2)
    with pytest.raises(EntryNotFoundError):
        store.entry("r", 2)
    with pytest.raises(RecordError) as caught:
        store.entry("r", -1)
    assert caught.value.field == "step"


def test_a_wrong_step_is_stale_and_writes_nothing(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    for bad_step in (1, 3):  # behind and ahead of the head
        entry = make_entry("r", bad_step, chain[-1]["hash"], tool_data(9))
        with pytest.raises(StaleHeadError):
            store.append("r", entry)
    assert store.head("r") == (2, chain[-1]["hash"])
    assert list(store.entries("r")) == chain


@pytest.mark.parametrize(("step", "prev_of", "why"), [
    (1, 1, "another writer appended first"),  # a step the run has taken
    (3, 1, "step 2 was never appended"),  # one past the head
    (5, 1, "steps 2 to 4 were never appended"),
    (2, 0, "its prev is not the head's hash"),  # the head's step, built on another entry
])
def test_a_refusal_says_which_way_the_entry_misses_the_head(store: Store, step: int, prev_of: int, why: str) -> None:
    """An entry ahead of the head, or built on another chain, was refused saying "another writer appended first"."""
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    with pytest.raises(StaleHeadError, match=why):
        store.append("r", make_entry("r", step, chain[prev_of]["hash"], tool_data(9)))
    assert store.head("r") == (2, chain[-1]["hash"])


def test_a_wrong_prev_is_stale_and_writes_nothing(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    fork = make_entry("r", 2, chain[0]["hash"], tool_data(9))  # chains onto step 0, not the head
    with pytest.raises(StaleHeadError, match="does not extend the head"):
        store.append("r", fork)
    with pytest.raises(StaleHeadError):
        store.append("r", make_entry("r", 0, GENESIS, tool_data(1)))  # a second genesis
    assert store.head("r") == (2, chain[-1]["hash"])
    assert store.run("r").kinds == {"tool_call": 2}


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda e: e.update(run_id="other"), "run_id"),
        (lambda e: e.update(step=-1), "step"),
        (lambda e: e.update(step=True), "step"),
        (lambda e: e.update(step="0"), "step"),
        (lambda e: e.update(prev="ab" * 16), "prev"),
        (lambda e: e.update(prev=GENESIS.upper().replace("0", "A")), "prev"),
        (lambda e: e.update(hash=e["hash"].upper()), "hash"),
        (lambda e: e.pop("hash"), "hash"),
        (lambda e: e.pop("kind"), "kind"),
        (lambda e: e.update(prov=""), "prov"),
        (lambda e: e.update(ts=17), "ts"),
        (lambda e: e.update(alg="md5"), "alg"),
        (lambda e: e.update(commitments=[]), "commitments"),
        (lambda e: e.update(data="text"), "data"),
        (lambda e: e.update(salts=None), "salts"),
        (lambda e: e.update(redacted="tool"), "redacted"),
        (lambda e: e["data"].update(score=float("nan")), "entry"),
        (lambda e: e["data"].update(big=2**60), "entry"),
    ],
)
def test_a_malformed_entry_is_refused_naming_the_field(store: Store, mutate, field: str) -> None:
    store.create_run("r")
    entry = make_entry("r", 0, GENESIS, tool_data(0))
    mutate(entry)
    with pytest.raises(RecordError) as caught:
        store.append("r", entry)
    assert caught.value.field == field
    assert store.head("r") == (0, GENESIS)


def test_an_entry_that_is_not_an_object_is_refused(store: Store) -> None:
    store.create_run("r")
    with pytest.raises(RecordError) as caught:
        store.append("r", ["not", "an", "entry"])  # type: ignore[arg-type]
    assert caught.value.field == "entry"


def test_unknown_entry_keys_are_kept(store: Store) -> None:
    store.create_run("r")
    entry = make_entry("r", 0, GENESIS, tool_data(0))
    entry["capture"] = {"policy": "p1", "digest": "ab" * 32}
    store.append("r", entry)
    assert store.entry("r", 0)["capture"] == {"policy": "p1", "digest": "ab" * 32}


# -- checkpoints ------------------------------------------------------


def test_append_with_checkpoint_stores_both(store: Store, key: SigningKey) -> None:
    store.create_run("r")
    chain = make_chain("r", 3)
    checkpoints = []
    for entry in chain:
        cp = make_checkpoint(key, "r", len(checkpoints), entry["step"] + 1, entry["hash"])
        store.append("r", entry, checkpoint=cp)
        checkpoints.append(cp)
    assert store.checkpoints("r") == checkpoints


def test_append_with_a_stale_checkpoint_seq_writes_neither(store: Store, key: SigningKey) -> None:
    store.create_run("r")
    first, second = make_chain("r", 2)
    store.append("r", first, checkpoint=make_checkpoint(key, "r", 0, 1, first["hash"]))
    with pytest.raises(StaleCheckpointError):
        store.append("r", second, checkpoint=make_checkpoint(key, "r", 0, 2, second["hash"]))
    assert store.head("r") == (1, first["hash"])
    assert len(store.checkpoints("r")) == 1


@pytest.mark.parametrize(
    ("steps", "head_hash", "field"),
    [
        (3, None, "steps"),  # covers an entry that does not exist
        (2, "ab" * 32, "head_hash"),  # names a hash that is not step 1's
        (1, None, "head_hash"),  # step 0's hash is not the new entry's
        (0, "ab" * 32, "head_hash"),  # an empty cover must name GENESIS
    ],
)
def test_append_with_a_checkpoint_covering_no_stored_entry_writes_neither(
    store: Store, key: SigningKey, steps: int, head_hash: str | None, field: str
) -> None:
    store.create_run("r")
    first, second = make_chain("r", 2)
    store.append("r", first)
    cp = make_checkpoint(key, "r", 0, steps, head_hash or second["hash"])
    with pytest.raises(RecordError) as caught:
        store.append("r", second, checkpoint=cp)
    assert caught.value.field == field
    assert store.head("r") == (1, first["hash"])
    assert store.checkpoints("r") == []


def test_add_checkpoint_takes_the_next_seq_over_stored_entries(store: Store, key: SigningKey) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 3)
    store.add_checkpoint("r", make_checkpoint(key, "r", 0, 2, chain[1]["hash"]))
    store.add_checkpoint("r", make_checkpoint(key, "r", 1, 3, chain[2]["hash"]))
    assert [c["steps"] for c in store.checkpoints("r")] == [2, 3]
    with pytest.raises(StaleCheckpointError):
        store.add_checkpoint("r", make_checkpoint(key, "r", 1, 3, chain[2]["hash"]))
    with pytest.raises(StaleCheckpointError):
        store.add_checkpoint("r", make_checkpoint(key, "r", 5, 3, chain[2]["hash"]))
    with pytest.raises(RecordError) as caught:
        store.add_checkpoint("r", make_checkpoint(key, "r", 2, 4, chain[2]["hash"]))
    assert caught.value.field == "steps"
    with pytest.raises(RecordError) as caught:
        store.add_checkpoint("r", make_checkpoint(key, "r", 2, 2, chain[2]["hash"]))
    assert caught.value.field == "head_hash"
    assert len(store.checkpoints("r")) == 2


def test_a_checkpoint_for_another_run_is_refused(store: Store, key: SigningKey) -> None:
    store.create_run("r")
    with pytest.raises(RecordError) as caught:
        store.add_checkpoint("r", make_checkpoint(key, "other", 0, 0, GENESIS))
    assert caught.value.field == "run_id"


# -- rewrite (store redaction, step 2) ---------------------------------


def _redacted(entry: dict, path: str) -> dict:
    out = copy.deepcopy(entry)
    top, _, sub = path.partition(".")
    if sub:
        out["data"][top].pop(sub)
    else:
        out["data"].pop(top)
    out["salts"].pop(path)
    out["redacted"] = sorted({*out.get("redacted", []), path})
    return out


def test_rewrite_entry_replaces_data_salts_and_redacted(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 3)
    redacted = _redacted(chain[1], "result.policy")
    store.rewrite_entry("r", 1, redacted)
    stored = store.entry("r", 1)
    assert stored == redacted
    assert "policy" not in stored["data"]["result"]
    assert stored["redacted"] == ["result.policy"]
    assert stored["commitments"] == chain[1]["commitments"]
    check_chain(list(store.entries("r")))  # the chain still verifies
    assert store.head("r") == (3, chain[2]["hash"])


def test_a_rewritten_value_leaves_no_copy_in_the_database_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(home)
    try:
        store.create_run("r")
        chain = _append_chain(store, "r", 2)
        secret = chain[1]["data"]["result"]["policy"].encode()  # held in args and result.policy
        store.rewrite_entry("r", 1, _redacted(_redacted(chain[1], "result.policy"), "args"))
        files = [p for p in home.iterdir() if p.is_file()]
        assert any(p.name.endswith("-wal") for p in files)  # still open: the WAL exists, truncated
        for path in files:
            assert secret not in path.read_bytes(), path.name
    finally:
        store.close()


def test_rewrite_entry_refuses_a_changed_hash(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    changed = _redacted(chain[0], "tool")
    changed["hash"] = "ab" * 32
    with pytest.raises(ConflictError, match="hash"):
        store.rewrite_entry("r", 0, changed)
    assert store.entry("r", 0) == chain[0]


def test_rewrite_entry_refuses_changed_commitments(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    changed = _redacted(chain[0], "tool")
    changed["commitments"].pop("tool")  # redaction must never drop a commitment
    with pytest.raises(ConflictError, match="'commitments'"):
        store.rewrite_entry("r", 0, changed)
    assert store.entry("r", 0) == chain[0]


@pytest.mark.parametrize(
    ("key_name", "value"),
    [
        ("ts", "2031-01-01T00:00:00+00:00"),
        ("kind", "marker"),
        ("prev", GENESIS),
        ("v", 3),
        ("v", 2.5),
        ("ctx", "lookup_policy"),  # an added key is hashed too
    ],
)
def test_rewrite_entry_refuses_any_other_hashed_change(store: Store, key_name: str, value: object) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    changed = copy.deepcopy(chain[1])
    changed[key_name] = value
    with pytest.raises(ConflictError, match=repr(key_name)):
        store.rewrite_entry("r", 1, changed)
    assert store.entry("r", 1) == chain[1]


def test_rewrite_entry_compares_canonical_bytes_not_python_equality(store: Store) -> None:
    store.create_run("r")
    entry = make_entry("r", 0, GENESIS, tool_data(0))
    entry["flag"] = 1
    entry["hash"] = body_hash(entry)
    store.append("r", entry)
    changed = copy.deepcopy(entry)
    changed["flag"] = True  # True == 1 in Python, but "true" is not "1"
    with pytest.raises(ConflictError, match="'flag'"):
        store.rewrite_entry("r", 0, changed)


def test_rewrite_entry_checks_the_step(store: Store) -> None:
    store.create_run("r")
    chain = _append_chain(store, "r", 2)
    with pytest.raises(RecordError) as caught:
        store.rewrite_entry("r", 0, chain[1])
    assert caught.value.field == "step"
    with pytest.raises(EntryNotFoundError):
        store.rewrite_entry("r", 5, make_entry("r", 5, GENESIS, tool_data(5)))


# -- custody and keys --------------------------------------------------


def test_custody_records_round_trip_in_sequence(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    store.create_run("r")
    store.create_run("s")
    records = [
        {"actor": "alice@example.com", "action": "opened", "at": "2031-04-02T10:15:30+00:00"},
        {"actor": "ci", "action": "tested", "bundle": "r.bundle.json", "verdict": "VALID"},
        {"actor": "bob", "action": "exported", "steps": [0, 1, 2]},
    ]
    assert [store.add_custody("r", rec) for rec in records] == [0, 1, 2]
    assert store.add_custody("s", {"actor": "eve"}) == 0
    store.close()
    reopened = open_store(tmp_path / "home")
    assert reopened.custody("r") == records
    assert reopened.custody("s") == [{"actor": "eve"}]
    assert reopened.add_custody("r", {"actor": "carol"}) == 3
    with pytest.raises(RecordError) as caught:
        reopened.add_custody("r", "opened")  # type: ignore[arg-type]
    assert caught.value.field == "custody"
    reopened.close()


def test_keys_round_trip_and_rotation(store: Store) -> None:
    old, new = SigningKey.generate(), SigningKey.generate()
    store.put_key(old.key_id, old.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    store.put_key(new.key_id, new.public_hex, "recorder", "2031-06-01T00:00:00+00:00")
    store.put_key(old.key_id, old.public_hex, "recorder", "2031-01-01T00:00:00+00:00", "2031-06-01T00:00:00+00:00")
    assert store.keys() == [
        {
            "key_id": old.key_id,
            "public_key": old.public_hex,
            "role": "recorder",
            "created_at": "2031-01-01T00:00:00+00:00",
            "retired_at": "2031-06-01T00:00:00+00:00",
        },
        {
            "key_id": new.key_id,
            "public_key": new.public_hex,
            "role": "recorder",
            "created_at": "2031-06-01T00:00:00+00:00",
            "retired_at": None,
        },
    ]


def test_put_key_refuses_a_key_id_not_derived_from_the_key(store: Store) -> None:
    a, b = SigningKey.generate(), SigningKey.generate()
    with pytest.raises(RecordError) as caught:
        store.put_key(b.key_id, a.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    assert caught.value.field == "key_id"
    with pytest.raises(RecordError) as caught:
        store.put_key(a.key_id, "zz" * 32, "recorder", "2031-01-01T00:00:00+00:00")
    assert caught.value.field == "public_key"
    assert store.keys() == []


def test_put_key_keeps_the_first_created_at_and_a_retirement(store: Store) -> None:
    k = SigningKey.generate()
    store.put_key(k.key_id, k.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    # A rotation knows only "now": it retires the key without moving its creation.
    store.put_key(k.key_id, k.public_hex, "recorder", "2031-02-01T00:00:00+00:00", "2031-02-01T00:00:00+00:00")
    assert store.keys()[0]["created_at"] == "2031-01-01T00:00:00+00:00"
    assert store.keys()[0]["retired_at"] == "2031-02-01T00:00:00+00:00"
    with pytest.raises(ConflictError, match="retired"):
        store.put_key(k.key_id, k.public_hex, "recorder", "2031-01-01T00:00:00+00:00", None)
    with pytest.raises(ConflictError, match="retired"):
        store.put_key(k.key_id, k.public_hex, "recorder", "2031-01-01T00:00:00+00:00", "2031-03-01T00:00:00+00:00")
    assert store.keys()[0]["retired_at"] == "2031-02-01T00:00:00+00:00"


# -- the file: location, permissions, durability settings, lifecycle ----


def test_open_store_creates_an_owner_only_home_and_database(tmp_path: Path) -> None:
    home = tmp_path / "deep" / "home"
    store = open_store(home)
    store.create_run("r")
    _append_chain(store, "r", 2)  # so the -wal and -shm files exist
    assert (home.stat().st_mode & 0o777) == 0o700
    files = [home / name for name in ("bitexact.db", "bitexact.db-wal", "bitexact.db-shm", "bitexact.db.lock")]
    for path in files:
        assert path.exists(), path
        assert path.stat().st_mode & 0o077 == 0, f"{path.name} is readable by others"
    store.close()


def test_open_store_tightens_an_existing_world_readable_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    open_store(home).close()
    (home / "bitexact.db").chmod(0o644)
    open_store(home).close()
    assert (home / "bitexact.db").stat().st_mode & 0o077 == 0


def test_open_store_uses_bitexact_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_HOME", str(tmp_path / "from-env"))
    store = open_store()
    store.create_run("r")
    store.close()
    assert (tmp_path / "from-env" / "bitexact.db").exists()


def test_the_database_is_wal_with_full_sync(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    assert isinstance(store, SQLiteStore)
    store.close()
    raw = sqlite3.connect(tmp_path / "home" / "bitexact.db")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    store = open_store(tmp_path / "home")
    for conn in (store._writer, store._reader):  # synchronous is per connection
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    store.close()


def test_data_survives_close_and_reopen(tmp_path: Path, key: SigningKey) -> None:
    store = open_store(tmp_path / "home")
    store.create_run("r", {"name": "kept"})
    chain = make_chain("r", 3)
    for entry in chain:
        store.append("r", entry, checkpoint=make_checkpoint(key, "r", entry["step"], entry["step"] + 1, entry["hash"]))
    store.put_key(key.key_id, key.public_hex, "recorder", "2031-01-01T00:00:00+00:00")
    store.close()
    again = open_store(tmp_path / "home")
    assert list(again.entries("r")) == chain
    assert len(again.checkpoints("r")) == 3
    assert again.run("r").meta == {"name": "kept"}
    assert again.keys()[0]["key_id"] == key.key_id
    again.close()


def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    store.create_run("r")
    store.close()
    store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        store.head("r")
    with pytest.raises(StoreError, match="closed"):
        store.append("r", make_entry("r", 0, GENESIS, tool_data(0)))


def test_a_store_from_a_newer_bitexact_is_refused(tmp_path: Path) -> None:
    open_store(tmp_path / "home").close()
    raw = sqlite3.connect(tmp_path / "home" / "bitexact.db")
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(StoreError, match="newer"):
        open_store(tmp_path / "home")


def test_store_is_a_context_manager(tmp_path: Path) -> None:
    with open_store(tmp_path / "home") as store:
        store.create_run("r")
    with pytest.raises(StoreError):
        store.runs()


def test_a_store_is_refused_across_fork(tmp_path: Path) -> None:
    store = open_store(tmp_path / "home")
    store.create_run("r")
    pid = os.fork()
    if pid == 0:  # the child must open its own store, never reuse the parent's connections
        try:
            store.head("r")
        except StoreError as exc:
            os._exit(0 if "open the store again" in str(exc) else 2)
        os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.head("r") == (0, GENESIS)  # the parent's store still works
    store.close()


def test_a_version_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    """Version 2 drops the unused index on entries.hash; a version 1 file keeps its entries."""
    with open_store(tmp_path / "home") as store:
        store.create_run("r")
        store.append("r", make_entry("r", 0, GENESIS, tool_data(0)))
    raw = sqlite3.connect(tmp_path / "home" / "bitexact.db")
    raw.execute("CREATE INDEX entries_by_hash ON entries (hash)")  # what version 1 created
    raw.execute("PRAGMA user_version = 1")
    raw.commit()
    raw.close()
    with open_store(tmp_path / "home") as store:
        assert store.head("r")[0] == 1
        assert next(store.entries("r"))["step"] == 0
    raw = sqlite3.connect(tmp_path / "home" / "bitexact.db")
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert raw.execute("SELECT name FROM sqlite_master WHERE name = 'entries_by_hash'").fetchone() is None
    raw.close()
