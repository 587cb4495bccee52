"""KMS key sources under health and the policy loader, found in review: a client that cannot be set up is an
invalid policy naming the field, and a load answered for another key is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto.keysources import KeySourceError, load_capture_key
from bitexact.crypto.keysources import kms as kms_module
from bitexact.health import HealthContext, run_health

_AWS_VARS = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION",
             "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_KMS", "BITEXACT_KMS_ENDPOINT")


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An AWS environment that can never reach a real account (nothing here makes a request)."""
    for name in _AWS_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


def _kms_policy(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"hash_only_key": {"kms_hmac": "alias/bitexact-capture"}}))
    return {"BITEXACT_CAPTURE_POLICY": str(path)}


@pytest.mark.parametrize("var, value", [
    ("BITEXACT_KMS_ENDPOINT", "not a url"),   # botocore: ValueError("Invalid endpoint")
    ("AWS_PROFILE", "no-such-profile"),        # botocore: ProfileNotFound
    ("AWS_REGION", "not a region!"),           # botocore: InvalidRegionError
])
def test_kms_client_setup_failure_is_capture_policy_invalid(
        aws_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, var: str, value: str) -> None:
    """A KMS key that cannot be set up makes the policy unusable: one critical capture-policy-invalid
    naming the field (docs/capture-verify.md), not four health-check-failed crashes."""
    monkeypatch.setenv(var, value)
    report = run_health(HealthContext(env=_kms_policy(tmp_path), store=None, home=None))
    names = [(f.level, f.name) for f in report.findings]
    assert names == [("critical", "capture-policy-invalid")], names
    assert report.findings[0].details["field"].startswith("hash_only_key")


def test_kms_client_setup_failure_is_a_key_source_error_naming_the_field(
        aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """capture-keys.md: a key that cannot be loaded is a KeySourceError whose message names the field."""
    monkeypatch.setenv("BITEXACT_KMS_ENDPOINT", "not a url")
    with pytest.raises(KeySourceError, match="kms_hmac"):
        load_capture_key({"kms_hmac": "alias/bitexact-capture"})


class _OtherKeyClient:
    """A GenerateMac answer for a different key than the one asked for (a misrouted endpoint)."""

    OTHER = "arn:aws:kms:us-east-1:111122223333:key/99999999-9999-9999-9999-999999999999"

    def generate_mac(self, **kwargs: Any) -> dict[str, Any]:
        return {"Mac": b"\x01" * 32, "KeyId": self.OTHER, "MacAlgorithm": "HMAC_SHA_256"}


def test_kms_hmac_load_refuses_an_answer_for_a_different_key(
        aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every later GenerateMac refuses an answer naming another key; the one at load must too,
    or the key id (and every commitment) is taken from a key the policy does not name."""
    asked = "arn:aws:kms:us-east-1:111122223333:key/11111111-1111-1111-1111-111111111111"
    monkeypatch.setattr(kms_module, "make_client", lambda *a, **k: _OtherKeyClient())
    with pytest.raises(KeySourceError):
        load_capture_key({"kms_hmac": asked})
