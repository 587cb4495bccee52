"""Single-field tampering of each kind fails with its §12 message, naming step and path (§13 item 13).

Each tamper is applied after signing, to the JSON form, the JSONL form (its
lines re-written, header signature kept) and the DSSE form (the predicate
edited and re-wrapped by the forger's own key, which an unpinned verifier
accepts, so the inner checks must catch it).
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_path

from .conftest import sample_run
from .producer import dumps, envelope, make_entry, relink, run_statement, to_dsse, to_jsonl

Tamper = Callable[[dict[str, Any]], None]


def change_value(b: dict[str, Any]) -> None:
    b["entries"][3]["data"]["response"]["status"] = 201


def change_salt(b: dict[str, Any]) -> None:
    b["entries"][3]["salts"]["request.method"] = "00" * 16


def reorder(b: dict[str, Any]) -> None:
    e = b["entries"]
    e[2], e[3] = e[3], e[2]


def delete(b: dict[str, Any]) -> None:
    del b["entries"][2]


def delete_and_renumber(b: dict[str, Any]) -> None:
    del b["entries"][2]
    for index, entry in enumerate(b["entries"]):
        entry["step"] = index
    relink(b)


def insert(b: dict[str, Any]) -> None:
    b["entries"].insert(2, copy.deepcopy(b["entries"][1]))


def truncate(b: dict[str, Any]) -> None:
    del b["entries"][4:]
    b["chain"]["head_hash"] = b["entries"][-1]["hash"]


def relabel_prov(b: dict[str, Any]) -> None:
    b["entries"][1]["prov"] = "observed"


def false_claim(b: dict[str, Any]) -> None:
    claim = make_entry("run-1", 6, b["entries"][-1]["hash"], "redaction", {"fields": ["2:tool"], "by": "x"})
    b["entries"].append(claim)
    b["chain"]["head_hash"] = claim["hash"]


def uncommitted(b: dict[str, Any]) -> None:
    b["entries"][4]["data"]["extra"] = {"smuggled": True}


def marker_with_value(b: dict[str, Any]) -> None:
    b["entries"][2]["redacted"] = ["tool"]


def altered_checkpoint(b: dict[str, Any]) -> None:
    b["checkpoints"][2]["head_hash"] = b["entries"][1]["hash"]


def altered_signature(b: dict[str, Any]) -> None:
    sig = b["signature"]["signature"]
    b["signature"]["signature"] = ("1" if sig[0] == "0" else "0") + sig[1:]


TAMPERS: list[tuple[str, Tamper, str]] = [
    ("changed value", change_value, "step 3: data hash mismatch at path response.status - value tampered or corrupted"),
    ("changed salt", change_salt, "step 3: data hash mismatch at path request.method - value tampered or corrupted"),
    ("reordered entries", reorder, "step 2: step index mismatch"),
    ("deleted entry", delete, "step 2: step index mismatch"),
    ("deleted entry, renumbered", delete_and_renumber, "step 4: run_end seal attests 6 steps but was sealed at 5"),
    ("inserted entry", insert, "step 2: step index mismatch"),
    ("tail truncated", truncate,
     "checkpoint 4: attests 5 steps but the bundle has 4 - history removed below a signed checkpoint"),
    ("relabelled prov", relabel_prov, "step 1: hash mismatch - entry tampered or corrupted"),
    ("false redaction claim", false_claim,
     "step 6: redaction of 2:tool recorded but not applied - the bundle's redaction claim is false"),
    ("uncommitted path", uncommitted, "step 4: uncommitted data at path extra.smuggled"),
    ("marker with value", marker_with_value, "step 2: path tool is marked redacted but its value is still present"),
    ("altered checkpoint", altered_checkpoint, "checkpoint 2: signature invalid"),
    ("altered signature", altered_signature, "signature check failed - bundle altered after signing"),
]


@pytest.fixture
def signed(bundle_key: SigningKey, recorder_key: SigningKey) -> dict[str, Any]:
    return sample_run(recorder_key).bundle(bundle_key)


def as_jsonl(bundle: dict[str, Any]) -> bytes:
    header = {k: v for k, v in bundle.items() if k != "entries"} | {"format": "bitexact-bundle-jsonl/1"}
    return b"\n".join([dumps(header)] + [dumps(e) for e in bundle["entries"]]) + b"\n"


@pytest.mark.parametrize(("name", "tamper", "message"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampered_json_bundle(tmp_path: Path, signed: dict[str, Any], name: str, tamper: Tamper, message: str) -> None:
    tamper(signed)
    path = tmp_path / "b.json"
    path.write_bytes(dumps(signed))
    assert verify_path(path, Pins()).line == f"FAIL: {message}"


@pytest.mark.parametrize(("name", "tamper", "message"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampered_jsonl_bundle(
    tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey, name: str, tamper: Tamper, message: str
) -> None:
    lines = to_jsonl(sample_run(recorder_key).bundle(), bundle_key).splitlines()
    bundle = json.loads(lines[0]) | {"entries": [json.loads(x) for x in lines[1:]]}
    tamper(bundle)
    path = tmp_path / "b.jsonl"
    path.write_bytes(as_jsonl(bundle))
    verdict = verify_path(path, Pins())
    assert verdict.form == "jsonl"
    assert verdict.line == f"FAIL: {message}"


@pytest.mark.parametrize(("name", "tamper", "message"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampered_dsse_predicate(
    tmp_path: Path, signed: dict[str, Any], other_key: SigningKey, name: str, tamper: Tamper, message: str
) -> None:
    tamper(signed)
    statement = run_statement(signed)
    path = tmp_path / "b.dsse.json"
    path.write_bytes(json.dumps(envelope(statement, other_key)).encode())
    assert verify_path(path, Pins()).line == f"FAIL: {message}"


def test_tampered_dsse_payload_breaks_the_envelope(tmp_path: Path, bundle_key: SigningKey) -> None:
    env = to_dsse(sample_run(None).bundle(), bundle_key)
    statement = json.loads(base64.b64decode(env["payload"]))
    statement["predicate"]["entries"][3]["data"]["response"]["status"] = 201
    env["payload"] = base64.b64encode(dumps(statement)).decode()
    path = tmp_path / "b.dsse.json"
    path.write_bytes(dumps(env))
    assert verify_path(path, Pins()).line == (
        "FAIL: envelope signature verification failed - no acceptable signature over the payload"
    )


def test_forger_rewrap_fails_under_a_bundle_pin(tmp_path: Path, signed: dict[str, Any], bundle_key: SigningKey,
                                               other_key: SigningKey) -> None:
    path = tmp_path / "b.dsse.json"
    path.write_bytes(dumps(envelope(run_statement(signed), other_key)))
    assert verify_path(path, Pins(bundle_keys=frozenset({bundle_key.public_hex}))).line == (
        "FAIL: envelope signature verification failed - no acceptable signature over the payload"
    )


def test_wrong_pinned_keys(tmp_path: Path, signed: dict[str, Any], other_key: SigningKey) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(dumps(signed))
    assert verify_path(path, Pins.from_options(expect_key=other_key.public_hex)).line == (
        "FAIL: signature public_key is not the trusted key"
    )
    assert verify_path(path, Pins.from_options(expect_recorder_key=other_key.public_hex)).line == (
        "FAIL: checkpoint 0: not signed by the trusted recorder key"
    )


@pytest.mark.parametrize(
    ("raw", "json_message", "line_message"),
    [
        (b'{"k":1,"k":2}', "duplicate key 'k'", "duplicate key 'k'"),
        (b'{"k":NaN}', "non-finite JSON constant 'NaN' is not allowed", "non-finite JSON constant 'NaN' is not allowed"),
        (b"[" * 129 + b"]" * 129, "nesting deeper than 128 levels is refused", "nesting deeper than 128 levels is refused"),
    ],
)
def test_strict_parse_in_every_form(
    tmp_path: Path, bundle_key: SigningKey, raw: bytes, json_message: str, line_message: str
) -> None:
    bundle = sample_run(None).bundle()
    text = dumps(bundle)
    # JSON form: the bad value inside the bundle.
    path = tmp_path / "b.json"
    path.write_bytes(text[:-1] + b',"extra":' + raw + b"}")
    assert verify_path(path, Pins()).line == f"FAIL: bundle is not valid JSON: {json_message}"
    # JSONL: a bad line.
    lines = to_jsonl(bundle, bundle_key).splitlines()
    lines[2] = raw
    path = tmp_path / "b.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert verify_path(path, Pins()).line == f"FAIL: line 3 is not JSON: {line_message}"
    # DSSE: a bad payload, properly signed.
    statement = dumps(run_statement(bundle))[:-1] + b',"extra":' + raw + b"}"
    from .producer import pae

    env = {
        "payloadType": "application/vnd.in-toto+json",
        "payload": base64.b64encode(statement).decode(),
        "signatures": [{"public_key": bundle_key.public_hex, "sig": base64.b64encode(
            bundle_key.sign(pae("application/vnd.in-toto+json", statement))).decode()}],
    }
    path = tmp_path / "b.dsse.json"
    path.write_bytes(dumps(env))
    assert verify_path(path, Pins()).line == "FAIL: envelope payload is not JSON"
