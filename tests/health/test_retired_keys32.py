"""A retired recorder key file that does not load (garbage, a named pipe): health said healthy while
`keys show` and `keys trust-file` exited 1 on it; and the refusal of a key file quoted cryptography's own
message, with its FAQ's URL, instead of saying what is wrong in our words."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli.real_command import run_bitexact

from bitexact.crypto.ed25519 import SigningKey
from bitexact.errors import KeyMaterialError


def _home_with_a_retired_key(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    """A home whose demo run was signed by a key rotated away since: (home, demo's --json, retired file)."""
    home = tmp_path / "home"
    demo = json.loads(run_bitexact(home, "demo", "--json").stdout)
    assert run_bitexact(home, "keys", "rotate").returncode == 0
    [retired] = (home / "keys" / "retired").glob("*.key")
    return home, demo, retired


@pytest.mark.parametrize("damage", ["garbage", "fifo"])
def test_a_retired_key_file_that_does_not_load_is_reported_and_its_runs_still_verify(
        tmp_path: Path, damage: str) -> None:
    home, demo, retired = _home_with_a_retired_key(tmp_path)
    key_id = retired.name.removesuffix(".key")
    retired.unlink()
    if damage == "garbage":
        retired.write_bytes(b"not a key\n")
        retired.chmod(0o600)
    else:
        os.mkfifo(retired, 0o600)  # opened without waiting for a writer, or health would hang here
    assert run_bitexact(home, "keys", "show").returncode == 1
    result = run_bitexact(home, "health", "--json")
    assert result.returncode == 1, result.stdout + result.stderr  # it said healthy (0)
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["name"] == "retired-key-unusable" and finding["level"] == "warn"
    assert finding["details"] == {"path": str(retired), "key_id": key_id, "public_key": demo["public_key"]}
    message = str(finding["message"])
    assert "`bitexact keys show` and `bitexact keys trust-file` exit 1" in message
    assert "runs it signed still verify" in message and "from a backup of keys/" in message
    # What the finding says of the runs the key signed holds: the stored run verifies by its public half.
    [run] = json.loads(run_bitexact(home, "runs", "--json").stdout)
    verdict = run_bitexact(home, "verify", run["run_id"])
    assert verdict.returncode == 0 and verdict.stdout.startswith("OK: "), verdict.stdout + verdict.stderr
    # And the way out it names with no backup: moved out of retired/, the key lists as missing, and a
    # trust file written then still trusts it.
    retired.rename(tmp_path / "aside.key")
    trust = tmp_path / "trust.json"
    assert run_bitexact(home, "keys", "trust-file", "-o", str(trust)).returncode == 0
    assert demo["public_key"] in [k["public_key"] for k in json.loads(trust.read_text())["recorder_keys"]]
    names = [f["name"] for f in json.loads(run_bitexact(home, "health", "--json").stdout)["findings"]]
    assert names == ["recorder-key-missing"]


def test_a_healthy_rotated_home_reports_nothing(tmp_path: Path) -> None:
    home, _, _ = _home_with_a_retired_key(tmp_path)
    result = run_bitexact(home, "health", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["findings"] == []


@pytest.mark.parametrize(("data", "why"), [
    (b"garbage\n", "no PEM block in it: damaged, empty, or another kind of file"),
    (b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
     "its PEM block does not decode as a private key: damaged?"),
])
def test_a_key_that_does_not_load_is_refused_in_our_words(data: bytes, why: str) -> None:
    with pytest.raises(KeyMaterialError) as caught:
        SigningKey.from_pem(data, source="keys/recorder.key")
    assert str(caught.value) == (f"keys/recorder.key is not a PEM private key ({why}): put the key file back"
                                 " from a backup of keys/")
    assert "http" not in str(caught.value)


def test_a_password_protected_key_is_named_as_such() -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"))
    with pytest.raises(KeyMaterialError, match="encrypted with a password, and BitExact's keys never are"):
        SigningKey.from_pem(pem, source="k")


def test_a_directory_in_place_of_a_retired_key_is_unusable_not_loose(tmp_path: Path) -> None:
    """A directory's 0755 was reported as a retired key others may read (retired-key-loose), and nothing
    said that it holds no key; loading it said "cannot read key ...: Is a directory"."""
    home, _, retired = _home_with_a_retired_key(tmp_path)
    retired.unlink()
    retired.mkdir(mode=0o755)
    result = run_bitexact(home, "health", "--json")
    findings = json.loads(result.stdout)["findings"]
    assert [f["name"] for f in findings] == ["retired-key-unusable"], findings
    assert f"key {retired} is a directory, not a regular file" in findings[0]["message"]
