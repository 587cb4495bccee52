"""Bundles BitExact exports, tampered one field at a time: each fails with the spec's message.

The attacker here has the bundle but not the recorder key. Where a change
would only trip the hash, one test also re-hashes the chain (which needs no
key) to show the next line of defence names the tampering precisely.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.crypto import SigningKey, commitment
from bitexact.demo.scenario import record_demo_run
from bitexact.evidence.entry import entry_hash
from bitexact.evidence.export import RunSource, bundle_document, export_run
from bitexact.evidence.verify import Pins, verify_bundle, verify_path
from bitexact.recording import Recorder
from bitexact.store import Store

Bundle = dict[str, Any]


@pytest.fixture
def bundle(store: Store, recorder_key: SigningKey) -> Bundle:
    run_id = record_demo_run(Recorder(store, recorder_key))
    return bundle_document(RunSource.from_store(store, run_id), recorder_key)


def _pins(key: SigningKey) -> Pins:
    return Pins(bundle_keys=frozenset({key.public_hex}), recorder_keys=frozenset({key.public_hex}))


def _rehash_from(doc: Bundle, index: int) -> None:
    """Recompute hashes and links from ``index`` on, as an attacker without keys can."""
    entries = doc["entries"]
    for i in range(index, len(entries)):
        if i:
            entries[i]["prev"] = entries[i - 1]["hash"]
        entries[i]["hash"] = entry_hash(entries[i])
    doc["chain"]["head_hash"] = entries[-1]["hash"]


def _tool_step(doc: Bundle) -> int:
    return next(e["step"] for e in doc["entries"] if e["kind"] == "tool_call")


def changed_value(doc: Bundle) -> str:
    step = _tool_step(doc)
    doc["entries"][step]["data"]["tool"] = "transfer_funds"
    return f"step {step}: data hash mismatch at path tool - value tampered or corrupted"


def changed_salt(doc: Bundle) -> str:
    step = _tool_step(doc)
    doc["entries"][step]["salts"]["tool"] = "00" * 16
    return f"step {step}: data hash mismatch at path tool - value tampered or corrupted"


def reordered(doc: Bundle) -> str:
    entries = doc["entries"]
    entries[3], entries[4] = entries[4], entries[3]
    return "step 3: step index mismatch"


def deleted(doc: Bundle) -> str:
    del doc["entries"][3]
    return "step 3: step index mismatch"


def inserted(doc: Bundle) -> str:
    forged = copy.deepcopy(doc["entries"][3])
    forged["data"]["tool"] = "wire_money"
    doc["entries"].insert(4, forged)
    return "step 4: step index mismatch"


def truncated_below_checkpoint(doc: Bundle) -> str:
    del doc["entries"][-2:]
    doc["chain"]["head_hash"] = doc["entries"][-1]["hash"]
    return "checkpoint 0: attests 8 steps but the bundle has 6 - history removed below a signed checkpoint"


def relabelled_prov(doc: Bundle) -> str:
    doc["entries"][1]["prov"] = "observed"
    return "step 1: hash mismatch - entry tampered or corrupted"


def relabelled_prov_rehashed(doc: Bundle) -> str:
    doc["entries"][1]["prov"] = "observed"
    _rehash_from(doc, 1)
    return "step 1: a identity entry cannot be observed - it is asserted"


def uncommitted_path(doc: Bundle) -> str:
    step = _tool_step(doc)
    doc["entries"][step]["data"]["approved_by"] = "nobody"
    return f"step {step}: uncommitted data at path approved_by"


def redacted_value_still_present(doc: Bundle) -> str:
    entry = doc["entries"][1]
    entry["redacted"] = ["principal"]
    del entry["salts"]["principal"]
    return "step 1: path principal is marked redacted but its value is still present"


def false_redaction_claim(doc: Bundle) -> str:
    # Claim a redaction of step 1 that was never applied; re-hash so only the claim check can object.
    seal = doc["entries"][-1]
    claim = copy.deepcopy(seal)
    claim.update(kind="redaction", prov="asserted", step=seal["step"] + 1)
    claim["data"] = {"fields": ["1:principal"], "by": "mallory", "reason": "cover-up"}
    claim["salts"] = {k: "00" * 16 for k in claim["data"]}
    claim["commitments"] = {k: commitment(claim["alg"], bytes(16), v) for k, v in claim["data"].items()}
    doc["entries"].append(claim)
    _rehash_from(doc, len(doc["entries"]) - 1)
    return f"step {claim['step']}: redaction of 1:principal recorded but not applied - the bundle's redaction claim is false"


def altered_checkpoint(doc: Bundle) -> str:
    doc["checkpoints"][0]["ts"] = "2020-01-01T00:00:00+00:00"  # ts is not signed: this one passes
    doc["checkpoints"][0]["prev_checkpoint"] = "11" * 32
    return "checkpoint 0: checkpoint chain broken"


def altered_checkpoint_head(doc: Bundle) -> str:
    doc["checkpoints"][0]["steps"] = 7
    return "checkpoint 0: signature invalid"


def altered_signature(doc: Bundle) -> str:
    sig = doc["signature"]["signature"]
    doc["signature"]["signature"] = ("0" if sig[0] != "0" else "1") + sig[1:]
    return "signature check failed - bundle altered after signing"


def altered_signed_at(doc: Bundle) -> str:
    doc["signature"]["signed_at"] = "2020-01-01T00:00:00+00:00"
    return "signature check failed - bundle altered after signing"


TAMPERS: list[Callable[[Bundle], str]] = [
    changed_value, changed_salt, reordered, deleted, inserted, truncated_below_checkpoint, relabelled_prov,
    relabelled_prov_rehashed, uncommitted_path, redacted_value_still_present, false_redaction_claim,
    altered_checkpoint, altered_checkpoint_head, altered_signature, altered_signed_at,
]


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda f: f.__name__)
def test_tampering_fails_with_the_spec_message(bundle: Bundle, recorder_key: SigningKey,
                                               tamper: Callable[[Bundle], str]) -> None:
    assert verify_bundle(bundle, _pins(recorder_key)).ok
    doc = copy.deepcopy(bundle)
    expected = tamper(doc)
    verdict = verify_bundle(doc, _pins(recorder_key))
    assert verdict.line == f"FAIL: {expected}"
    assert verdict.exit_code() == 1


def test_a_wrong_pinned_bundle_key_fails(bundle: Bundle) -> None:
    other = SigningKey.generate().public_hex
    verdict = verify_bundle(bundle, Pins(bundle_keys=frozenset({other})))
    assert verdict.line == "FAIL: signature public_key is not the trusted key"


def test_a_wrong_pinned_recorder_key_fails(bundle: Bundle) -> None:
    other = SigningKey.generate().public_hex
    verdict = verify_bundle(bundle, Pins(recorder_keys=frozenset({other})))
    assert verdict.line == "FAIL: checkpoint 0: not signed by the trusted recorder key"


@pytest.mark.parametrize(
    ("text", "diag"),
    [
        ('{"format": "bitexact-bundle/1", "run_id": "a", "run_id": "b"}', "duplicate key 'run_id'"),
        ('{"format": "bitexact-bundle/1", "x": NaN}', "non-finite JSON constant 'NaN' is not allowed"),
        ('{"format": "bitexact-bundle/1", "x": ' + "[" * 130 + "]" * 130 + "}",
         "nesting deeper than 128 levels is refused"),
    ],
)
def test_unparseable_bundles_fail_naming_the_parser_diagnosis(tmp_path: Path, text: str, diag: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text)
    assert verify_path(path, Pins()).line == f"FAIL: bundle is not valid JSON: {diag}"


@pytest.mark.parametrize("fmt", ["json", "jsonl", "dsse"])
def test_a_changed_byte_in_any_exported_form_fails(store: Store, recorder_key: SigningKey, tmp_path: Path,
                                                   fmt: str) -> None:
    run_id = record_demo_run(Recorder(store, recorder_key))
    path = tmp_path / f"b.{fmt}"
    export_run(RunSource.from_store(store, run_id), path, recorder_key, fmt=fmt)
    assert verify_path(path, _pins(recorder_key)).ok
    text = path.read_text()
    needle = '"lookup_policy"'
    assert needle in text or fmt == "dsse"
    if fmt == "dsse":
        envelope = json.loads(text)
        payload = base64.b64decode(envelope["payload"]).replace(b"lookup_policy", b"lookup_polic_")
        envelope["payload"] = base64.b64encode(payload).decode()
        path.write_bytes(canonicalize(envelope))
        expected = "FAIL: envelope signature verification failed - no acceptable signature over the payload"
    else:
        path.write_text(text.replace(needle, '"lookup_polic_"'))
        expected = "FAIL: step 3: data hash mismatch at path tool - value tampered or corrupted"
    assert verify_path(path, _pins(recorder_key)).line == expected
