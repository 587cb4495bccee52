"""Capture key sources (the sixth review): each test is a bug it found, fixed (each names the contract line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.capture import PolicyError, parse_policy
from bitexact.capture.policy import revoked_in_force
from bitexact.health import HealthContext, run_health

KEY_HEX = "5c0ffee0" * 8  # 64 hex characters: a capture key itself


# -- 1. a key written inline in the policy, where a key spec or a key id goes, is quoted back ----------

@pytest.mark.parametrize("doc", [
    {"hash_only_key": KEY_HEX},
    {"hash_only_key": KEY_HEX.upper()},
    {"retired_keys": [KEY_HEX]},
    {"hash_only_key": {KEY_HEX: "file"}},
    {"revoked_keys": {KEY_HEX: "2026-10-01"}},
], ids=["hash_only_key", "upper-case", "retired_keys", "source-name", "revoked_keys"])
def test_a_key_written_inline_in_a_policy_is_never_quoted_in_the_refusal(tmp_path: Path, doc: dict[str, Any]) -> None:
    """capture-keys.md: a KeySourceError's message "never holds key material"; capture-controls.md: the key
    never appears anywhere but where it is kept. The key pasted where its spec (or, in revoked_keys, its key
    id) goes was copied into the PolicyError, and from there into `bitexact health`, `policy check` and logs."""
    with pytest.raises(PolicyError) as caught:
        parse_policy(doc, env={})
    assert KEY_HEX not in str(caught.value).lower() and KEY_HEX not in repr(caught.value).lower()
    assert str(caught.value).startswith("capture policy: " + next(iter(doc)))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(doc))
    report = run_health(HealthContext(env={"BITEXACT_CAPTURE_POLICY": str(policy)}, store=None, home=None))
    assert [f.name for f in report.findings] == ["capture-policy-invalid"]
    assert KEY_HEX not in json.dumps([(f.message, f.details) for f in report.findings]).lower()
    if "revoked_keys" in doc:  # what a verifier reads without loading any key
        with pytest.raises(PolicyError) as verifying:
            revoked_in_force({"BITEXACT_CAPTURE_POLICY": str(policy)})
        assert KEY_HEX not in str(verifying.value).lower()
