"""The host key and the sealed envelope that journals use."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from bitexact.crypto.hostkey import HostKeyError, host_key_path, load_host_key
from bitexact.crypto.sealed import (
    CHUNK_BYTES,
    SealedEnvelopeError,
    SealedWriter,
    WrongHostKeyError,
    open_sealed,
    seal,
    unseal,
)


def test_the_host_key_sits_beside_the_data_directory_owner_only(home: Path) -> None:
    key = load_host_key(home)
    assert key.path == home.parent / "home.host.key" == host_key_path(home)
    assert oct(key.path.stat().st_mode & 0o777) == "0o600"
    assert load_host_key(home).secret == key.secret, "made once, then read"
    assert len(key.key_id) == 32 and key.secret.hex() not in repr(key)


def test_threads_making_the_host_key_at_once_all_get_the_one_key(home: Path) -> None:
    import threading

    keys: list[object] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        try:
            keys.append(load_host_key(home).key_id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(keys)) == 1 and len(keys) == 8
    assert [p.name for p in host_key_path(home).parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_host_key_inside_the_data_directory_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(home / "host.key"))
    with pytest.raises(HostKeyError, match="inside the data directory"):
        load_host_key(home)


def test_a_host_key_others_can_read_is_refused(home: Path) -> None:
    key = load_host_key(home)
    os.chmod(key.path, 0o644)
    with pytest.raises(HostKeyError, match="owner-only"):
        load_host_key(home)


def test_round_trip_in_chunks(home: Path) -> None:
    key = load_host_key(home)
    payload = os.urandom(CHUNK_BYTES * 2 + 5)
    sealed = seal(payload, key, purpose="sdk-journal")
    assert payload[:64] not in sealed
    assert unseal(sealed, key, purpose="sdk-journal") == payload
    assert len(open_sealed(io.BytesIO(sealed), key).chunks) == 3


def test_tampering_truncation_and_another_host_are_caught(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = load_host_key(home)
    sealed = bytearray(seal(b"evidence before the policy ran", key, purpose="sdk-journal"))
    flipped = bytearray(sealed)
    flipped[-20] ^= 1
    with pytest.raises(SealedEnvelopeError, match="authentication"):
        unseal(bytes(flipped), key)
    out = io.BytesIO()
    writer = SealedWriter(out, key, purpose="sdk-journal")
    writer.write(b"part one")  # the writer died before finish()
    with pytest.raises(SealedEnvelopeError, match="no final chunk"):
        unseal(out.getvalue(), key)
    assert open_sealed(io.BytesIO(out.getvalue()), key).complete is False
    with pytest.raises(SealedEnvelopeError, match="not a 'stream-journal'"):
        unseal(bytes(sealed), key, purpose="stream-journal")
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(tmp_path / "elsewhere.key"))
    other = load_host_key(home)
    with pytest.raises(WrongHostKeyError):
        unseal(bytes(sealed), other)
    with pytest.raises(SealedEnvelopeError, match="magic"):
        unseal(b"{}", key)


def test_a_file_key_made_ahead_seals_one_file_that_opens_and_is_refused_for_another_purpose(home: Path) -> None:
    from bitexact.crypto.sealed import new_file_key, seal_pieces

    host = load_host_key(home)
    key = new_file_key(host, purpose="journal")
    sealed = b"".join(seal_pieces([b"made ", b"ahead"], host, purpose="journal", key=key))
    assert unseal(sealed, host, purpose="journal") == b"made ahead"
    assert sealed.startswith(key.preamble), "the file carries the key's own wrapped header"
    with pytest.raises(ValueError, match="another purpose or host key"):
        seal_pieces([b"x"], host, purpose="spool", key=key)
    other = load_host_key(home.parent / "other-home")
    with pytest.raises(ValueError, match="another purpose or host key"):
        seal_pieces([b"x"], other, purpose="journal", key=key)
