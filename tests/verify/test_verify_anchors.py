"""§12.1 step 9 (rules of §8) for WORM anchors and the binding every anchor shares."""

from __future__ import annotations

from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_bundle

from .conftest import sample_run
from .producer import Run, worm_body


def line(doc: object, pins: Pins = Pins()) -> str:
    return verify_bundle(doc, pins).line


def resign(anchor: dict[str, Any], key: SigningKey) -> None:
    anchor["signature"] = key.sign(canonicalize(worm_body(anchor))).hex()


@pytest.fixture
def run(recorder_key: SigningKey) -> Run:
    run = sample_run(recorder_key)
    run.worm_anchor()
    return run


def test_worm_anchor_verifies(run: Run) -> None:
    assert line(run.bundle()).endswith("sealed, unsigned, 1 worm anchor(s)")


@pytest.mark.parametrize("kind", ["notary", None])
def test_unknown_anchor_type(run: Run, kind: object) -> None:
    bundle = run.bundle()
    bundle["anchors"].insert(0, {"type": kind})
    assert line(bundle) == f"FAIL: anchor 0: unknown anchor type {kind!r}"


def test_worm_anchor_recorder_pin(run: Run, other_key: SigningKey) -> None:
    assert line(run.bundle(), Pins.from_options(expect_recorder_key=other_key.public_hex)) == (
        "FAIL: checkpoint 0: not signed by the trusted recorder key"
    )
    stranger = Run("run-1", recorder=other_key)
    stranger.entries = run.entries
    anchor = stranger.worm_anchor()
    bundle = run.bundle()
    bundle["anchors"].append(anchor)
    pins = Pins.from_options(expect_recorder_key=run.recorder.public_hex)  # type: ignore[union-attr]
    assert line(bundle, pins) == "FAIL: anchor 1: worm anchor not signed by the trusted recorder key"
    trust = Pins.from_options(trust=(None, frozenset({run.recorder.public_hex})))  # type: ignore[union-attr]
    assert line(bundle, trust) == "FAIL: anchor 1: worm anchor not signed by a trusted recorder key"
    assert line(bundle).startswith("OK: ")  # without a recorder pin any valid signer will do


@pytest.mark.parametrize("field", ["anchored_at", "alg", "steps", "type"])
def test_worm_anchor_signature_covers_its_seven_keys(run: Run, field: str) -> None:
    bundle = run.bundle()
    value = {"anchored_at": "2000-01-01T00:00:00+00:00", "alg": "sha256", "steps": 5, "type": "worm"}[field]
    if field == "type":
        bundle["anchors"][0]["signature"] = "00" * 64
    else:
        bundle["anchors"][0][field] = value
    assert line(bundle) == "FAIL: anchor 0: worm anchor signature invalid"


def test_worm_key_id_is_checked_after_the_signature(run: Run) -> None:
    bundle = run.bundle()
    anchor = bundle["anchors"][0]
    anchor["key_id"] = "ff" * 8
    assert line(bundle) == "FAIL: anchor 0: worm anchor signature invalid"
    resign(anchor, run.recorder)  # type: ignore[arg-type]
    assert line(bundle) == "FAIL: anchor 0: worm anchor key_id does not derive from its public_key"


def test_anchor_run_id_binding(run: Run) -> None:
    bundle = run.bundle()
    bundle["anchors"][0]["run_id"] = "elsewhere"
    resign(bundle["anchors"][0], run.recorder)  # type: ignore[arg-type]
    assert line(bundle) == "FAIL: anchor 0: anchor run_id does not match the bundle"


@pytest.mark.parametrize("steps", [-1, "6", True, None, 6.5])
def test_anchor_non_integer_step_count(run: Run, steps: object) -> None:
    bundle = run.bundle()
    bundle["anchors"][0]["steps"] = steps
    resign(bundle["anchors"][0], run.recorder)  # type: ignore[arg-type]
    assert line(bundle) == "FAIL: anchor 0: anchor has a non-integer step count"


def test_anchor_truncation(run: Run) -> None:
    bundle = run.bundle()
    bundle["anchors"][0]["steps"] = 9
    resign(bundle["anchors"][0], run.recorder)  # type: ignore[arg-type]
    assert line(bundle) == (
        "FAIL: anchor 0: anchor attests 9 steps but the bundle has 6 - truncated below an externally anchored head"
    )


def test_anchor_head_mismatch(run: Run) -> None:
    bundle = run.bundle()
    bundle["anchors"][0]["head_hash"] = bundle["entries"][0]["hash"]
    resign(bundle["anchors"][0], run.recorder)  # type: ignore[arg-type]
    assert line(bundle) == "FAIL: anchor 0: anchor head does not match the bundle chain at the anchored step"


def test_anchor_of_an_earlier_head_verifies(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key, seal=False)
    run.worm_anchor()
    run.seal()
    run.worm_anchor()
    assert line(run.bundle()).endswith("2 worm anchor(s)")


def test_zero_step_anchor_binds_nothing(run: Run) -> None:
    bundle = run.bundle()
    bundle["anchors"][0]["steps"] = 0
    bundle["anchors"][0]["head_hash"] = "not checked"
    resign(bundle["anchors"][0], run.recorder)  # type: ignore[arg-type]
    assert line(bundle).startswith("OK: ")
