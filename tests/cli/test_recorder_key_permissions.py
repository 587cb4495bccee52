"""A recorder key file others may read or write is refused, as ssh refuses such a private key and as BitExact
refuses such a host key or capture key: a key that signs the evidence must be one only its owner could have used.

Before, `chmod 0644 keys/recorder.key` left `bitexact demo` and `export` signing with it and `bitexact health`
saying "healthy". Now every signing door refuses it naming `chmod 600`, an SDK run declares a gap that says why
(strict raises it), health reports `recorder-key-unusable` (critical), and a stored run still verifies as a
verdict (the key is only refused for signing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli.real_command import command_env, run_bitexact

from bitexact.crypto.keystore import KeyStore
from bitexact.errors import KeyMaterialError


def _loose_key(home: Path, mode: int = 0o644) -> Path:
    KeyStore(home).init()
    path = home / "keys" / "recorder.key"
    os.chmod(path, mode)
    return path


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_key_others_may_read_or_write_does_not_sign(tmp_path: Path, mode: int) -> None:
    path = _loose_key(tmp_path / "home", mode)
    with pytest.raises(KeyMaterialError, match=rf"permissions {mode:04o} let others read or write it; "
                                               rf"it must be owner-only \(chmod 600 .*recorder\.key\)"):
        KeyStore(tmp_path / "home").current()
    os.chmod(path, 0o600)
    assert KeyStore(tmp_path / "home").current().key_id


def test_its_public_half_still_lists_for_a_trust_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _loose_key(home)
    [info] = KeyStore(home).public_keys()
    assert info.status == "current" and len(info.public_key) == 64


def test_demo_and_export_refuse_it_and_health_names_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _loose_key(home)
    demo = run_bitexact(home, "demo")
    assert demo.returncode == 1 and "chmod 600" in demo.stderr and "Traceback" not in demo.stderr
    health = run_bitexact(home, "health", "--json")
    assert health.returncode == 2, health.stdout
    [finding] = [f for f in json.loads(health.stdout)["findings"] if f["name"] == "recorder-key-unusable"]
    assert finding["level"] == "critical" and finding["details"]["path"].endswith("recorder.key")
    assert "let others read or write it" in finding["message"]


def test_health_is_silent_about_an_owner_only_key_and_a_missing_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for _ in range(2):  # no key yet, then an owner-only one
        health = run_bitexact(home, "health", "--json")
        assert "recorder-key-unusable" not in health.stdout, health.stdout
        KeyStore(home).current_or_init()


_RUN = """
    import sys
    import bitexact
    try:
        with bitexact.run(name="k", strict=sys.argv[1] == "strict") as r:
            r.marker("m")
        print("ran")
    except Exception as exc:
        print("raised", type(exc).__name__, exc)
"""


@pytest.mark.parametrize("strict", ["strict", "lenient"])
def test_an_sdk_run_says_why_it_could_not_start(tmp_path: Path, strict: str) -> None:
    home = tmp_path / "home"
    _loose_key(home)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_RUN), strict], env=command_env(home),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    if strict == "strict":
        assert proc.stdout.startswith("raised RecordingError") and "chmod 600" in proc.stdout
    else:
        assert proc.stdout.strip() == "ran"  # the agent goes on as it would unrecorded
        [line] = [line for line in proc.stderr.splitlines() if "recording gap" in line]
        # RecorderKeyError: the KeyMaterialError the data directory's key raises, typed as a state (exit 1).
        assert "RecorderKeyError: key " in line and "must be owner-only (chmod 600" in line


def test_rotation_replaces_it_with_an_owner_only_key(tmp_path: Path) -> None:
    """The refusal's advice: a key others may have read is rotated away; the retired one still verifies old runs."""
    home = tmp_path / "home"
    _loose_key(home)
    rotated = run_bitexact(home, "keys", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert os.stat(home / "keys" / "recorder.key").st_mode & 0o077 == 0
    assert KeyStore(home).current().key_id
    assert [info.status for info in KeyStore(home).public_keys()] == ["current", "retired"]
