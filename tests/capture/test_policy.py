"""The policy: presets, the loader, validation with precise errors, the digest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bitexact.capture import PolicyError, load_policy, parse_policy
from bitexact.capture.policy import PRESETS

from .support import write_policy

CONTRACT_EXAMPLE = {
    "detectors": {
        "pan": {"keep_last4": True},
        "iban": {},
        "credentials": {},
        "us_ssn": {"require_context": True},
        "email": {},
        "custom": [{"name": "account", "pattern": "ACCT-\\d{8}"}],
    },
    "fields": [
        {"kind": "identity", "path": "on_behalf_of", "mode": "hash-only"},
        {"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
        {"kind": "*", "path": "*", "mode": "scrub"},
    ],
    "budget_ms": 1000,
    "revoked_keys": {"3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6": "2026-10-01"},
}


def test_the_shipped_default_scrubs_pan_iban_and_credentials_everywhere() -> None:
    policy = load_policy()
    assert policy.name == "default" and not policy.off
    assert set(policy.detectors) == {"pan", "iban", "credentials"}
    assert [r.to_json() for r in policy.rules] == [{"kind": "*", "path": "*", "mode": "scrub"}]
    assert policy.budget_ms == 1000
    assert policy.run_meta_value == policy.digest


def test_the_environment_names_the_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "pci")
    assert load_policy().name == "pci"
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    assert load_policy().run_meta_value == "off"
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", str(write_policy(tmp_path, CONTRACT_EXAMPLE)))
    assert set(load_policy().detectors) == {"pan", "iban", "credentials", "us_ssn", "email", "custom"}


def test_the_pci_preset_keeps_base64_hash_only() -> None:
    policy = load_policy("pci")
    assert [r.to_json() for r in policy.rules][0] == {"kind": "*", "path": "*.b64", "mode": "hash-only"}
    assert policy.needs_key()


def test_the_contract_example_loads(tmp_path: Path, key_file: Path) -> None:
    document = {**CONTRACT_EXAMPLE, "hash_only_key": {"file": str(key_file)}}
    policy = load_policy(str(write_policy(tmp_path, document)))
    assert policy.key is not None and len(policy.key_id) == 32
    assert policy.revoked == {"3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6": "2026-10-01"}
    assert policy.revoked_since("3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6") == "2026-10-01"
    assert not policy.active_key_revoked()


def test_a_revoked_active_key_is_reported(key_file: Path) -> None:
    key_id = parse_policy({"hash_only_key": {"file": str(key_file)}}).key_id
    policy = parse_policy({"hash_only_key": {"file": str(key_file)}, "revoked_keys": {key_id: "2026-01-01"}})
    assert policy.active_key_revoked()
    assert policy.normalized["revoked_keys"] == {key_id: "2026-01-01"}


@pytest.mark.parametrize(
    ("document", "field", "reason"),
    [
        ({"bogus": 1}, "bogus", "unknown key"),
        ({"detectors": {"phone": {}}}, "detectors.phone", "unknown detector"),
        ({"detectors": {"pan": {"keep_last": True}}}, "detectors.pan.keep_last", "unknown option"),
        ({"detectors": {"pan": {"keep_last4": "yes"}}}, "detectors.pan.keep_last4", "true or false"),
        ({"detectors": {"custom": [{"name": "acct", "pattern": "\\d+"}]}}, "detectors.custom[0].pattern", "unbounded"),
        ({"detectors": {"custom": [{"name": "pan", "pattern": "x"}]}}, "detectors.custom[0].name", "already"),
        ({"detectors": {"custom": [{"name": "Acct", "pattern": "x"}]}}, "detectors.custom[0].name", "lower-case"),
        ({"budget_ms": 0}, "budget_ms", "from 1 to 10000"),
        ({"budget_ms": 10001}, "budget_ms", "from 1 to 10000"),
        ({"budget_ms": 1.5}, "budget_ms", "whole number"),
        ({"budget_ms": True}, "budget_ms", "whole number"),
        ({"fields": {}}, "fields", "a list"),
        ({"fields": [{"kind": "run_meta", "path": "x", "mode": "scrub"}]}, "fields[0].kind", "could never match"),
        ({"fields": [{"kind": "toolcall", "path": "x", "mode": "scrub"}]}, "fields[0].kind", "could never match"),
        ({"fields": [{"kind": "*", "path": "a.b.c", "mode": "scrub"}]}, "fields[0].path", "could never match"),
        ({"fields": [{"kind": "*", "path": "a.*", "mode": "scrub"}]}, "fields[0].path", "could never match"),
        ({"fields": [{"kind": "*", "path": "", "mode": "scrub"}]}, "fields[0].path", "KEY, KEY.SUBKEY"),
        ({"fields": [{"kind": "*", "path": "a~2", "mode": "scrub"}]}, "fields[0].path", "~0"),
        ({"fields": [{"kind": "*", "path": "x", "mode": "encrypt"}]}, "fields[0].mode", "keep, scrub or hash-only"),
        ({"fields": [{"kind": "*", "path": "x", "mode": "scrub", "linkable": True}]}, "fields[0].linkable", "hash-only"),
        ({"fields": [{"kind": "*", "path": "x"}]}, "fields[0].mode", "missing"),
        ({"fields": [{"kind": "*", "path": "x", "mode": "scrub", "where": {}}]}, "fields[0].where", "leave it out"),
        ({"fields": [{"kind": "*", "path": "x", "mode": "scrub", "where": {"a": [1]}}]}, "fields[0].where.a", "string"),
        (
            {"fields": [{"kind": "*", "path": "*", "mode": "scrub"}, {"kind": "tool_call", "path": "r", "mode": "hash-only"}]},
            "fields[1]",
            "fields[0]",
        ),
        (
            {"fields": [{"kind": "*", "path": "*.b64", "mode": "keep"}, {"kind": "*", "path": "content.b64", "mode": "scrub"}]},
            "fields[1]",
            "could never match",
        ),
        ({"revoked_keys": {"ABC": "2026-01-01"}}, "revoked_keys.ABC", "32 lower-case hex"),
        ({"revoked_keys": {"3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6": "2026-13-01"}}, "revoked_keys.3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6", "not a date"),
        ({"hash_only_key": {"file": "/nonexistent/capture.key"}}, "hash_only_key", "no such file"),
        ({"hash_only_key": {"vault": "x"}}, "hash_only_key", "unknown key source"),
        ({"retired_keys": [{"file": "/nonexistent/old.key"}]}, "retired_keys[0]", "no such file"),
    ],
)
def test_an_unusable_policy_is_refused_naming_the_field(document: dict, field: str, reason: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(document)
    assert caught.value.field == field
    assert reason in caught.value.reason


def test_a_rule_after_a_conditional_one_is_not_shadowed() -> None:
    document = {
        "fields": [
            {"kind": "tool_call", "where": {"tool": "x"}, "path": "*", "mode": "keep"},
            {"kind": "tool_call", "path": "result", "mode": "hash-only"},
            {"kind": "*", "path": "*", "mode": "scrub"},
        ]
    }
    assert len(parse_policy(document).rules) == 3


def test_a_policy_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"budget_ms": 1000, "budget_ms": 2000}')
    with pytest.raises(PolicyError) as caught:
        load_policy(str(path))
    assert "duplicate" in caught.value.reason.lower()
    with pytest.raises(PolicyError) as missing:
        load_policy(str(tmp_path / "nope.json"))
    assert "no such file" in missing.value.reason


def test_the_digest_is_stable_and_changes_with_the_policy() -> None:
    assert load_policy().digest == load_policy().digest
    assert load_policy().digest == parse_policy(PRESETS["default"]).digest
    assert load_policy().digest != load_policy("pci").digest
    assert parse_policy({"budget_ms": 999}).digest != load_policy().digest


def test_the_digest_names_the_key_by_id_never_by_location(tmp_path: Path, key_file: Path, other_key_file: Path) -> None:
    moved = tmp_path / "moved" / "capture.key"
    moved.parent.mkdir()
    moved.write_bytes(key_file.read_bytes())
    os.chmod(moved, 0o600)
    here = parse_policy({"hash_only_key": {"file": str(key_file)}})
    there = parse_policy({"hash_only_key": {"file": str(moved)}})
    other = parse_policy({"hash_only_key": {"file": str(other_key_file)}})
    assert here.digest == there.digest  # moving the key file is the same policy
    assert here.digest != other.digest  # a new key is not
    assert str(key_file) not in str(here.normalized)
    assert here.normalized["hash_only_key"] == {"key_id": here.key_id}


def test_without_hash_only_key_the_environment_names_the_key(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_policy("pci").key is None
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(key_file))
    policy = load_policy("pci")
    assert policy.key is not None
    assert policy.normalized["hash_only_key"] == {"key_id": policy.key_id}


def test_retired_keys_open_what_they_committed(key_file: Path, other_key_file: Path) -> None:
    policy = parse_policy({"hash_only_key": {"file": str(other_key_file)}, "retired_keys": [{"file": str(key_file)}]})
    retired = policy.retired[0]
    assert policy.key_for(retired.key_id) is retired
    assert policy.key_for(policy.key_id) is policy.key
    assert policy.key_for("0" * 32) is None
    with pytest.raises(PolicyError) as caught:
        parse_policy({"hash_only_key": {"file": str(key_file)}, "retired_keys": [{"file": str(key_file)}]})
    assert caught.value.field == "retired_keys"


def test_off_removes_nothing_and_says_so() -> None:
    policy = load_policy("off")
    assert policy.off and policy.digest is None and policy.run_meta_value == "off"
    assert policy.describe() == {"policy": "off"}
