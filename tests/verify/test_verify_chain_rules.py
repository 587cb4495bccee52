"""§12.1 steps 4-7 and 10-12: head, claims, markers, recorder tier, sealed tail, signature."""

from __future__ import annotations

from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_bundle

from .conftest import sample_run
from .producer import Run, sign_bundle


def line(doc: object, pins: Pins = Pins()) -> str:
    return verify_bundle(doc, pins).line


def recorder_pin(key: SigningKey) -> Pins:
    return Pins.from_options(expect_recorder_key=key.public_hex)


def test_chain_head_must_be_the_final_entry() -> None:
    bundle = sample_run(None).bundle()
    bundle["chain"]["head_hash"] = "a" * 64
    assert line(bundle) == "FAIL: chain head_hash does not match the final entry"
    del bundle["chain"]["head_hash"]
    assert line(bundle) == "FAIL: chain head_hash does not match the final entry"


# --- claims ---------------------------------------------------------------------------


def test_false_redaction_claim() -> None:
    run = sample_run(None)
    run.append("redaction", {"fields": ["2:tool"], "by": "dpo"})  # claimed, never applied
    assert line(run.bundle()) == (
        "FAIL: step 6: redaction of 2:tool recorded but not applied - the bundle's redaction claim is false"
    )


def test_claims_are_checked_in_entry_then_token_order() -> None:
    run = sample_run(None)
    run.redact((2, "tool"))
    run.append("redaction", {"fields": ["2:tool", "3:request.path", "1:principal"], "by": "dpo"})
    assert line(run.bundle()) == (
        "FAIL: step 7: redaction of 3:request.path recorded but not applied - the bundle's redaction claim is false"
    )


@pytest.mark.parametrize(
    "token",
    ["x:tool", ":tool", "99:tool", "7:tool", "02:tool", "+2:tool", "٢:tool", "-1:tool"],
)
def test_claim_tokens_that_name_no_step_are_ignored(token: str) -> None:
    # 7 entries: "7" is not below the count; "02" is longer than "7"; "٢" is not ASCII.
    run = sample_run(None)
    run.append("redaction", {"fields": [token, 5, None], "by": "dpo"})
    assert line(run.bundle()).startswith("OK: run-1 - 7 steps")


def test_claim_token_without_a_colon_claims_the_empty_path() -> None:
    run = sample_run(None)
    run.append("redaction", {"fields": ["2"], "by": "dpo"})
    assert line(run.bundle()) == (
        "FAIL: step 6: redaction of 2 recorded but not applied - the bundle's redaction claim is false"
    )


def test_claim_with_leading_zero_within_width_is_still_checked() -> None:
    run = sample_run(None)
    for _ in range(4):
        run.append("hold", {"by": "ops", "reason": "r"})
    run.append("redaction", {"fields": ["02:tool"], "by": "dpo"})  # 11 entries: width 2
    assert line(run.bundle()) == (
        "FAIL: step 10: redaction of 02:tool recorded but not applied - the bundle's redaction claim is false"
    )


def test_claim_naming_an_audit_entry_is_false() -> None:
    run = sample_run(None)
    run.append("hold", {"by": "ops", "reason": "r"})
    run.append("redaction", {"fields": ["6:reason"], "by": "dpo"})
    assert line(run.bundle()) == (
        "FAIL: step 7: redaction of 6:reason recorded but not applied - the bundle's redaction claim is false"
    )


# --- markers, recorder material, head coverage (recorder tier) ----------------------


def test_unclaimed_marker_fails_only_the_recorder_tier(recorder_key: SigningKey) -> None:
    bundle = sample_run(recorder_key).bundle(export_redact=[(3, "response.text"), (2, "args")])
    assert line(bundle).startswith("OK: run-1 - 6 steps")
    assert line(bundle, recorder_pin(recorder_key)) == (
        "FAIL: step 2: path args is marked redacted but no on-chain redaction claim records it"
        " - an unaccountable redaction is not recorder-authenticated"
    )


