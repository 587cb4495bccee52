"""workflow_digest: computed by the recorder from the composition fields, never taken from the caller."""

from __future__ import annotations

import hashlib

import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.sdk.identity import workflow_digest
from sdk.conftest import entries

COMPOSED = {"workflow": "claims-triage", "workflow_version": "v4", "policy_version": "pol-3",
            "prompt_pack_version": "pp-2", "model_version": "m-1", "code": "abc123"}


def _identity(run_id: str | None) -> dict:
    (entry,) = [e for e in entries(run_id) if e["kind"] == "identity"]
    return entry["data"]


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
def test_an_identity_with_a_workflow_carries_the_digest_of_its_composition(
    alg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_HASH_ALG", alg)
    with bitexact.run() as r:
        r.identity(principal="svc:adjudicator", environment="prod", workflow_instance="application-77", **COMPOSED)
    data = _identity(r.run_id)
    composed = canonicalize(COMPOSED)  # who, where and which run are not part of it
    expected = (hashlib.blake2b(composed, digest_size=32) if alg == "blake2b-256" else hashlib.sha256(composed))
    assert data["workflow_digest"] == expected.hexdigest()
    assert data["principal"] == "svc:adjudicator" and data["workflow"] == "claims-triage"


def test_the_same_workflow_run_by_someone_else_elsewhere_has_the_same_digest() -> None:
    a = workflow_digest({**COMPOSED, "principal": "svc:a", "environment": "prod"}, "sha256")
    b = workflow_digest({**COMPOSED, "principal": "svc:b", "environment": "staging", "workflow_instance": "x"},
                        "sha256")
    changed = workflow_digest({**COMPOSED, "model_version": "m-2"}, "sha256")
    assert a == b and a is not None
    assert changed != a, "another model is another composition"


def test_no_workflow_no_digest_and_a_callers_digest_is_refused() -> None:
    with bitexact.run() as r:
        r.identity(principal="svc:adjudicator", workflow_version="v4", workflow_digest="00ff")
    data = _identity(r.run_id)
    assert "workflow_digest" not in data
    gap = [e for e in entries(r.run_id) if e["kind"] == "marker"][0]["data"]["gap"]
    assert "workflow_digest" in gap["fields"]
