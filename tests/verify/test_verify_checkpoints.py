"""§12.1 step 8 (rules of §7): each checkpoint, in order, with the ``checkpoint {i}: `` prefix."""

from __future__ import annotations

from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_bundle

from .conftest import sample_run
from .producer import sign_checkpoint


def line(doc: object, pins: Pins = Pins()) -> str:
    return verify_bundle(doc, pins).line


@pytest.fixture
def bundle(recorder_key: SigningKey) -> dict[str, Any]:
    return sample_run(recorder_key).bundle()  # one checkpoint after each of the 6 appends


def test_valid_checkpoint_chain(bundle: dict[str, Any]) -> None:
    assert len(bundle["checkpoints"]) == 6
    assert line(bundle).startswith("OK: run-1 - 6 steps")


def test_checkpoint_run_id(bundle: dict[str, Any]) -> None:
    bundle["checkpoints"][5]["run_id"] = "other"
    assert line(bundle) == "FAIL: checkpoint 5: run_id 'other' does not match bundle run_id"


@pytest.mark.parametrize("seq", [4, None, True, "5"])
def test_checkpoint_sequence_gap(bundle: dict[str, Any], seq: object) -> None:
    bundle["checkpoints"][5]["seq"] = seq
    assert line(bundle) == "FAIL: checkpoint 5: sequence gap"


def test_removed_checkpoint_is_a_sequence_gap(bundle: dict[str, Any]) -> None:
    del bundle["checkpoints"][2]
    assert line(bundle) == "FAIL: checkpoint 2: sequence gap"


def test_altered_checkpoint_breaks_the_checkpoint_chain(bundle: dict[str, Any], recorder_key: SigningKey) -> None:
    # Re-signed by the recorder key, yet the next checkpoint chains over the old body.
    bundle["checkpoints"][3]["head_hash"] = bundle["entries"][2]["hash"]
    sign_checkpoint(bundle["checkpoints"][3], recorder_key)
    assert line(bundle) == "FAIL: checkpoint 3: attested head does not match the chain at step 3"
    bundle["checkpoints"][3]["steps"] = 3
    sign_checkpoint(bundle["checkpoints"][3], recorder_key)
    assert line(bundle) == "FAIL: checkpoint 4: checkpoint chain broken"


def test_first_checkpoint_chains_from_genesis(bundle: dict[str, Any]) -> None:
    bundle["checkpoints"][0]["prev_checkpoint"] = "1" * 64
    assert line(bundle) == "FAIL: checkpoint 0: checkpoint chain broken"


def test_recorder_pin_exact_and_set(bundle: dict[str, Any], other_key: SigningKey, recorder_key: SigningKey) -> None:
    assert line(bundle, Pins.from_options(expect_recorder_key=other_key.public_hex)) == (
        "FAIL: checkpoint 0: not signed by the trusted recorder key"
    )
    assert line(bundle, Pins.from_options(trust=(None, frozenset({other_key.public_hex})))) == (
        "FAIL: checkpoint 0: not signed by a trusted recorder key"
    )
    assert line(bundle, Pins.from_options(trust=(None, frozenset()))) == (
        "FAIL: checkpoint 0: not signed by a trusted recorder key"
    )
    both = Pins.from_options(expect_recorder_key=other_key.public_hex, trust=(None, frozenset({recorder_key.public_hex})))
    assert line(bundle, both).startswith("OK: ")


def test_checkpoint_pin_is_checked_before_its_signature(bundle: dict[str, Any], other_key: SigningKey) -> None:
    bundle["checkpoints"][0]["signature"] = "00" * 64
    assert line(bundle, Pins.from_options(expect_recorder_key=other_key.public_hex)) == (
        "FAIL: checkpoint 0: not signed by the trusted recorder key"
    )
    assert line(bundle) == "FAIL: checkpoint 0: signature invalid"


def test_checkpoint_hash_algorithm(bundle: dict[str, Any]) -> None:
    bundle["checkpoints"][5]["alg"] = "sha1"
    assert line(bundle) == "FAIL: checkpoint 5: unsupported hash algorithm 'sha1'"


def test_checkpoint_key_id_must_derive(bundle: dict[str, Any]) -> None:
    bundle["checkpoints"][5]["key_id"] = "00" * 8
    assert line(bundle) == "FAIL: checkpoint 5: key_id does not derive from its public_key"


def test_checkpoint_signed_by_an_unrelated_key(bundle: dict[str, Any], other_key: SigningKey) -> None:
    cp = bundle["checkpoints"][5]
    cp["public_key"] = other_key.public_hex
    cp["key_id"] = other_key.key_id
    assert line(bundle) == "FAIL: checkpoint 5: signature invalid"


@pytest.mark.parametrize("field", ["head_hash", "steps", "signature"])
def test_altered_checkpoint_signature_invalid(bundle: dict[str, Any], field: str) -> None:
    cp = bundle["checkpoints"][5]
    cp[field] = {"head_hash": "a" * 64, "steps": 5, "signature": "ab" * 64}[field]
    assert line(bundle) == "FAIL: checkpoint 5: signature invalid"


def test_checkpoint_ts_is_not_signed(bundle: dict[str, Any]) -> None:
    bundle["checkpoints"][5]["ts"] = "whenever"
    assert line(bundle).startswith("OK: ")


@pytest.mark.parametrize(("steps", "shown"), [("6", "'6'"), (True, "True"), (None, "None"), (6.0, "6.0")])
def test_checkpoint_non_integer_step_count(bundle: dict[str, Any], recorder_key: SigningKey, steps: object, shown: str) -> None:
    bundle["checkpoints"][5]["steps"] = steps
    sign_checkpoint(bundle["checkpoints"][5], recorder_key)
    assert line(bundle) == f"FAIL: checkpoint 5: non-integer step count {shown}"


def test_checkpoint_missing_steps_counts_as_zero(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key, seal=False)
    del run.checkpoints[4]["steps"]
    sign_checkpoint(run.checkpoints[4], recorder_key)
    assert line(run.bundle()).startswith("OK: run-1 - 5 steps")


def test_tail_truncated_below_a_checkpoint(bundle: dict[str, Any]) -> None:
    del bundle["entries"][4:]
    bundle["chain"]["head_hash"] = bundle["entries"][-1]["hash"]
    assert line(bundle) == (
        "FAIL: checkpoint 4: attests 5 steps but the bundle has 4 - history removed below a signed checkpoint"
    )


def test_mixed_algorithm_checkpoints_chain_under_the_previous_alg(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key, seal=False)
    run.alg = "sha256"
    run.append("marker", {"note": "from here on sha256"})
    run.seal()
    assert {cp["alg"] for cp in run.checkpoints} == {"blake2b-256", "sha256"}
    assert line(run.bundle(), Pins.from_options(expect_recorder_key=recorder_key.public_hex)).startswith("OK: ")
