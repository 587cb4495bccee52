"""What each SDK record call stores, against the bundle spec's kinds table (the sixth review of records)."""

from __future__ import annotations

import enum
import subprocess
import sys
from typing import Any

import pytest

import bitexact
from bitexact.evidence.identity import workflow_digest
from sdk.conftest import entries


def _verify(run_id: str | None) -> None:
    """Every run these tests make must verify: a stored entry that breaks a spec rule is a bug."""
    assert run_id is not None
    done = subprocess.run([sys.executable, "-c", "from bitexact.cli import main; main()", "verify", run_id], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def _gaps(run_id: str | None) -> list[dict[str, Any]]:
    return [e["data"]["gap"] for e in entries(run_id) if e["kind"] == "marker" and "gap" in e["data"]]


class Field(str, enum.Enum):
    AMOUNT = "amount"


class Tag(str):
    def __str__(self) -> str:
        return "not the key"


# -- values as documented for conversions -----------------------------------------------------------------


def test_a_mapping_keyed_by_a_str_enum_or_str_subclass_is_recorded_not_a_gap() -> None:
    # jsonable: "a non-string key -> its text". A key that is a str subclass (a `(str, Enum)` member, a
    # StrEnum, a tagged str) was kept as the subclass object, which orjson refuses ("Dict key must be str"):
    # every record holding one (a tool's result, a context, a check's detail) became an invalid_argument gap.
    with bitexact.run() as r:
        r.record_tool_call("lookup", result={Field.AMOUNT: 5})
        r.context("limits", {Tag("single"): 1})
        r.policy_check("payout-limit", "pass", detail={Field.AMOUNT: 3490})
        r.record("model", {"usage": {Field.AMOUNT: 1}})
    assert _gaps(r.run_id) == []
    call, context, check, model = (e["data"] for e in entries(r.run_id)[1:-1])
    assert call["result"] == {"amount": 5}
    assert context["content"] == {"single": 1}
    assert check["policy_check"]["detail"] == {"amount": 3490}
    assert model["usage"] == {"amount": 1}
    _verify(r.run_id)


# -- identity ---------------------------------------------------------------------------------------------


def test_a_workflow_digest_is_over_the_composition_as_stored_once_the_policy_scrubbed_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # docs/sdk.md: "A reader recomputes it from the entry's own fields"; capture.md: a context's content_hash
    # is made again over the stored content, since "a hash of the content as sent would be an unkeyed digest
    # of values kept out of the store, against which anyone could test a guess". The identity's
    # workflow_digest stayed the digest of the composition as sent: after the policy scrubbed the credential
    # in `code`, no reader could recompute it, and it let anyone test a guess at the scrubbed password.
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    sent = {"workflow": "claims-triage", "code": "deploy password=hunter2", "model_version": "m-1"}
    with bitexact.run() as r:
        r.identity(principal="svc:claims", **sent)
    (identity,) = (e for e in entries(r.run_id) if e["kind"] == "identity")
    stored = identity["data"]
    assert "hunter2" not in stored["code"]  # the policy scrubbed it
    assert stored["workflow_digest"] != workflow_digest(sent, identity["alg"]), \
        "the stored workflow_digest lets anyone test a guess at the scrubbed code"
    assert stored["workflow_digest"] == workflow_digest(stored, identity["alg"]), \
        "a reader cannot recompute the workflow_digest from the entry's own fields"
    _verify(r.run_id)


def test_an_identity_key_named_self_is_kept_as_sent_never_a_type_error() -> None:
    # collector-protocol.md: "a key the protocol does not name is kept as sent". r.identity took `self` as a
    # named parameter, so r.record("identity", {"self": ...}) (or r.identity(**event)) raised TypeError
    # ("got multiple values for argument 'self'") into the agent, in a non-strict run.
    with bitexact.run() as r:
        r.record("identity", {"principal": "svc:a", "self": "agent:7"})
        r.identity(**{"agent_id": "agent:triage", "self": "x"})
    identities = [e["data"] for e in entries(r.run_id) if e["kind"] == "identity"]
    assert identities == [{"principal": "svc:a", "self": "agent:7"}, {"agent_id": "agent:triage", "self": "x"}]
    _verify(r.run_id)


# -- policy checks ----------------------------------------------------------------------------------------


class Outcome(str, enum.Enum):
    PASS = "pass"


def test_a_policy_checks_note_names_the_outcome_it_records_for_a_str_enum_outcome() -> None:
    # docs/sdk.md: a check "records what it returned"; its marker's note is "policy check <check>: <outcome>"
    # (what `bitexact show` prints). A `(str, Enum)` outcome was recorded as outcome "pass", while the note
    # said "policy check kyc: Outcome.PASS" (the member's str()); a str subclass with its own __str__ put
    # that text in the note instead of the check's name.
    with bitexact.run() as r:
        assert r.check("kyc", lambda: Outcome.PASS) is Outcome.PASS
        r.policy_check(Tag("payout-limit"), "fail")
    first, second = (e["data"] for e in entries(r.run_id)[1:-1])
    assert first["policy_check"]["outcome"] == "pass"
    assert first["note"] == "policy check kyc: pass"
    assert second["policy_check"]["check"] == "payout-limit"
    assert second["note"] == "policy check payout-limit: fail"
    _verify(r.run_id)


class Limit(enum.Enum):
    UNSET = float("nan")
    CAPS = (1.5, float("inf"))


def test_a_nan_held_by_an_enum_member_is_recorded_as_text_never_as_null() -> None:
    # docs/sdk.md: "NaN/infinities as text". orjson writes an enum member's value itself, and a NaN there as
    # null; the check for a NaN it wrote as null walked dicts, lists and tuples but not enum members, so a
    # NaN or infinity inside one was stored as null (to_jsonable, the slow path, gives "nan").
    with bitexact.run() as r:
        r.record_tool_call("limits", result={"payout": Limit.UNSET, "caps": Limit.CAPS})
    (call,) = (e["data"] for e in entries(r.run_id) if e["kind"] == "tool_call")
    assert call["result"] == {"payout": "nan", "caps": [1.5, "inf"]}
    _verify(r.run_id)


def test_a_str_subclass_value_is_stored_as_the_text_it_holds_whatever_else_the_record_holds() -> None:
    # dump_json: the native pass and to_jsonable must give "the same value". orjson writes a str subclass as
    # the text it holds; to_jsonable wrote its str(), so a tagged string whose __str__ says something else was
    # stored as one or the other depending on whether another field (an integer past 2^53 - 1) sent the
    # record down the slow path - and an identity (always converted) stored the __str__ text as the principal.
    with bitexact.run() as r:
        r.record_tool_call("lookup", result={"tag": Tag("k")})
        r.record_tool_call("lookup", result={"tag": Tag("k"), "big": 2**60})
        r.identity(principal=Tag("svc:a"))
    first, second, identity = (e["data"] for e in entries(r.run_id)[1:-1])
    assert first["result"]["tag"] == second["result"]["tag"] == "k"
    assert identity == {"principal": "svc:a"}
    _verify(r.run_id)