def test_claimed_marker_passes_the_recorder_tier(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key)
    run.redact((3, "response.text"))
    assert line(run.bundle(), recorder_pin(recorder_key)).startswith("OK: run-1 - 7 steps")


def test_recorder_tier_needs_checkpoints_or_worm_anchors(recorder_key: SigningKey) -> None:
    bundle = sample_run(None).bundle()
    assert line(bundle, recorder_pin(recorder_key)) == (
        "FAIL: a recorder key was required but the bundle carries no checkpoints or worm anchors"
        " for it to have signed"
    )
    bundle["checkpoints"] = []
    bundle["anchors"] = [{"type": "rfc3161"}]  # only WORM anchors count
    assert line(bundle, recorder_pin(recorder_key)) == (
        "FAIL: a recorder key was required but the bundle carries no checkpoints or worm anchors"
        " for it to have signed"
    )


def test_recorder_tier_needs_the_head_covered(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key, seal=False)
    run.mint = False
    run.append("marker", {"note": "unsigned tail"})
    assert line(run.bundle()).startswith("OK: ")
    assert line(run.bundle(), recorder_pin(recorder_key)) == (
        "FAIL: a recorder key was required but no checkpoint or worm anchor covers the bundle head"
        " - an unsigned tail is not recorder-authenticated"
    )
    run.worm_anchor()
    assert line(run.bundle(), recorder_pin(recorder_key)).startswith("OK: ")


def test_worm_anchor_alone_is_recorder_material(recorder_key: SigningKey) -> None:
    run = sample_run(None)
    run.recorder = recorder_key
    run.worm_anchor()
    assert line(run.bundle(), recorder_pin(recorder_key)) == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, unsigned,"
        " recorder-attested, 1 worm anchor(s)"
    )


# --- sealed tail ---------------------------------------------------------------------


def test_sealed_run_must_be_checkpointed_at_its_head(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key, seal=False)
    run.mint = False
    run.seal()
    assert line(run.bundle()) == (
        "FAIL: sealed run has entries past its last recorder checkpoint"
        " - the tail is not recorder-attested (no checkpoint covers the head)"
    )
    run.worm_anchor()  # WORM anchors do not count for this rule
    assert line(run.bundle()).startswith("FAIL: sealed run has entries past its last recorder checkpoint")
    run.checkpoint()
    assert line(run.bundle()).startswith("OK: ")


def test_audit_entry_after_seal_needs_its_checkpoint(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key)
    run.mint = False
    run.append("hold", {"by": "ops", "reason": "litigation"})
    assert line(run.bundle()).startswith("FAIL: sealed run has entries past its last recorder checkpoint")


def test_unsealed_run_without_head_checkpoint_passes_without_pin(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key, seal=False)
    run.mint = False
    run.append("marker", {"note": "n"})
    assert "unsealed - end not attested" in line(run.bundle())


# --- signature -----------------------------------------------------------------------


def signed(key: SigningKey, **kwargs: Any) -> dict[str, Any]:
    return sample_run(None).bundle(key, **kwargs)


def test_unsigned_bundle_under_a_bundle_pin(bundle_key: SigningKey) -> None:
    assert line(sample_run(None).bundle(), Pins.from_options(expect_key=bundle_key.public_hex)) == (
        "FAIL: bundle is unsigned but a trusted key was required - refusing to verify"
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("algorithm", "rsa", "unsupported signature algorithm 'rsa'"),
        ("algorithm", None, "unsupported signature algorithm None"),
        ("public_key", "xyz", "signature.public_key is not a hex string"),
        ("public_key", 5, "signature.public_key is not a hex string"),
        ("signature", "abc", "signature.signature is not a hex string"),
        ("signature", None, "signature.signature is not a hex string"),
        ("key_id", "0011223344556677", "signature key_id does not derive from its public_key"),
        ("key_id", None, "signature key_id does not derive from its public_key"),
    ],
)
def test_signature_fields(bundle_key: SigningKey, field: str, value: object, message: str) -> None:
    bundle = signed(bundle_key)
    bundle["signature"][field] = value
    assert line(bundle) == f"FAIL: {message}"


