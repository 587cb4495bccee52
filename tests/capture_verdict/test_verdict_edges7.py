"""Capture verdict, opening, backfill and dual-control edges (the seventh review): each test is a bug it found.

Every test here fails on the code as reviewed and passes once the bug it names is fixed.
"""

from __future__ import annotations

from pathlib import Path

from store.pausing import cli_env, pause_at, resume_while_locked

from bitexact.crypto import SigningKey
from bitexact.recording.audit import pending_claims, record_claim
from bitexact.recording.requests import approve_request, file_request, list_requests
from bitexact.store import Store
from capture_verdict.support import IBAN, VISA, recorder, verify_stored


def _off_run(store: Store, recorder_key: SigningKey) -> str:
    """A sealed run recorded with the policy off: step 1 holds a card number and an IBAN."""
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"], "kwargs": {"iban": IBAN, "amount": 3}})
    writer.seal()
    return writer.run_id


def test_an_approval_whose_claim_landed_but_whose_removal_did_not_is_finished_by_the_next_approve(
    store: Store, recorder_key: SigningKey
) -> None:
    """A crash after an approval's claim and before the removal left the request approved and its values
    stored: the next `redaction approve` said "no pending redaction request" and never removed them."""
    run_id = _off_run(store, recorder_key)
    request = file_request(store, run_id, ["1:args", "1:kwargs.iban"], by="alice", reason="r")
    writer = recorder(store, recorder_key, "default").attach(run_id)
    # What approve_request writes before it removes anything; the process then dies.
    store.add_custody(run_id, {"event": "redaction-approve", "request": request.request_id, "by": "bob", "at": "t"})
    record_claim(writer, list(request.fields), by="bob", reason=request.reason, requested_by="alice")
    assert pending_claims(store, run_id)

    approval = approve_request(recorder(store, recorder_key, "default").attach(run_id), by="erin")
    assert approval.completed and approval.redacted == ("1:args", "1:kwargs.iban") and approval.already == ()
    assert not pending_claims(store, run_id)
    assert set(store.entry(run_id, 1)["redacted"]) == {"args", "kwargs.iban"}
    # The claim was not written twice.
    assert sum(e["kind"] == "redaction" for e in store.entries(run_id)) == 1
    assert [r.status for r in list_requests(store, run_id)] == ["approved"]


def test_an_approval_whose_removal_found_the_store_locked_says_the_claim_landed_and_how_to_finish(
    home: Path, store: Store, recorder_key: SigningKey
) -> None:
    """`redaction approve` records the approval and the claim, then removes the values. When another process
    kept the store locked past BITEXACT_LOCK_TIMEOUT before the removal, it printed the store's "... so nothing
    was written", though the approval and the claim are on the run, and never said what finishes it."""
    run_id = _off_run(store, recorder_key)
    file_request(store, run_id, ["1:args", "1:kwargs.iban"], by="alice", reason="r")
    env = {**cli_env(home), "BITEXACT_LOCK_TIMEOUT": "0.5"}
    proc = pause_at(home, "bitexact.recording.requests:record_claim", "after",
                    ["redaction", "approve", run_id, "--by", "bob"], env=env)
    said = resume_while_locked(home, proc)
    assert proc.returncode == 1 and "Traceback" not in said, said
    assert "nothing was written" not in said, said
    assert f"redaction approve {run_id}" in said, said
    # ... and that is what finishes it.
    approval = approve_request(recorder(store, recorder_key, "default").attach(run_id), by="erin")
    assert approval.completed and set(store.entry(run_id, 1)["redacted"]) == {"args", "kwargs.iban"}


def test_a_card_number_scrubbed_from_the_key_of_a_hash_only_field_is_counted_in_the_verdict(
    store: Store, recorder_key: SigningKey
) -> None:
    """docs/capture.md: a hash-only field whose key held a card number "declares that scrub too: its hash-only
    declaration carries `found`, as a scrub's does, so the verdict counts it". The clause never read `found`
    on a hash-only declaration: the card number the recorder removed from the key was counted nowhere."""
    writer = recorder(store, recorder_key, "default").start()
    writer.append("tool_call", {"tool": "kyc", "result": {VISA: "holder"}}, hints={f"result.{VISA}": "hash-only"})
    writer.seal()
    [declaration] = store.entry(writer.run_id, 1)["capture"]["fields"].values()
    assert declaration["mode"] == "hash-only" and declaration["found"] == {"pan": 1}
    verdict = verify_stored(store, recorder_key, writer.run_id)
    assert verdict.ok, verdict.line
    assert verdict.line.endswith(
        ", 1 field scrubbed before capture (pan 1), 1 field hash-only (never held; 1 can never be opened)"
    ), verdict.line
