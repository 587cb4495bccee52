"""Backfill: one dual-control request for what the policy in force removes; nothing changes until approved."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from bitexact.capture.backfill import BackfillError, plan_backfill
from bitexact.crypto import SigningKey
from bitexact.recording.audit import record_claim
from bitexact.recording.requests import (
    NoPendingRequestError,
    RequestPendingError,
    SamePrincipalError,
    approve_request,
    dual_control_required,
    file_request,
    list_requests,
    pending_request,
    reject_request,
    unfinished_approval,
)
from bitexact.store import Store
from capture_verdict.support import (
    CONTRACT_POLICY,
    IBAN,
    VISA,
    policy_with,
    recorder,
    verify_stored,
    write_key,
)


def _off_run(store: Store, recorder_key: SigningKey) -> str:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("identity", {"principal": "svc:claims", "on_behalf_of": "user:7f3a9c"})            # 1
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"],                              # 2
                                "kwargs": {"iban": IBAN, "amount": 3490}, "result": {"ok": True}})
    writer.append("tool_call", {"tool": "lookup", "args": ["HX-20931"], "result": "fine"})           # 3
    writer.append("context", {"name": "doc", "content": {"b64": base64.b64encode(VISA.encode()).decode()}})  # 4
    writer.append("tool_call", {"tool": "auth", "kwargs": {"headers": {"Authorization": "Bearer abcdef12345678"}},
                                "aer_source": {"sent": VISA}})                                        # 5
    writer.append_own("marker", {"note": "gap", "gap": {"cause": "x", "seen": VISA}})                # 6
    writer.append("tool_call", {"tool": "keyed", "result": {VISA: 1, "fine": 2}})                     # 7
    writer.seal()
    return writer.run_id


def test_the_plan_names_what_the_policy_removes_and_skips_what_the_contract_skips(
    store: Store, recorder_key: SigningKey
) -> None:
    run_id = _off_run(store, recorder_key)
    plan = plan_backfill(store, run_id, policy_with(CONTRACT_POLICY))
    assert plan.tokens == ["1:on_behalf_of", "2:args", "2:kwargs.iban", "5:kwargs.headers", f"7:result.{VISA}"]
    why = {f.token: f.why for f in plan.fields}
    assert why["1:on_behalf_of"] == "hash-only"
    assert why["2:args"] == "scrub (pan 1)"
    assert why["5:kwargs.headers"] == "scrub (credentials 1)"
    assert why[f"7:result.{VISA}"] == (
        "scrub (pan 1); its key holds what a detector finds: the key itself stays in the commitments")
    assert policy_with(CONTRACT_POLICY).digest in plan.reason


def test_an_object_kept_hash_only_names_each_of_its_committed_paths(store: Store, recorder_key: SigningKey) -> None:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "kyc_lookup", "result": {"name": "Ann", "dob": "1990-01-01"}, "args": ["x"]})
    writer.append("tool_call", {"tool": "other", "result": {"name": "Bob"}})
    policy = policy_with({"fields": [
        {"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
        {"kind": "*", "path": "*", "mode": "scrub"}]})
    plan = plan_backfill(store, writer.run_id, policy)
    assert [(f.token, f.why) for f in plan.fields] == [("1:result.dob", "hash-only"), ("1:result.name", "hash-only")]


def test_a_run_recorded_under_the_policy_in_force_has_nothing_to_request(
    store: Store, recorder_key: SigningKey, tmp_path: Path
) -> None:
    doc = {**CONTRACT_POLICY, "hash_only_key": {"file": str(write_key(tmp_path / "k.key"))}}
    writer = recorder(store, recorder_key, policy_with(doc)).start()
    writer.append("identity", {"principal": "svc:claims", "on_behalf_of": "user:7f3a9c"})
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"], "kwargs": {"iban": IBAN}})
    writer.append("tool_call", {"tool": "kyc", "result": {"name": "x"}}, hints={"result": "hash-only"})
    writer.seal()
    assert plan_backfill(store, writer.run_id, policy_with(doc)).fields == ()


def test_a_stricter_policy_backfills_a_run_recorded_under_the_default(store: Store, recorder_key: SigningKey) -> None:
    writer = recorder(store, recorder_key, "default").start()
    writer.append("identity", {"principal": "svc:claims", "on_behalf_of": "user:7f3a9c"})
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"]})
    writer.seal()
    assert plan_backfill(store, writer.run_id, policy_with(CONTRACT_POLICY)).tokens == ["1:on_behalf_of"]


def test_the_policy_off_has_nothing_to_backfill_against(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    from bitexact.capture import load_policy

    with pytest.raises(BackfillError, match="policy is off"):
        plan_backfill(store, run_id, load_policy("off"))


def test_a_field_that_runs_out_of_time_is_named(store: Store, recorder_key: SigningKey) -> None:
    # budget_ms=1: one MiB of digits gets about a millisecond, and takes the detectors hundreds.
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "dump", "args": [("1234 " * 220_000)], "result": "short"})
    plan = plan_backfill(store, writer.run_id, policy_with({"budget_ms": 1}))
    # The batch that ran out withholds its fields and every later one, keys included.
    assert sorted(plan.tokens) == ["1:args", "1:result", "1:tool"]
    assert {f.why for f in plan.fields} == {"withheld"}


def test_redacted_and_claimed_fields_are_skipped(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    writer = recorder(store, recorder_key, "default").attach(run_id)
    record_claim(writer, ["2:args"], by="carol", reason="by hand")  # claimed, not yet applied
    plan = plan_backfill(store, run_id, policy_with(CONTRACT_POLICY))
    assert "2:args" not in plan.tokens and "2:kwargs.iban" in plan.tokens


def test_filing_changes_nothing_and_approval_redacts_with_requested_by(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    plan = plan_backfill(store, run_id, policy_with(CONTRACT_POLICY))
    before = list(store.entries(run_id))
    request = file_request(store, run_id, plan.tokens, by="alice", reason=plan.reason)
    assert list(store.entries(run_id)) == before
    assert pending_request(store, run_id) == request and request.status == "pending"

    writer = recorder(store, recorder_key, "default").attach(run_id)
    approval = approve_request(writer, by="bob")
    assert approval.redacted == tuple(plan.tokens) and approval.already == ()
    claim = list(store.entries(run_id))[-1]
    assert claim["kind"] == "redaction"
    assert claim["data"] == {"fields": plan.tokens, "by": "bob", "reason": plan.reason, "requested_by": "alice"}
    assert store.entry(run_id, 2)["redacted"] == ["args", "kwargs.iban"]
    assert VISA not in repr(store.entry(run_id, 2)["data"]) and IBAN not in repr(store.entry(run_id, 2)["data"])
    verdict = verify_stored(store, recorder_key, run_id)
    assert verdict.ok and f"{len(plan.tokens)} field(s) redacted" in verdict.line
    assert [r.status for r in list_requests(store, run_id)] == ["approved"]
    assert plan_backfill(store, run_id, policy_with(CONTRACT_POLICY)).fields == ()


def test_the_requester_cannot_approve_or_reject_their_own_request(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    file_request(store, run_id, ["2:args"], by="alice", reason="r")
    writer = recorder(store, recorder_key, "default").attach(run_id)
    for name in ("alice", " Alice ", "ALICE"):
        with pytest.raises(SamePrincipalError):
            approve_request(writer, by=name)
        with pytest.raises(SamePrincipalError):
            reject_request(store, run_id, by=name, reason="no")
    assert pending_request(store, run_id) is not None
    assert store.entry(run_id, 2).get("redacted") is None


def test_one_pending_request_at_a_time(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    file_request(store, run_id, ["2:args"], by="alice", reason="r")
    with pytest.raises(RequestPendingError):
        file_request(store, run_id, ["2:kwargs.iban"], by="carol", reason="r")
    assert len(list_requests(store, run_id)) == 1


def test_a_rejection_changes_nothing_and_frees_the_run(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    file_request(store, run_id, ["2:args"], by="alice", reason="r")
    before = list(store.entries(run_id))
    rejected = reject_request(store, run_id, by="bob", reason="needed for the dispute")
    assert (rejected.status, rejected.decided_by, rejected.decision_reason) == (
        "rejected", "bob", "needed for the dispute")
    assert list(store.entries(run_id)) == before
    with pytest.raises(NoPendingRequestError):
        approve_request(recorder(store, recorder_key, "default").attach(run_id), by="bob")
    file_request(store, run_id, ["2:args"], by="alice", reason="again")


def test_the_first_decision_stands(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    request = file_request(store, run_id, ["2:args"], by="alice", reason="r")
    # Two deciders race: bob's rejection is recorded before dave's approval is.
    store.add_custody(run_id, {"event": "redaction-reject", "request": request.request_id, "by": "bob",
                               "reason": "no", "at": "t"})
    store.add_custody(run_id, {"event": "redaction-approve", "request": request.request_id, "by": "dave", "at": "t"})
    [decided] = list_requests(store, run_id)
    assert (decided.status, decided.decided_by) == ("rejected", "bob")


def test_an_approval_cut_short_is_finished_by_the_next_call(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    request = file_request(store, run_id, ["2:args", "2:kwargs.iban"], by="alice", reason="r")
    # The approval record landed; the process died before the claim.
    store.add_custody(run_id, {"event": "redaction-approve", "request": request.request_id, "by": "bob", "at": "t"})
    assert unfinished_approval(store, run_id) is not None
    approval = approve_request(recorder(store, recorder_key, "default").attach(run_id), by="erin")
    assert approval.completed and approval.redacted == ("2:args", "2:kwargs.iban")
    claim = list(store.entries(run_id))[-1]["data"]
    assert (claim["by"], claim["requested_by"]) == ("bob", "alice")
    assert unfinished_approval(store, run_id) is None


def test_fields_redacted_meanwhile_are_left_as_they_are(store: Store, recorder_key: SigningKey) -> None:
    run_id = _off_run(store, recorder_key)
    file_request(store, run_id, ["2:args", "2:kwargs.iban"], by="alice", reason="r")
    writer = recorder(store, recorder_key, "default").attach(run_id)
    record_claim(writer, ["2:args"], by="carol", reason="by hand")
    approval = approve_request(writer, by="bob")
    assert approval.redacted == ("2:kwargs.iban",) and approval.already == ("2:args",)


@pytest.mark.parametrize(("value", "on"), [("", False), ("0", False), ("off", False), ("1", True), ("TRUE", True),
                                           ("yes", True), ("on", True)])
def test_dual_control_setting(value: str, on: bool) -> None:
    assert dual_control_required({"BITEXACT_REQUIRE_DUAL_CONTROL": value}) is on


def test_an_unreadable_dual_control_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="BITEXACT_REQUIRE_DUAL_CONTROL='maybe'"):
        dual_control_required({"BITEXACT_REQUIRE_DUAL_CONTROL": "maybe"})
