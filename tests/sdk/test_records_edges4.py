"""SDK explicit records and their failure modes (the fourth review): each test is a bug it found, fixed."""

from __future__ import annotations

from typing import Any

import pytest

import bitexact
from bitexact.sdk import SdkArgumentError
from sdk.conftest import entries


def _gaps(run_id: str | None) -> list[dict[str, Any]]:
    return [e["data"]["gap"] for e in entries(run_id) if e["kind"] == "marker" and "gap" in e["data"]]


def _sdk_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [rec.getMessage() for rec in caplog.records
            if rec.name == "bitexact.sdk" and "recording gap" in rec.getMessage()]


# -- the identity rule --------------------------------------------------------------


def test_record_of_kind_identity_goes_through_the_identity_rule() -> None:
    # collector-protocol.md, Identity events: "An identity event's data is checked field by field by the one
    # identity rule every write door applies"; "workflow_digest is never accepted". r.record("identity", ...)
    # writes a number as the party, a type that is not one of the four and the caller's workflow_digest.
    with bitexact.run() as r:
        try:
            r.record("identity", {"principal": "svc:a", "on_behalf_of": 7, "on_behalf_of_type": "bogus",
                                  "workflow_digest": "00ff"})
        except SdkArgumentError:
            pass  # refusing the kind at this door would also keep the rule
    for identity in (e["data"] for e in entries(r.run_id) if e["kind"] == "identity"):
        assert identity.get("workflow_digest") != "00ff", "a caller's workflow_digest was written"
        assert identity.get("on_behalf_of") != 7, "a party that is a number was written"
        assert identity.get("on_behalf_of_type") != "bogus", "a party type outside the four was written"


def test_a_refused_field_that_cannot_be_digested_keeps_the_rest_of_the_identity() -> None:
    # The rule refuses on_behalf_of (not a string) whatever it holds; the rest is kept ("The recorder writes
    # the rest of the event, and beside it a gap marker", "fields names each refused field"). A refused value
    # canonical JSON cannot hold (-0.0) keeps the rest (docs/sdk.md); one whose keys collide as text loses the
    # valid principal too, and its gap names no refused field.
    with bitexact.run() as r:
        r.identity(principal="svc:a", on_behalf_of={"1": "a", 1: "b"})
    identities = [e["data"] for e in entries(r.run_id) if e["kind"] == "identity"]
    assert identities == [{"principal": "svc:a"}], "the kept principal was not written"
    (gap,) = _gaps(r.run_id)
    assert list(gap.get("fields") or {}) == ["on_behalf_of"]


def test_identity_returns_the_identity_entrys_handle_when_that_entry_became_a_gap() -> None:
    # Run.identity: "Returns the identity entry's handle, or the gap's when nothing was kept." Here principal
    # and ratio are kept, so the identity's handle is due. `handle or marker` takes an empty (gap) handle for
    # "nothing kept" (a RecordHandle is a Mapping: its truth is its length, which also waits for the write).
    with bitexact.run() as r:
        handle = r.identity(principal="svc:a", ratio=-0.0, on_behalf_of=7)
    assert handle.kind == "identity"
    assert handle.gap is not None and handle.gap.kind == "identity"


def test_an_identity_recorded_after_the_run_ended_is_one_gap_one_warning_naming_identity(
    sdk_warnings: pytest.LogCaptureFixture,
) -> None:
    # docs/sdk.md, Failure modes: "A recording failure becomes a Gap ... and logged as one warning line";
    # a record after the run's end is "a declared invalid_argument gap". One r.identity call after the end
    # declares two gaps (identity, then marker) and logs two lines; refused whole, its gap says "marker".
    with bitexact.run() as r:
        pass
    sdk_warnings.clear()
    partly = r.identity(principal="svc:a", on_behalf_of=7)
    assert len(r.failures.gaps) == 1, [(g.kind, g.detail) for g in r.failures.gaps]
    assert len(_sdk_warnings(sdk_warnings)) == 1
    assert partly.gap is not None and partly.gap.kind == "identity"
    whole = r.identity()
    assert whole.gap is not None and whole.gap.kind == "identity", "the gap names the marker, not the identity"


# -- explicit records: unusual inputs --------------------------------------------------


def test_record_with_an_unhashable_kind_is_refused_naming_kind() -> None:
    # sdk/errors.py: "Misuse ... (a kind the SDK may not write) is raised where it happens, naming the field";
    # `kind not in RECORDABLE` raises TypeError (unhashable type) instead.
    with bitexact.run() as r:
        with pytest.raises(SdkArgumentError) as caught:
            r.record(["tool_call"], {"tool": "t"})  # type: ignore[arg-type]
    assert caught.value.field == "kind"


