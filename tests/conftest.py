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


@pytest.fixture
def sdk_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``home``, with no SDK setting inherited from the machine and the capture policy off (tests of what
    the SDK hands the write path set a policy themselves); the SDK's shared stores closed afterwards."""
    for name in ("BITEXACT_HOST_KEY", "BITEXACT_CONTEXT", "BITEXACT_DRAIN_TIMEOUT", "BITEXACT_CAPTURE_KEY",
                 "BITEXACT_QUEUE_MAX_BYTES", "BITEXACT_JOURNAL_SMALL", "BITEXACT_MAX_BODY_BYTES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    from bitexact.sdk.causal import forget_inherited_context

    forget_inherited_context()  # a context an earlier test's run took out of os.environ is no parent here
    yield home
    forget_inherited_context()
    from bitexact.sdk.stores import close_stores

    close_stores()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 24 MiB tmpfs mounted for the test (the suite runs as root, as CI does), unmounted after it:
    a disk a test can fill, or remount read-only."""
    import subprocess

    from bitexact.sdk import close_stores

    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        close_stores()  # the SDK's shared stores hold files on it
        subprocess.run(["umount", "-l", str(mount)], check=True)


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    """A real capture key file (64 hex, owner-only), made by the key source module."""
    from bitexact.crypto.keysources import generate_key_file

    path = tmp_path / "capture.key"
    generate_key_file(path)
    return path


@pytest.fixture
def other_key_file(tmp_path: Path) -> Path:
    from bitexact.crypto.keysources import generate_key_file

    path = tmp_path / "other.key"
    generate_key_file(path)
    return path
