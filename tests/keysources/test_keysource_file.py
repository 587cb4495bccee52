"""Key files (capture-controls.md, hash_only_key {"file": PATH}), key ids and key specs."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from keysource_support import reference_hmac

from bitexact.crypto.keysources import (
    HmacKey,
    KeySourceError,
    generate_key_file,
    load_capture_key,
    load_key_env,
)
from bitexact.crypto.keysources.base import MAX_MESSAGE_BYTES, MessageSizeError

KEY_HEX = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"


def write_key(path: Path, text: str | bytes, mode: int = 0o600) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    path.chmod(mode)
    return path


def test_key_id_is_first_16_bytes_of_hmac_of_the_id_message(tmp_path: Path) -> None:
    key = load_capture_key({"file": str(write_key(tmp_path / "k", KEY_HEX + "\n"))})
    expected = reference_hmac(bytes.fromhex(KEY_HEX), b"bitexact capture key id/1")[:16].hex()
    assert key.key_id == expected
    assert len(key.key_id) == 32 and key.key_id == key.key_id.lower()


def test_file_key_hmac_matches_reference(tmp_path: Path) -> None:
    key = load_capture_key({"file": str(write_key(tmp_path / "k", KEY_HEX))})
    for message in (b"x", b"nonce|path.to.field", bytes(range(256)) * 16):
        assert key.hmac_sha256(message) == reference_hmac(bytes.fromhex(KEY_HEX), message)


def test_generated_key_file_is_owner_only_hex_and_loads_with_the_returned_id(
        tmp_path: Path) -> None:
    path = tmp_path / "sub" / "capture.key"
    key_id = generate_key_file(path)
    text = path.read_text()
    assert text.endswith("\n") and len(text) == 65
    assert all(c in "0123456789abcdef" for c in text.strip())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_capture_key({"file": str(path)}).key_id == key_id
    assert key_id == reference_hmac(bytes.fromhex(text.strip()),
                                    b"bitexact capture key id/1")[:16].hex()


def test_generated_keys_differ(tmp_path: Path) -> None:
    assert generate_key_file(tmp_path / "a") != generate_key_file(tmp_path / "b")


def test_generate_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "capture.key"
    generate_key_file(path)
    before = path.read_bytes()
    with pytest.raises(KeySourceError, match="already exists"):
        generate_key_file(path)
    assert path.read_bytes() == before


def test_generate_is_owner_only_under_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        generate_key_file(tmp_path / "k")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600


def test_surrounding_whitespace_and_uppercase_are_the_same_key(tmp_path: Path) -> None:
    plain = load_capture_key({"file": str(write_key(tmp_path / "a", KEY_HEX))})
    spaced = load_capture_key({"file": str(write_key(tmp_path / "b",
                                                     "\n  " + KEY_HEX.upper() + " \r\n\n"))})
    assert plain.key_id == spaced.key_id
    assert plain.hmac_sha256(b"m") == spaced.hmac_sha256(b"m")


@pytest.mark.parametrize("text, found", [(KEY_HEX[:63], "found 63"), (KEY_HEX + "a", "found 65"),
                                         ("", "found 0"), ("   \n", "found 0")])
def test_wrong_length_names_the_file_and_the_count(tmp_path: Path, text: str, found: str) -> None:
    path = write_key(tmp_path / "k", text)
    with pytest.raises(KeySourceError) as caught:
        load_capture_key({"file": str(path)})
    assert str(caught.value) == f"capture key file {path}: expected 64 hex characters, {found}"


@pytest.mark.parametrize("text, position", [(KEY_HEX[:10] + "g" + KEY_HEX[11:], 11),
                                            (KEY_HEX[:32] + " " + KEY_HEX[32:], 33),
                                            ("0x" + KEY_HEX, 2)])
def test_non_hex_names_the_position_and_never_the_key(tmp_path: Path, text: str,
                                                      position: int) -> None:
    path = write_key(tmp_path / "k", text)
    with pytest.raises(KeySourceError) as caught:
        load_capture_key({"file": str(path)})
    message = str(caught.value)
    assert f"capture key file {path}: expected 64 hex characters" in message
    assert f"position {position}" in message
    assert KEY_HEX[:16] not in message and KEY_HEX[-16:] not in message


def test_non_ascii_bytes_are_refused(tmp_path: Path) -> None:
    path = write_key(tmp_path / "k", KEY_HEX[:63].encode() + "é".encode())
    with pytest.raises(KeySourceError, match="not hex at position 64"):
        load_capture_key({"file": str(path)})


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602, 0o644, 0o666])
def test_key_readable_or_writable_by_others_is_refused(tmp_path: Path, mode: int) -> None:
    path = write_key(tmp_path / "k", KEY_HEX, mode)
    with pytest.raises(KeySourceError) as caught:
        load_capture_key({"file": str(path)})
    assert f"permissions {mode:04o}" in str(caught.value)
    assert f"chmod 600 {path}" in str(caught.value)


def test_read_only_owner_key_loads(tmp_path: Path) -> None:
    path = write_key(tmp_path / "k", KEY_HEX, 0o400)
    assert load_capture_key({"file": str(path)}).key_id


def test_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(KeySourceError, match="no such file .*bitexact capture keygen -o"):
        load_capture_key({"file": str(tmp_path / "absent.key")})


def test_directory_and_fifo_are_not_key_files(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir(mode=0o700)
    with pytest.raises(KeySourceError, match="not a regular file"):
        load_capture_key({"file": str(tmp_path / "dir")})
    os.mkfifo(tmp_path / "fifo", 0o600)  # would block a plain open() for ever
    with pytest.raises(KeySourceError, match="not a regular file"):
        load_capture_key({"file": str(tmp_path / "fifo")})


def test_oversize_file_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = write_key(tmp_path / "k", KEY_HEX + " " * 10_000)
    with pytest.raises(KeySourceError, match="larger than 4096 bytes"):
        load_capture_key({"file": str(path)})


def test_repr_never_shows_the_key(tmp_path: Path) -> None:
    key = load_capture_key({"file": str(write_key(tmp_path / "k", KEY_HEX))})
    assert KEY_HEX[:8] not in repr(key) and "\\x00\\x01" not in repr(key)
    assert key.key_id in repr(key)


def test_every_source_is_an_hmac_key(tmp_path: Path) -> None:
    key = load_capture_key({"file": str(write_key(tmp_path / "k", KEY_HEX))})
    assert isinstance(key, HmacKey)


@pytest.mark.parametrize("size", [0, MAX_MESSAGE_BYTES + 1])
def test_message_outside_kms_bounds_is_refused_by_every_source(tmp_path: Path, size: int) -> None:
    key = load_capture_key({"file": str(write_key(tmp_path / "k", KEY_HEX))})
    with pytest.raises(MessageSizeError, match=f"got {size}"):
        key.hmac_sha256(b"m" * size)
    assert len(key.hmac_sha256(b"m" * MAX_MESSAGE_BYTES)) == 32


def test_message_must_be_bytes(tmp_path: Path) -> None:
    key = load_capture_key({"file": str(write_key(tmp_path / "k", KEY_HEX))})
    with pytest.raises(TypeError):
        key.hmac_sha256("text")  # type: ignore[arg-type]


# -- BITEXACT_CAPTURE_KEY ----------------------------------------------------------------------

def test_env_unset_or_empty_is_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BITEXACT_CAPTURE_KEY", raising=False)
    assert load_key_env() is None
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", "  ")
    assert load_key_env() is None


def test_env_names_a_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_id = generate_key_file(tmp_path / "k")
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(tmp_path / "k"))
    key = load_key_env()
    assert key is not None and key.key_id == key_id


def test_env_naming_a_bad_file_names_the_variable(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_key(tmp_path / "k", KEY_HEX[:40])
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(path))
    with pytest.raises(KeySourceError) as caught:
        load_key_env()
    assert str(caught.value) == (f"BITEXACT_CAPTURE_KEY: capture key file {path}: "
                                 "expected 64 hex characters, found 40")


# -- key specs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, message", [
    ("/run/secrets/k", "hash_only_key: expected an object with one of file, kms_ciphertext, "
                       "kms_hmac, pkcs11, found '/run/secrets/k'"),
    ({}, "hash_only_key: expected exactly one of file, kms_ciphertext, kms_hmac, pkcs11, "
         "found none"),
    ({"file": "a", "kms_hmac": "b"}, "hash_only_key: expected exactly one of file, "
                                     "kms_ciphertext, kms_hmac, pkcs11, found file, kms_hmac"),
    ({"vault": "x"}, "hash_only_key.vault: unknown key source (expected one of file, "
                     "kms_ciphertext, kms_hmac, pkcs11)"),
    ({"file": 7}, "hash_only_key.file: expected a file path, found 7"),
    ({"file": ""}, "hash_only_key.file: expected a file path, found an empty string"),
    ({"kms_ciphertext": None}, "hash_only_key.kms_ciphertext: expected a file path, found null"),
    ({"kms_hmac": ["alias/x"]}, "hash_only_key.kms_hmac: expected a KMS key id, ARN or alias, "
                                "found an array"),
    ({"pkcs11": "lib.so"}, "hash_only_key.pkcs11: expected an object with lib, slot, label and "
                           "pin_env, found 'lib.so'"),
    ({"pkcs11": {"lib": "l", "slot": 0, "label": "k"}},
     "hash_only_key.pkcs11.pin_env: required field is missing"),
    ({"pkcs11": {"lib": "l", "slot": 0, "label": "k", "pin_env": "P", "pin": "1234"}},
     "hash_only_key.pkcs11.pin: unknown field (expected lib, slot, label, pin_env)"),
    ({"pkcs11": {"lib": "l", "slot": True, "label": "k", "pin_env": "P"}},
     "hash_only_key.pkcs11.slot: expected a whole number >= 0, found true"),
    ({"pkcs11": {"lib": "l", "slot": -1, "label": "k", "pin_env": "P"}},
     "hash_only_key.pkcs11.slot: expected a whole number >= 0, found -1"),
    ({"pkcs11": {"lib": "l", "slot": "0", "label": "k", "pin_env": "P"}},
     "hash_only_key.pkcs11.slot: expected a whole number >= 0, found '0'"),
    ({"pkcs11": {"lib": "l", "slot": 0, "label": "", "pin_env": "P"}},
     "hash_only_key.pkcs11.label: expected the label of a secret key, found an empty string"),
    ({"pkcs11": {"lib": "l", "slot": 0, "label": "k", "pin_env": "1234"}},
     "hash_only_key.pkcs11.pin_env: expected the name of an environment variable, found a string of 4"
     " characters, which is not one (the PIN itself never goes in the policy)"),
])
def test_malformed_spec_names_the_field(spec: object, message: str) -> None:
    with pytest.raises(KeySourceError) as caught:
        load_capture_key(spec)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_spec_errors_name_where_the_spec_sits() -> None:
    with pytest.raises(KeySourceError, match=r"^retired_keys\[1\]\.file: expected a file path"):
        load_capture_key({"file": False}, field="retired_keys[1]")
