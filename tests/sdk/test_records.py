"""Contexts, human decisions, markers: their data, their hashes, and arguments refused by name."""

from __future__ import annotations

import base64

import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash
from bitexact.sdk import SdkArgumentError
from sdk.conftest import entries


def test_a_context_records_its_content_its_hash_and_its_source() -> None:
    with bitexact.run() as r:
        r.context("coverage-rules", "Escape of water is covered.", source="handbook/v12")
        r.context("limits", {"single_adjuster_eur": 5000})
    first, second = entries(r.run_id)[1:3]
    assert first["data"]["content"] == {"text": "Escape of water is covered."}
    assert first["data"]["content_hash"] == chain_hash(first["alg"], canonicalize(first["data"]["content"]))
    assert first["data"]["source"] == "handbook/v12"
    assert second["data"]["content"] == {"single_adjuster_eur": 5000} and "source" not in second["data"]


def test_bytes_are_recorded_as_content_b64_and_a_hash_only_hint_reaches_the_write_path() -> None:
    blob = bytes(range(256))
    with bitexact.run() as r:
        r.context_from_bytes("scan.pdf", blob, source="upload")
        r.record_context_from_bytes("id-card.png", blob, custody={"content.b64": "hash-only"})
    kept, hashed = entries(r.run_id)[1:3]
    assert base64.b64decode(kept["data"]["content"]["b64"]) == blob
    assert kept["data"]["content_hash"] == chain_hash(kept["alg"], canonicalize({"b64": kept["data"]["content"]["b64"]}))
    assert hashed["data"]["content"]["b64"] != kept["data"]["content"]["b64"]  # committed, its value not kept
    assert hashed["capture"]["fields"]["content.b64"]["mode"] == "hash-only"
    assert hashed["capture"]["fields"]["content.b64"]["hint"] is True


def test_a_human_decision_binds_the_step_its_handle_became() -> None:
    with bitexact.run() as r:
        proposal = r.record_tool_call("propose_payout", result=3490)
        r.human_decision("adjuster:m.okafor", "approve", reason="within limit", binds_step=proposal)
        r.human_decision("adjuster:m.okafor", "note", binds_step=0)
    first, second = (e["data"] for e in entries(r.run_id)[2:4])
    assert first == {"actor": "adjuster:m.okafor", "decision": "approve", "reason": "within limit", "binds_step": 1}
    assert second == {"actor": "adjuster:m.okafor", "decision": "note", "binds_step": 0}


@pytest.mark.parametrize(("call", "field"), [
    (lambda r: r.context("", "x"), "name"),
    (lambda r: r.context("n", 42), "content"),
    (lambda r: r.context("n", "x", source=7), "source"),
    (lambda r: r.context_from_bytes("n", "not bytes"), "data"),
    (lambda r: r.human_decision("", "approve"), "actor"),
    (lambda r: r.human_decision("a", None), "decision"),
    (lambda r: r.human_decision("a", "approve", binds_step=-1), "binds_step"),
    (lambda r: r.human_decision("a", "approve", binds_step=True), "binds_step"),
    (lambda r: r.marker(None), "note"),
    (lambda r: r.policy_check("", "pass"), "check"),
])
def test_a_bad_argument_is_a_typed_error_naming_it(call, field) -> None:  # type: ignore[no-untyped-def]
    with bitexact.run() as r:
        with pytest.raises(SdkArgumentError) as caught:
            call(r)
    assert caught.value.field == field
    assert [e["kind"] for e in entries(r.run_id)] == ["run_meta", "run_end"]
