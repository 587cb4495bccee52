"""DSSE run envelopes (§10.2, §12.2): envelope checks 1-9, then the predicate with the same pins."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_path

from .conftest import sample_run
from .producer import envelope, pae, run_statement, sign_bundle, to_dsse


def line(tmp_path: Path, env: object, pins: Pins = Pins()) -> str:
    path = tmp_path / "run.dsse.json"
    path.write_bytes(json.dumps(env).encode())
    verdict = verify_path(path, pins)
    return verdict.line


@pytest.fixture
def env(bundle_key: SigningKey, recorder_key: SigningKey) -> dict[str, Any]:
    return to_dsse(sample_run(recorder_key).bundle(), bundle_key)


def statement_of(env: dict[str, Any]) -> dict[str, Any]:
    return json.loads(base64.b64decode(env["payload"]))


def test_dsse_round_trip(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    assert line(tmp_path, env, Pins.from_options(expect_key=bundle_key.public_hex)) == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, signed"
    )


def test_unsupported_payload_type(tmp_path: Path, env: dict[str, Any]) -> None:
    env["payloadType"] = "application/json"
    assert line(tmp_path, env) == "FAIL: envelope unsupported payloadType 'application/json'"


@pytest.mark.parametrize("payload", ["%%%", "QUJD\n", None, "QUJ"])
def test_payload_must_be_base64(tmp_path: Path, env: dict[str, Any], payload: object) -> None:
    env["payload"] = payload
    assert line(tmp_path, env) == "FAIL: envelope payload is not valid base64"


def test_keyid_of_the_accepted_signature_must_derive(tmp_path: Path, env: dict[str, Any]) -> None:
    env["signatures"][0]["keyid"] = "00" * 8
    assert line(tmp_path, env) == "FAIL: envelope signature keyid does not match its public_key"


def test_keyid_is_optional(tmp_path: Path, env: dict[str, Any]) -> None:
    del env["signatures"][0]["keyid"]
    assert line(tmp_path, env).startswith("OK: ")


def test_no_acceptable_signature(tmp_path: Path, env: dict[str, Any], other_key: SigningKey) -> None:
    bad = copy.deepcopy(env)
    bad["signatures"][0]["sig"] = base64.b64encode(b"\x00" * 64).decode()
    assert line(tmp_path, bad) == (
        "FAIL: envelope signature verification failed - no acceptable signature over the payload"
    )
    assert line(tmp_path, env, Pins.from_options(expect_key=other_key.public_hex)) == (
        "FAIL: envelope signature verification failed - no acceptable signature over the payload"
    )
    for signatures in ([], None, "x", [1, {"sig": "%%"}]):
        assert line(tmp_path, env | {"signatures": signatures}).startswith(
            "FAIL: envelope signature verification failed"
        )


def test_signatures_are_walked_in_order_skipping_unpinned_keys(
    tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey, other_key: SigningKey
) -> None:
    payload = base64.b64decode(env["payload"])
    foreign = {
        "keyid": "wrong-but-skipped",
        "public_key": other_key.public_hex,
        "sig": base64.b64encode(other_key.sign(pae(env["payloadType"], payload))).decode(),
    }
    env["signatures"].insert(0, foreign)
    # Unpinned, the first verifying signature is accepted and its keyid must derive.
    assert line(tmp_path, env) == "FAIL: envelope signature keyid does not match its public_key"
    # Pinned to the bundle key, the foreign signature is skipped.
    assert line(tmp_path, env, Pins.from_options(expect_key=bundle_key.public_hex)).startswith("OK: ")


def test_payload_must_be_strict_json(tmp_path: Path, bundle_key: SigningKey) -> None:
    payload = b'{"_type":"x","_type":"y"}'
    env = {
        "payloadType": "application/vnd.in-toto+json",
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"public_key": bundle_key.public_hex,
                        "sig": base64.b64encode(bundle_key.sign(pae("application/vnd.in-toto+json", payload))).decode()}],
    }
    assert line(tmp_path, env) == "FAIL: envelope payload is not JSON"


def resigned(statement: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    return envelope(statement, key)


def test_statement_type(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    statement = statement_of(env) | {"_type": "https://in-toto.io/Statement/v0.1"}
    assert line(tmp_path, resigned(statement, bundle_key)) == (
        "FAIL: unsupported statement type 'https://in-toto.io/Statement/v0.1'"
    )


def test_predicate_type(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    statement = statement_of(env) | {"predicateType": "https://slsa.dev/provenance/v1"}
    assert line(tmp_path, resigned(statement, bundle_key)) == (
        "FAIL: unsupported predicateType 'https://slsa.dev/provenance/v1'"
        " - a run envelope states https://bitexact.dev/run/v1"
    )


def test_subject_must_name_the_run(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    statement = statement_of(env)
    statement["subject"][0]["name"] = "another-run"
    assert line(tmp_path, resigned(statement, bundle_key)) == "FAIL: statement subject does not name the bundle run"
    statement["subject"] = []
    assert line(tmp_path, resigned(statement, bundle_key)) == "FAIL: statement subject does not name the bundle run"


def test_subject_digest_must_pin_the_head(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    statement = statement_of(env)
    statement["subject"][0]["digest"] = {"sha256": statement["subject"][0]["digest"]["head"]}
    assert line(tmp_path, resigned(statement, bundle_key)) == (
        "FAIL: statement subject digest does not pin the chain head"
    )


def test_only_the_first_subject_is_checked(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    statement = statement_of(env)
    statement["subject"].append({"name": "anything", "digest": {}})
    assert line(tmp_path, resigned(statement, bundle_key)).startswith("OK: ")


def test_predicate_is_verified_with_the_same_pins(
    tmp_path: Path, bundle_key: SigningKey, other_key: SigningKey
) -> None:
    bundle = sample_run(None).bundle()
    statement = run_statement(bundle)  # the inner bundle is unsigned
    env = envelope(statement, bundle_key)
    assert line(tmp_path, env).startswith("OK: run-1 - 6 steps")
    assert line(tmp_path, env, Pins.from_options(expect_key=bundle_key.public_hex)) == (
        "FAIL: bundle is unsigned but a trusted key was required - refusing to verify"
    )
    sign_bundle(bundle, other_key)
    env = envelope(run_statement(bundle), bundle_key)
    assert line(tmp_path, env, Pins.from_options(expect_key=bundle_key.public_hex)) == (
        "FAIL: signature public_key is not the trusted key"
    )


def test_predicate_failures_use_bundle_messages(tmp_path: Path, env: dict[str, Any], bundle_key: SigningKey) -> None:
    statement = statement_of(env)
    statement["predicate"]["entries"][2]["data"]["tool"] = "forged"
    assert line(tmp_path, resigned(statement, bundle_key)) == (
        "FAIL: step 2: data hash mismatch at path tool - value tampered or corrupted"
    )
    statement["predicate"] = [1]
    statement["subject"] = [{"name": None}]
    assert line(tmp_path, resigned(statement, bundle_key)) == "FAIL: statement subject does not name the bundle run"


def test_envelope_signature_covers_pae_of_the_decoded_payload(env: dict[str, Any]) -> None:
    payload = base64.b64decode(env["payload"])
    assert payload == canonicalize(statement_of(env))
    assert pae("t", b"ab") == b"DSSEv1 1 t 2 ab"


def test_any_other_envelope_error_is_malformed_envelope(tmp_path: Path, env: dict[str, Any]) -> None:
    from bitexact.evidence.verify.dsse import verify_envelope

    class Weird(dict):  # a mapping whose lookups blow up: no real document does this
        def get(self, key: object, default: object = None) -> object:
            raise RuntimeError("boom")

    assert verify_envelope(Weird(env), Pins()).line == "FAIL: malformed envelope: RuntimeError('boom')"
