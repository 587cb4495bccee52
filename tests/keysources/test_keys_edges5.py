"""Capture key sources (the fifth review): each test is a bug it found, fixed (each names the contract line)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bitexact.capture import PolicyError, load_policy, parse_policy
from bitexact.crypto.keysources import KeySourceError, load_capture_key, load_key_env
from bitexact.health import HealthContext, run_health

# The capture_verdict helpers (a recorded run, the real CLI) live one level up.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

KEY_HEX = "5c0ffee0" * 8  # 64 hex characters: a capture key itself, not a path


# -- 1. a key put where a key file's path goes is quoted back in every message ----------------

def test_a_key_given_in_bitexact_capture_key_is_never_quoted_in_the_error(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """capture-keys.md: KeySourceError's "message names the field or file and never holds key material".

    Setting BITEXACT_CAPTURE_KEY to the key itself (instead of the path of a key file) is the
    obvious mistake to make; the refusal must not copy the key into stderr, health output or logs.
    """
    monkeypatch.chdir(tmp_path)  # no file of that name here
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", KEY_HEX)
    with pytest.raises(KeySourceError) as caught:
        load_key_env()
    assert KEY_HEX not in str(caught.value)
    with pytest.raises(PolicyError) as refused:
        load_policy("default", env={"BITEXACT_CAPTURE_KEY": KEY_HEX})
    assert KEY_HEX not in str(refused.value)
    report = run_health(HealthContext(env={"BITEXACT_CAPTURE_KEY": KEY_HEX}, store=None, home=None))
    assert KEY_HEX not in json.dumps([(f.message, f.details) for f in report.findings])

    # The same key held inline in a policy's key spec: {"file": "<64 hex>"}.
    with pytest.raises(KeySourceError) as inline:
        load_capture_key({"file": KEY_HEX})
    assert KEY_HEX not in str(inline.value)


# -- 2. revoked_keys are not reported when a key of the policy cannot be loaded where it verifies --

def test_a_verdict_names_fields_under_a_revoked_key_where_the_capture_key_is_not_held(
        monkeypatch: pytest.MonkeyPatch, store: Any, recorder_key: Any, home: Path, tmp_path: Path) -> None:
    """capture-controls.md: "A verdict names the fields committed under a revoked key", and after a
    rotation "every verdict over those fields says they are guessable by its holder from that date".

    revoked_keys is a map of key ids in the policy: naming them needs no key. The capture key
    "must be kept apart" from the evidence, so the machine that verifies a bundle typically does
    not hold it (here: the policy's key file is absent there). The verdict must still name the
    fields committed under the revoked key; today it drops the clause and only warns on stderr.
    """
    from capture_verdict.support import (
        CONTRACT,
        CONTRACT_POLICY,
        ENV_NAMES,
        contract_key,
        contract_run,
        invoker,
        policy_file,
        recorder,
    )

    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    recorded = parse_policy({**CONTRACT_POLICY, "hash_only_key": {"file": str(contract_key(tmp_path))}},
                            name="recorded", env={})
    writer = recorder(store, recorder_key, recorded).start()
    contract_run(writer)
    key_id = CONTRACT["test_key_3a9f"]["key_id"]

    # The auditor's copy of the policy: same document, revoked key listed, key file not on this machine.
    absent = tmp_path / "elsewhere" / "bitexact-capture.key"
    doc = {**CONTRACT_POLICY, "hash_only_key": {"file": str(absent)}, "revoked_keys": {key_id: "2026-10-01"}}
    env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, doc, name="audit.json"))}
    result = invoker(home)("verify", writer.run_id, env=env)
    assert result.exit_code == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert "revoked key 3a9f.." in first and "2:on_behalf_of" in first, (first, result.stderr)


# -- 3. a PIN written where the name of its variable goes is quoted back ----------------------

@pytest.mark.parametrize("pin_value", ["4711-bitexact", 471108])
def test_a_pin_put_in_pin_env_is_never_quoted_in_the_error_or_health(tmp_path: Path, pin_value: object) -> None:
    """capture-controls.md: the PIN is "read from $VAR, never written in the policy"; capture-keys.md: the
    PIN never goes in the policy, and a spec error "names the field". The loader knows a value in pin_env
    that is not a variable name is most likely the PIN itself (its own message says so), yet copies it
    into the message, and from there into `bitexact health` and `policy check` output and logs."""
    spec = {"pkcs11": {"lib": "/usr/lib/softhsm/libsofthsm2.so", "slot": 0, "label": "capture",
                       "pin_env": pin_value}}
    with pytest.raises(KeySourceError, match=r"^hash_only_key\.pkcs11\.pin_env") as caught:
        load_capture_key(spec)
    assert str(pin_value) not in str(caught.value)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"hash_only_key": spec}))
    report = run_health(HealthContext(env={"BITEXACT_CAPTURE_POLICY": str(policy)}, store=None, home=None))
    assert [f.name for f in report.findings] == ["capture-policy-invalid"]
    assert str(pin_value) not in json.dumps([(f.message, f.details) for f in report.findings])



def test_keygen_never_writes_a_capture_key_under_the_data_directory(tmp_path: Path) -> None:
    # Its help says "never under the data directory", yet `-o $BITEXACT_HOME/capture.key` wrote one there.
    from click.testing import CliRunner

    from bitexact.cli import cli

    home = tmp_path / "home"
    result = CliRunner().invoke(cli, ["capture", "keygen", "-o", str(home / "capture.key")],
                                env={"BITEXACT_HOME": str(home)})
    assert result.exit_code == 2 and "never goes under the data directory" in result.output
    assert not (home / "capture.key").exists()
