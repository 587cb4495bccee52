"""Review of the SDK's explicit records (identity, contexts, decisions, checks), nondeterminism capture and
the causal context: regression tests, each for a bug a review found."""

from __future__ import annotations

import base64
import datetime
from types import MappingProxyType

import orjson
import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.context import parse_context
from bitexact.crypto import chain_hash
from bitexact.sdk import SdkArgumentError
from sdk.conftest import entries

MAX_CLOCK = 2**53 - 1


# -- identity -------------------------------------------------------------------------


def test_identity_keeps_a_number_under_an_unknown_key_as_sent_not_as_zero() -> None:
    # collector-protocol.md, Identity events: "a key the protocol does not name is kept as sent".
    with bitexact.run() as r:
        r.identity(environment="prod", tenant=5, ratio=0.5)
    identity = entries(r.run_id)[1]
    assert identity["kind"] == "identity"
    assert identity["data"] == {"environment": "prod", "tenant": 5, "ratio": 0.5}


def test_identity_judges_a_number_inside_scope_as_a_number_never_as_its_text() -> None:
    # docs/sdk.md: "a number is judged as a number, however large: never turned into text first";
    # the rule: "scope is a list of strings" (vector "a scope of numbers" refuses [1, 2]).
    with bitexact.run() as r:
        r.identity(principal="svc:a", scope=["read:claims", 2**60])
    identity, gap = entries(r.run_id)[1:3]
    assert identity["data"] == {"principal": "svc:a"}, "a scope holding a number is refused, not kept as text"
    assert list(gap["data"]["gap"]["fields"]) == ["scope"]


def test_identity_with_a_refused_negative_zero_is_declared_never_raised() -> None:
    # Non-strict: "a recording failure becomes a Gap ... what the agent sends, receives and raises never
    # changes". Before the fix the withheld digest's canonicalization of -0.0 raises CanonicalizationError at the agent.
    with bitexact.run() as r:
        r.identity(principal="svc:a", on_behalf_of=-0.0)
    kinds = [e["kind"] for e in entries(r.run_id)]
    assert kinds[:2] == ["run_meta", "identity"]
    assert entries(r.run_id)[1]["data"] == {"principal": "svc:a"}


# -- contexts ---------------------------------------------------------------------------


def test_a_context_holding_negative_zero_never_raises_at_the_agent() -> None:
    # Every other record (r.record, r.policy_check) declares such a value as an invalid_argument gap;
    # r.context raises CanonicalizationError out of context_data instead, in a non-strict run.
    with bitexact.run() as r:
        r.context("limits", {"delta": -0.0})
        r.marker("after")
    assert [e["kind"] for e in entries(r.run_id)][-2:] == ["marker", "run_end"]