def test_a_tool_call_error_whose_keys_are_one_key_as_text_is_never_silently_halved() -> None:
    # jsonable._collision: two keys that are one key once written as text - "Keeping only one would lose the
    # other's value without a word"; every other path declares an invalid_argument gap. error_data writes
    # {str(k): str(v)}, keeping "b" and dropping "a" with no gap.
    with bitexact.run() as r:
        r.record_tool_call("lookup", error={1: "timeout-a", "1": "timeout-b"})
    calls = [e["data"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    declared = [g for g in _gaps(r.run_id) if g.get("kind") == "tool_call"]
    kept_both = bool(calls) and all(v in str(calls[0].get("error")) for v in ("timeout-a", "timeout-b"))
    assert kept_both or declared, f"one error value lost without a gap: {calls}"


class _Unreadable:
    def __str__(self) -> str:
        raise RuntimeError("__str__ is broken")

    def __repr__(self) -> str:
        return "<unreadable>"


@pytest.mark.parametrize("error", [_Unreadable(), {"cause": _Unreadable()}], ids=["object", "mapping-value"])
def test_record_tool_call_with_an_error_that_cannot_be_read_never_raises_into_the_agent(error: Any) -> None:
    # Non-strict: "what the agent sends, receives and raises never changes"; a value that cannot be written is
    # a declared gap. An exception whose message cannot be read is already recorded with a placeholder
    # (docs/sdk.md); error_data's str(error) / str(v) raises RuntimeError at the agent instead.
    with bitexact.run() as r:
        r.record_tool_call("lookup", error=error)
        r.marker("after")
    written = entries(r.run_id)
    assert any(e["kind"] == "tool_call" for e in written) or any(g.get("kind") == "tool_call"
                                                                 for g in _gaps(r.run_id))


# -- policy checks ------------------------------------------------------------------


def test_a_policy_check_whose_detail_cannot_be_written_is_a_gap_never_raised() -> None:
    # Non-strict: never raises into the agent; data no converter can write (two keys one key as text) is a
    # declared invalid_argument gap, as for r.record. policy_check_data raises ValueError at the agent.
    with bitexact.run() as r:
        r.policy_check("payout-limit", "pass", detail={"1": "a", 1: "b"})
        r.marker("after")
    assert [g["cause"] for g in _gaps(r.run_id)] == ["invalid_argument"]


def test_check_returns_what_the_check_returned_even_when_it_cannot_be_recorded() -> None:
    # Run.check: "record what it returned, and return it"; non-strict never changes what the agent receives.
    # A check returning a mapping whose keys collide as text makes r.check raise ValueError, its result lost.
    said = {"1": "pass", 1: "fail"}
    with bitexact.run() as r:
        got = r.check("payout-limit", lambda: said)
    assert got is said
    assert [g["cause"] for g in _gaps(r.run_id)] == ["invalid_argument"]


# -- human decisions: binds_step ----------------------------------------------------------


def test_binds_record_of_a_withheld_entry_names_the_record_its_gap_declares() -> None:
    # docs/sdk.md: "A handle whose entry became a declared gap records binds_step: null and binds_record:
    # "<kind> #<seq>" (the record the gap names)". A custody that is not one withholds the entry with a gap
    # naming no seq, and its handle has seq 0: binds_record reads "tool_call #0", a record that never was
    # (record order starts at 1), the same for every withheld entry.
    with bitexact.run() as r:
        withheld = r.record("tool_call", {"tool": "kyc"}, custody={"result": "not-a-hint"})
        r.human_decision("adjuster:m.okafor", "approve", binds_step=withheld)
    (gap,) = _gaps(r.run_id)
    decision = next(e["data"] for e in entries(r.run_id) if e["kind"] == "human_decision")
    assert decision["binds_step"] is None
    assert decision["binds_record"] == f"{gap['kind']} #{gap.get('seq')}", (decision, gap)


def test_binds_step_past_the_largest_step_number_is_refused_not_written_as_text() -> None:
    # docs/sdk.md: "binds_step is a step number or a RecordHandle of this run"; records._binding refuses what
    # is not a step number, naming binds_step. 2**60 passes the check and is written as the text
    # "1152921504606846976" (jsonable's shape for big integers), so the entry's binds_step is no step number.
    with bitexact.run() as r:
        try:
            r.human_decision("adjuster:m.okafor", "approve", binds_step=2**60)
        except SdkArgumentError as exc:
            assert exc.field == "binds_step"
    for decision in (e["data"] for e in entries(r.run_id) if e["kind"] == "human_decision"):
        assert isinstance(decision["binds_step"], int), decision


def test_a_handle_waited_on_for_ever_waits_as_long_as_a_wait_can_and_never_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import math
    import sys
    import threading

    run_module = sys.modules["bitexact.sdk.run"]
    release = threading.Event()
    real = run_module.Run._queued_write

    def held(self: Any, items: list[Any]) -> Any:
        assert release.wait(60)
        return real(self, items)

    monkeypatch.setattr(run_module.Run, "_queued_write", held)
    outcome: list[Any] = []
    with bitexact.run(journal_small=True) as r:
        handle = r.marker("pending")  # journaled; its write held
        waiter = threading.Thread(target=lambda: outcome.append(_result_or_error(handle, math.inf)))
        waiter.start()
        release.set()
        waiter.join(60)
    assert outcome and outcome[0] == "marker", outcome  # was OverflowError: timeout value is too large


def _result_or_error(handle: Any, timeout: float) -> Any:
    try:
        return handle.result(timeout)["kind"]
    except Exception as exc:  # noqa: BLE001 - what the test reports
        return exc


def test_a_strict_run_records_that_it_journals_nothing_in_the_call() -> None:
    # Strict mode always writes in the call, whatever journal_small says: run_meta said journal_small true.
    with bitexact.run(strict=True, journal_small=True) as r:
        r.marker("written in the call")
    meta = entries(r.run_id)[0]["data"]
    assert meta["strict"] is True and meta["journal_small"] is False


def test_a_drain_timeout_past_any_wait_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from bitexact.config import SettingError, env_float

    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "1e10")  # past threading.TIMEOUT_MAX on some platforms
    with pytest.raises(SettingError, match="BITEXACT_DRAIN_TIMEOUT"):
        env_float("BITEXACT_DRAIN_TIMEOUT", 30.0)
