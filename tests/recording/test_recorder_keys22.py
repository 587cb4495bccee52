"""Session 22: listing the recorder keys reads the store's keys table once (it was read twice: the keys whose
file is gone, then the store's compromise marks)."""

from __future__ import annotations

from pathlib import Path

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.recording.recorder_keys import recorder_keys
from bitexact.store import open_store

_KEYS_QUERY = "FROM keys ORDER BY created_at"  # Store.keys()' query


def test_listing_the_recorder_keys_reads_the_stores_keys_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    keys = KeyStore(home)
    store = open_store(home)
    try:
        Recorder(store, keys.current_or_init(), keys=keys)  # the key recorded in the store, as a recording does
        keys.rotate()
        statements: list[str] = []
        # SQLite's own trace of what the store's reading connection runs: the real queries, counted.
        store._reader.set_trace_callback(statements.append)
        listed = recorder_keys(keys, store)
        assert [info.status for info in listed] == ["current", "retired"]
        assert sum(_KEYS_QUERY in statement for statement in statements) == 1
    finally:
        store.close()
