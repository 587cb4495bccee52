"""Shared fixtures: a fresh data directory, store, recorder key and write path per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bitexact.crypto import SigningKey
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import Store, open_store


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty BITEXACT_HOME for this test."""
    path = tmp_path / "home"
    monkeypatch.setenv("BITEXACT_HOME", str(path))
    return path


@pytest.fixture
def store(home: Path) -> Iterator[Store]:
    s = open_store(home)
    yield s
    s.close()


@pytest.fixture
def recorder_key(home: Path) -> SigningKey:
    return KeyStore(home).current_or_init()


@pytest.fixture
def recorder(store: Store, recorder_key: SigningKey) -> Recorder:
    return Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=4, seconds=3600))
