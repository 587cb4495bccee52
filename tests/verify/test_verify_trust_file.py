"""Trust files and pins (§11): strict parsing, the message order, and how pins combine."""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import InputError, Pins, load_trust_file, verify_bundle, verify_cli

from .conftest import sample_run
from .producer import dumps


def write(tmp_path: Path, content: bytes | str) -> Path:
    path = tmp_path / "trust.json"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "trust file is not valid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ('{"bundle_keys":[],"bundle_keys":[]}', "trust file is not valid JSON: duplicate key 'bundle_keys'"),
        (b"\xff", "trust file is not valid JSON: invalid UTF-8 at byte 0: invalid start byte"),
        ("[]", "trust file is not a JSON object"),
        ('{"zeta":1,"alpha":2,"bundle_keys":[]}', "trust file has unrecognized key 'alpha'"),
        ("{}", "trust file names no bundle_keys or recorder_keys"),
        ('{"bundle_keys":{}}', "trust file bundle_keys must be a list"),
        ('{"bundle_keys":[1],"recorder_keys":"k"}', "trust file recorder_keys must be a list"),
        ('{"bundle_keys":[1]}', "trust file bundle_keys entry has no public_key"),
        ('{"recorder_keys":[{"key_id":"x"}]}', "trust file recorder_keys entry has no public_key"),
        ('{"recorder_keys":[{"public_key":""}]}', "trust file recorder_keys entry has no public_key"),
    ],
)
def test_trust_file_messages(tmp_path: Path, content: str | bytes, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_trust_file(write(tmp_path, content))
    assert str(caught.value) == message


def test_missing_trust_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.json"
    with pytest.raises(InputError) as caught:
        load_trust_file(path)
    assert str(caught.value) == f"no such file: {path} (No such file or directory)"


def test_trust_file_loads_lowercase_sets_and_ignores_key_id(tmp_path: Path) -> None:
    path = write(tmp_path, '{"bundle_keys":[{"key_id":"wrong","public_key":"ABCD"}],"recorder_keys":[]}')
    assert load_trust_file(path) == (frozenset({"abcd"}), frozenset())
    path = write(tmp_path, '{"recorder_keys":[{"public_key":"ab"}]}')
    assert load_trust_file(path) == (None, frozenset({"ab"}))


def test_trust_file_through_the_cli(tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey) -> None:
    bundle_path = tmp_path / "run.bundle.json"
    bundle_path.write_bytes(dumps(sample_run(recorder_key).bundle(bundle_key)))
    trust = {"bundle_keys": [{"key_id": bundle_key.key_id, "public_key": bundle_key.public_hex}],
             "recorder_keys": [{"key_id": recorder_key.key_id, "public_key": recorder_key.public_hex.upper()}]}
    trust_path = write(tmp_path, dumps(trust))
    verdict = verify_cli(bundle_path, trust_file=trust_path, require_sealed=True)
    assert verdict.line == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, signed, recorder-attested"
    )


def test_bad_trust_file_is_reported_before_the_bundle_is_read(tmp_path: Path) -> None:
    verdict = verify_cli(tmp_path / "missing.bundle.json", trust_file=write(tmp_path, "[]"))
    assert verdict.line == "FAIL: trust file is not a JSON object" and verdict.exit_code() == 1


def test_empty_trust_list_trusts_nothing(bundle_key: SigningKey) -> None:
    bundle = sample_run(None).bundle(bundle_key)
    assert verify_bundle(bundle, Pins.from_options(trust=(frozenset(), None))).line == (
        "FAIL: signature public_key is not among the trusted keys"
    )


def test_flags_and_trust_file_combine(bundle_key: SigningKey, other_key: SigningKey) -> None:
    bundle = sample_run(None).bundle(bundle_key)
    pins = Pins.from_options(expect_key=other_key.public_hex, trust=(frozenset({bundle_key.public_hex}), None))
    assert verify_bundle(bundle, pins).line.endswith("sealed, signed")
    pins = Pins.from_options(expect_key=bundle_key.public_hex, trust=(frozenset(), None))
    assert verify_bundle(bundle, pins).line.endswith("sealed, signed")


def test_pins_compare_case_insensitively(bundle_key: SigningKey) -> None:
    bundle = sample_run(None).bundle(bundle_key)
    assert verify_bundle(bundle, Pins(bundle_keys=frozenset({bundle_key.public_hex.upper()}))).ok


def test_recorder_keys_only_trust_file_leaves_bundle_unpinned(recorder_key: SigningKey, bundle_key: SigningKey) -> None:
    bundle = sample_run(recorder_key).bundle(bundle_key)
    pins = Pins.from_options(trust=(None, frozenset({recorder_key.public_hex})))
    assert verify_bundle(bundle, pins).line.endswith(
        "signed (signing key not pinned - pass --expect-key to know whose signature it is), recorder-attested"
    )