def test_signature_checks_run_in_order(bundle_key: SigningKey) -> None:
    bundle = signed(bundle_key)
    bundle["signature"].update(algorithm="x", public_key="zz", signature="zz")
    assert line(bundle) == "FAIL: unsupported signature algorithm 'x'"


def test_wrong_pinned_bundle_key(bundle_key: SigningKey, other_key: SigningKey) -> None:
    bundle = signed(bundle_key)
    assert line(bundle, Pins.from_options(expect_key=other_key.public_hex)) == (
        "FAIL: signature public_key is not the trusted key"
    )
    trust = (frozenset({other_key.public_hex}), None)
    assert line(bundle, Pins.from_options(trust=trust)) == (
        "FAIL: signature public_key is not among the trusted keys"
    )
    assert line(bundle, Pins.from_options(expect_key=bundle_key.public_hex.upper())).startswith("OK: ")


def test_altered_signature(bundle_key: SigningKey) -> None:
    bundle = signed(bundle_key)
    sig = bundle["signature"]["signature"]
    bundle["signature"]["signature"] = sig[:10] + ("0" if sig[10] != "0" else "1") + sig[11:]
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"


@pytest.mark.parametrize("field", ["signed_at", "format"])
def test_signature_binds_container_fields(bundle_key: SigningKey, field: str) -> None:
    bundle = signed(bundle_key)
    if field == "signed_at":
        bundle["signature"]["signed_at"] = "2000-01-01T00:00:00+00:00"
    else:
        bundle["run_id"] = bundle["run_id"]  # unchanged; re-sign a JSONL-format body instead
        bundle["format"] = "bitexact-bundle-jsonl/1"
        sign_bundle(bundle, bundle_key)
        bundle["format"] = "bitexact-bundle/1"
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"


def test_signature_binds_checkpoints_and_anchors_whole(bundle_key: SigningKey, recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key)
    run.worm_anchor()
    assert line(run.bundle(bundle_key)).startswith("OK: ")
    bundle = run.bundle(bundle_key)
    bundle["checkpoints"][0]["ts"] = "2000-01-01T00:00:00+00:00"  # unsigned by the checkpoint itself
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"
    bundle = run.bundle(bundle_key)
    bundle["anchors"][0]["note"] = "added"  # outside the WORM body
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"


def test_signature_without_key_id_or_signed_at(bundle_key: SigningKey) -> None:
    bundle = sample_run(None).bundle()
    sign_bundle(bundle, bundle_key, omit=("key_id", "signed_at"))
    assert line(bundle).startswith("OK: ")
    bundle["signature"]["key_id"] = bundle_key.key_id  # now in the body, which it did not sign
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"


def test_empty_anchor_list_is_signed_as_present(bundle_key: SigningKey) -> None:
    bundle = sample_run(None).bundle()
    bundle["anchors"] = []
    sign_bundle(bundle, bundle_key)
    assert line(bundle).startswith("OK: ")
    del bundle["anchors"]
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"


def test_redaction_marker_map_is_signed(bundle_key: SigningKey) -> None:
    run = Run("r")
    run.append("tool_call", {"tool": "t", "result": "secret", "args": [1]})
    bundle = run.bundle(bundle_key, export_redact=[(0, "result")])
    assert line(bundle).endswith("1 field(s) redacted")
    bundle["entries"][0]["redacted"].append("args")
    del bundle["entries"][0]["data"]["args"]
    del bundle["entries"][0]["salts"]["args"]
    assert line(bundle) == "FAIL: signature check failed - bundle altered after signing"
