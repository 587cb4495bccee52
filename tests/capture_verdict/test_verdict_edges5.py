"""Capture verdict, opening, backfill and dual-control edges (the fifth review): each test is a bug it found, fixed.

Every test here fails on the code as reviewed and passes once the bug it names is fixed.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from bitexact.capture import load_policy, read_policy_file
from bitexact.capture.backfill import plan_backfill
from bitexact.crypto import SigningKey
from bitexact.recording.audit import record_claim
from bitexact.recording.requests import (
    SamePrincipalError,
    approve_request,
    file_request,
    list_requests,
)
from bitexact.store import Store
from capture_verdict.support import (
    IBAN,
    VISA,
    recorder,
)


# -- verify --open --json: "a test that cannot be made still prints the verdict, with "opening": null and
#    the "error"" (docs/capture-verify.md, Opening) -------------------------------------------------------


def test_open_json_on_a_run_that_does_not_verify_carries_the_error(
    bx: Any, contract: str, keyed_env: dict[str, str], store: Store, recorder_key: SigningKey, tmp_path: Path
) -> None:
    # A redaction claim recorded but not applied: the run no longer verifies, so no test can be made.
    policy = read_policy_file(keyed_env["BITEXACT_CAPTURE_POLICY"])
    record_claim(recorder(store, recorder_key, policy).attach(contract), ["1:tool"], by="dpo", reason="r")
    candidate = tmp_path / "c.json"
    candidate.write_text('"user:7f3a9c"\n', encoding="utf-8")
    result = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(candidate),
                "--by", "alice", "--json", env=keyed_env)
    assert result.exit_code == 1
    answer = json.loads(result.stdout)
    assert answer["ok"] is False and answer["opening"] is None
    # "the run does not verify" is one of the things that prevent a test: the JSON says why, as it does for
    # every other one (a field that is not hash-only, a key not held, ...).
    assert "error" in answer, sorted(answer)
    assert answer["error"], answer


def test_open_json_with_an_option_missing_still_prints_one_json_document(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path
) -> None:
    candidate = tmp_path / "c.json"
    candidate.write_text('"user:7f3a9c"\n', encoding="utf-8")
    # --by missing: "an option is missing" prevents the test, exit 1 ...
    result = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(candidate), "--json",
                env=keyed_env)
    assert result.exit_code == 1
    # ... and under --json the output is still the verdict as one JSON document, "opening": null and the error.
    answer = json.loads(result.stdout)  # today stdout is empty: JSONDecodeError
    assert answer["opening"] is None and "--by" in answer["error"]


# -- backfill: "A run recorded with the policy off, or under an earlier rule set, can hold what the policy in
#    force removes ... The request names ... every stored field the policy in force keeps hash-only" -------


def test_backfill_under_pci_names_base64_a_default_run_stored_unscanned(store: Store, recorder_key: SigningKey) -> None:
    raw = base64.b64encode(f"card {VISA}".encode()).decode()
    runs = {}
    for recorded_under in ("off", "default"):
        writer = recorder(store, recorder_key, recorded_under).start()
        writer.append("context", {"name": "doc", "content": {"b64": raw}})  # step 1
        writer.seal()
        runs[recorded_under] = writer.run_id
    # Under the default the bytes were kept as they came (declared unscanned); the card number is stored.
    default_entry = store.entry(runs["default"], 1)
    assert default_entry["data"]["content"]["b64"] == raw
    assert default_entry["capture"]["fields"]["content.b64"] == {"mode": "unscanned"}

    pci = load_policy("pci", env={})  # "*.b64 kept hash-only instead of unscanned"
    assert "1:content.b64" in plan_backfill(store, runs["off"], pci).tokens
    # The same stored bytes, recorded under an earlier rule set, are just as much a field pci keeps hash-only:
    # "unscanned" settled nothing (the value is stored whole), so the request must name it too.
    assert "1:content.b64" in plan_backfill(store, runs["default"], pci).tokens


# -- dual control: "Approval by a principal other than the requester (names compared trimmed and case-folded)"


def _off_run(store: Store, recorder_key: SigningKey) -> str:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"], "kwargs": {"iban": IBAN}})  # step 1
    writer.seal()
    return writer.run_id


def test_the_requester_cannot_approve_under_a_canonically_equivalent_spelling_of_their_name(
    store: Store, recorder_key: SigningKey
) -> None:
    run_id = _off_run(store, recorder_key)
    requester = unicodedata.normalize("NFC", "José")  # as one keyboard types it: U+00E9
    approver = unicodedata.normalize("NFD", "José")   # as another types it: e + U+0301, the same name
    assert requester != approver and requester.casefold() != approver.casefold()
    file_request(store, run_id, ["1:args"], by=requester, reason="backfill")
    writer = recorder(store, recorder_key, "default").attach(run_id)
    # The two strings are canonically equivalent: Unicode's caseless matching (and any terminal) treats them
    # as one name, so the requester approving their own request must be refused.
    with pytest.raises(SamePrincipalError):
        approve_request(writer, by=approver)
    [request] = list_requests(store, run_id)
    assert request.status == "pending"
    assert store.entry(run_id, 1).get("redacted") is None
