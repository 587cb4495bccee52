"""Edges of dual-control redaction requests, found in review: each test pins one behaviour that used to break."""

from __future__ import annotations

import pytest

from bitexact.crypto import SigningKey
from bitexact.errors import EvidenceError
from bitexact.recording.requests import REQUEST, approve_request, file_request, list_requests, reject_request
from bitexact.store import Store
from capture_verdict.support import IBAN, VISA, recorder


def _off_run(store: Store, recorder_key: SigningKey) -> str:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"], "kwargs": {"iban": IBAN}})  # step 1
    writer.seal()
    return writer.run_id


def _filed_unchecked(store: Store, run_id: str, fields: list[str], by: str) -> None:
    """A request as a store written before filing checked its fields holds it (nothing refuses it now)."""
    store.add_custody(run_id, {"event": REQUEST, "request": "0123456789abcdef", "fields": fields, "by": by,
                               "reason": "r", "source": "capture-backfill", "at": "2026-11-29T00:00:00+00:00"})


def test_a_request_naming_a_field_no_redaction_could_claim_is_refused_when_filed(
    store: Store, recorder_key: SigningKey
) -> None:
    run_id = _off_run(store, recorder_key)
    with pytest.raises(EvidenceError, match="no committed path 'no_such_field'"):
        file_request(store, run_id, ["1:args", "1:no_such_field"], by="alice", reason="r")
    with pytest.raises(EvidenceError, match="has no step 9"):
        file_request(store, run_id, ["9:args"], by="alice", reason="r")
    assert list_requests(store, run_id) == []


def test_an_approval_that_cannot_be_carried_out_is_not_recorded_as_approved(
    store: Store, recorder_key: SigningKey
) -> None:
    """It used to be recorded first, read as approved by bob with nothing claimed, and then block every later
    approval on the run while each one retried it."""
    run_id = _off_run(store, recorder_key)
    _filed_unchecked(store, run_id, ["1:args", "1:no_such_field"], by="alice")
    writer = recorder(store, recorder_key, "default").attach(run_id)
    with pytest.raises(EvidenceError):
        approve_request(writer, by="bob")
    assert store.entry(run_id, 1).get("redacted") is None
    assert not any(e["kind"] == "redaction" for e in store.entries(run_id))
    [request] = list_requests(store, run_id)
    assert request.status == "pending", (request.status, request.decided_by)
    reject_request(store, run_id, by="bob", reason="names a field the run does not have")
    file_request(store, run_id, ["1:args"], by="alice", reason="again")
    approval = approve_request(writer, by="carol")
    assert approval.redacted == ("1:args",)
    assert store.entry(run_id, 1)["redacted"] == ["args"]


def test_an_approval_whose_removal_fails_says_it_is_approved_and_what_finishes_it(
    store: Store, recorder_key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A removal failing with a full disk after the approval landed raised the store's own words ("database or
    disk is full"), as if nothing had been recorded; the approval is on the custody chain all the same."""
    from bitexact.errors import StoreError
    from bitexact.recording import requests as requests_module
    from bitexact.recording.requests import ApprovalUnfinishedError

    run_id = _off_run(store, recorder_key)
    file_request(store, run_id, ["1:args"], by="alice", reason="r")
    writer = recorder(store, recorder_key, "default").attach(run_id)

    def full_disk(store_: Store, run_id_: str) -> None:
        raise StoreError(f"{run_id_}: database or disk is full")

    monkeypatch.setattr(requests_module, "apply_pending", full_disk)
    with pytest.raises(ApprovalUnfinishedError, match=r"approved by bob, but its values are not all removed: .*"
                                                      r"disk is full.*redaction approve .* --by NAME` finishes it"):
        approve_request(writer, by="bob")
    [request] = list_requests(store, run_id)
    assert request.status == "approved"
    monkeypatch.undo()
    approval = approve_request(writer, by="bob")  # the next approve finishes it
    assert approval.completed and store.entry(run_id, 1)["redacted"] == ["args"]
