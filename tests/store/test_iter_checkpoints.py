"""Store.iter_checkpoints: the checkpoints in seq order, read in pages (a JSONL export streams them)."""

from __future__ import annotations

import pytest

from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import RunNotFoundError, Store
from bitexact.store import sqlite as sqlite_store


def _run(store: Store, key: SigningKey, entries: int) -> str:
    writer = Recorder(store, key, checkpoints=CheckpointPolicy(every=1, seconds=3600)).start(name="cps")
    for i in range(entries):
        writer.append("tool_call", {"tool": "t", "args": [i]})
    return writer.run_id


def test_pages_read_the_same_checkpoints_as_the_list(
    store: Store, recorder_key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "PAGE", 2)  # several pages, one of them short
    run_id = _run(store, recorder_key, 6)
    whole = store.checkpoints(run_id)
    assert len(whole) == 7
    assert list(store.iter_checkpoints(run_id)) == whole
    assert list(store.iter_checkpoints(run_id, 1, 4)) == whole[1:4]
    assert list(store.iter_checkpoints(run_id, 5)) == whole[5:]
    assert list(store.iter_checkpoints(run_id, 0, 100)) == whole
    assert list(store.iter_checkpoints(run_id, 7)) == []


def test_the_end_is_fixed_when_called(store: Store, recorder_key: SigningKey) -> None:
    """As entries() fixes the head: a checkpoint stored after the call is not read (2 entries, the run_meta)."""
    run_id = _run(store, recorder_key, 2)
    stream = store.iter_checkpoints(run_id)
    Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=1, seconds=3600)).attach(run_id).append(
        "tool_call", {"tool": "later"})
    assert len(list(stream)) == 3
    assert len(store.checkpoints(run_id)) == 4


def test_an_unknown_run_is_refused_before_iterating(store: Store) -> None:
    with pytest.raises(RunNotFoundError):
        store.iter_checkpoints("nope")