def test_a_context_hash_never_lets_a_guess_at_a_scrubbed_or_hash_only_value_be_tested(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # capture-controls.md: "Any digest an attacker can recompute without a secret is no protection for these
    # values"; "Under a policy, a gap's digest of content it did not store is keyed with the capture key (or
    # dropped with no key) ... Neither lets a guess at unstored content be tested."
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    text = "Customer card 4111 1111 1111 1111 on file"
    pin = b"1234"
    with bitexact.run() as r:
        r.context("note", text)
        r.context_from_bytes("pin", pin, custody={"content.b64": "hash-only"})
    note, hashed = (e for e in entries(r.run_id) if e["kind"] == "context")
    assert "4111 1111 1111 1111" not in note["data"]["content"]["text"]  # the policy scrubbed the value
    assert note["data"]["content_hash"] != chain_hash(note["alg"], canonicalize({"text": text})), \
        "the stored content_hash is an unkeyed hash of the card number the policy scrubbed"
    assert hashed["capture"]["fields"]["content.b64"]["mode"] == "hash-only"
    guess = {"b64": base64.b64encode(pin).decode("ascii")}
    assert hashed["data"]["content_hash"] != chain_hash(hashed["alg"], canonicalize(guess)), \
        "the stored content_hash lets anyone test a guess at the hash-only PIN"


def test_a_context_given_a_mapping_records_the_mapping_not_its_repr() -> None:
    # docs/sdk.md: r.context records "content (text or a mapping)".
    with bitexact.run() as r:
        r.context("limits", MappingProxyType({"single_adjuster_eur": 5000}))
    context = entries(r.run_id)[1]
    assert context["data"]["content"] == {"single_adjuster_eur": 5000}


def test_a_context_whose_content_is_neither_text_nor_a_mapping_is_refused_naming_content() -> None:
    # records.context_data: "content must be text or a mapping" - refused for 42 or a list, but an arbitrary
    # object is accepted and recorded as {"repr": ...}.
    with bitexact.run() as r:
        with pytest.raises(SdkArgumentError) as caught:
            r.context("opaque", object())
    assert caught.value.field == "content"


# -- human decisions and policy checks ------------------------------------------------


def test_binds_step_refuses_a_handle_of_another_run() -> None:
    # binds_step "names the step under review (or its handle)": a handle of another run names a step of that
    # run; before the fix its step number is written into this run, binding an unrelated (or missing) step.
    with bitexact.run(name="proposer") as a:
        for i in range(4):
            a.marker(f"step {i}")
        proposal = a.record_tool_call("propose_payout", result=3490)
    with bitexact.run(name="reviewer") as b:
        with pytest.raises(SdkArgumentError) as caught:
            b.human_decision("adjuster:m.okafor", "approve", binds_step=proposal)
    assert caught.value.field == "binds_step"
    assert [e["kind"] for e in entries(b.run_id)] == ["run_meta", "run_end"]


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ is broken")


def test_a_check_that_raised_reraises_its_own_exception_even_when_its_message_cannot_be_read() -> None:
    # docs/sdk.md: r.check "records what it returned (or `error` if it raised, re-raising)"; non-strict
    # "what the agent ... raises never changes". Before the fix policy_check_data's str(outcome) raises first.
    def limit() -> str:
        raise _Unprintable()

    with bitexact.run() as r:
        with pytest.raises(_Unprintable):
            r.check("payout-limit", limit)
    checks = [e["data"]["policy_check"] for e in entries(r.run_id) if "policy_check" in e["data"]]
    assert [c["outcome"] for c in checks] == ["error"]


# -- nondeterminism ----------------------------------------------------------------


def test_capture_nondeterminism_does_not_change_what_a_datetime_serializes_to() -> None:
    # capture-controls.md: BitExact "never changes what an agent sends or receives"; docs/sdk.md: "the agent
    # gets the real value". Inside a capturing run datetime.datetime(...) builds a RecordingDatetime, which
    # orjson (a dependency of bitexact itself) refuses to serialize.
    outside = orjson.dumps(datetime.datetime(2026, 1, 1))
    with bitexact.run(capture_nondeterminism=True):
        try:
            inside = orjson.dumps(datetime.datetime(2026, 1, 1))
        except TypeError as exc:  # orjson.JSONEncodeError
            inside = repr(exc).encode()
    assert inside == outside


def test_a_datetime_subclass_defined_in_a_capturing_run_keeps_its_own_now_and_isinstance() -> None:
    plain = datetime.datetime(2020, 1, 1)
    with bitexact.run(capture_nondeterminism=True):
        class Stamp(datetime.datetime):
            pass

        now = Stamp.now()
        accepts_plain = isinstance(plain, Stamp)
    assert type(now) is Stamp, "Stamp.now() returns a plain datetime inside the run"
    assert accepts_plain is False, "isinstance(any datetime, Stamp) is True inside the run"


# -- causal context ------------------------------------------------------------------


def test_a_valid_parent_context_at_the_logical_limit_leaves_a_clock_that_still_hands_on_contexts() -> None:
    # protocol-vectors contexts: 9007199254740991 is a valid logical part. The run observes it and its clock
    # passes 2^53 - 1 (run_meta.causal.hlc, the marker's hlc as text); r.causal_context() then raises
    # ContextFormatError in a non-strict run, after writing a marker for a context it never handed on.
    parent = "bxc.parent.4503599627370496.9007199254740991"
    with bitexact.run(parent_context=parent) as r:
        handed = r.causal_context()
    context = parse_context(handed)
    assert context.hlc > parse_context(parent).hlc
    meta = entries(r.run_id)[0]["data"]
    assert all(isinstance(v, int) and 0 <= v <= MAX_CLOCK for v in meta["causal"]["hlc"])
    marker = next(e["data"] for e in entries(r.run_id) if "causal" in e["data"] and e["kind"] == "marker")
    assert marker["causal"] == {"id": context.id, "hlc": list(context.hlc)}


# -- keys written as text ------------------------------------------------------------------


def test_two_keys_that_are_one_key_as_text_are_a_declared_gap_never_one_value_silently_lost() -> None:
    with bitexact.run() as r:
        handle = r.context("n", {"1": "a", 1: "b"})
        r.record("marker", {"note": "m", "detail": {"1": "a", 1: "b"}})
        r.identity(principal="svc:a", extra={"1": "a", 1: "b"})
    assert handle.get("step") is None
    written = entries(r.run_id)
    # The identity keeps its principal; only the field that cannot be written is refused, by name.
    assert [e["kind"] for e in written[1:-1]] == ["marker", "marker", "identity", "marker"]
    gaps = [e["data"]["gap"] for e in written[1:-1] if e["kind"] == "marker"]
    assert all(g["cause"] == "invalid_argument" for g in gaps) and "extra" in gaps[-1]["fields"]
    assert written[3]["data"]["principal"] == "svc:a" and "extra" not in written[3]["data"]


def test_a_custody_hint_names_a_key_holding_a_lone_surrogate_as_the_entry_writes_it() -> None:
    with bitexact.run() as r:
        r.record("tool_call", {"tool": "t", "x\udc00": "pin 9412"}, custody={"x\udc00": "hash-only"})
    (call,) = [e for e in entries(r.run_id) if e["kind"] == "tool_call"]
    # "pin 9412", not "9412": the entry's hex hashes and salts hold any four digits now and then.
    assert "pin 9412" not in orjson.dumps(call, option=orjson.OPT_NON_STR_KEYS).decode("utf-8", "replace")
    assert call["capture"]["fields"]["x\\udc00"]["mode"] == "hash-only"
