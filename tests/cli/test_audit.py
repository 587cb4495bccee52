"""`bitexact redact` (write-ahead, resumable) and `bitexact repair`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.recording.audit import record_claim
from bitexact.store import open_store
from tests.cli.conftest import Invoke, recorded_run


def _verify(bx: Invoke, target: str) -> tuple[int, str]:
    pub = json.loads(bx("keys", "show", "--json").output)[0]["public_key"]
    result = bx("verify", target, "--expect-key", pub, "--expect-recorder-key", pub, "--require-sealed")
    return result.exit_code, result.output.strip()


def test_store_redaction_lands_the_claim_first_and_verifies_recorder_attested(bx: Invoke, home: Path) -> None:
    run_id = recorded_run(bx)
    result = bx("redact", run_id, "--field", "1:principal", "--by", "alice", "--reason", "erasure request")
    assert result.exit_code == 0, result.output
    code, line = _verify(bx, run_id)
    assert code == 0, line
    assert "1 field(s) redacted" in line and "recorder-attested" in line
    shown = json.loads(bx("show", run_id, "--json").output)
    assert shown["steps"][8]["kind"] == "redaction"
    assert shown["steps"][8]["data"]["fields"] == ["1:principal"]
    assert "principal" not in shown["steps"][1]["data"]
    assert shown["steps"][1]["redacted"] == ["principal"]


def test_a_crash_between_claim_and_removal_is_reported_until_resumed(bx: Invoke, home: Path) -> None:
    run_id = recorded_run(bx)
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current()).attach(run_id)
        record_claim(writer, ["3:result.policy"], by="alice", reason="test")  # the removal never ran
    finally:
        store.close()
    code, line = _verify(bx, run_id)
    assert code == 1
    assert line == "FAIL: step 8: redaction of 3:result.policy recorded but not applied - the bundle's redaction claim is false"
    resumed = bx("redact", run_id, "--resume")
    assert resumed.exit_code == 0 and "1 pending redaction(s) applied" in resumed.output
    code, line = _verify(bx, run_id)
    assert code == 0, line


def test_a_redaction_run_again_before_the_first_was_applied_is_refused_not_claimed_twice(
        bx: Invoke, home: Path) -> None:
    """`redact` whose removal did not finish (a full disk), run again as it was: a second claim for the same
    values went on the chain, and the first was still left to resume."""
    run_id = recorded_run(bx)
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current()).attach(run_id)
        record_claim(writer, ["3:result.policy"], by="alice", reason="test")  # the removal never ran
        steps = store.run(run_id).steps
    finally:
        store.close()
    again = bx("redact", run_id, "--field", "3:result.policy", "--by", "alice", "--reason", "test")
    assert again.exit_code == 1
    assert f"run {run_id} has 1 redaction claim(s) not yet applied (3:result.policy)" in again.output
    assert f"bitexact redact --resume {run_id}" in again.output
    store = open_store(home)
    try:
        assert store.run(run_id).steps == steps  # no second claim
    finally:
        store.close()
    assert bx("redact", run_id, "--resume").exit_code == 0
    assert _verify(bx, run_id)[0] == 0


def test_audit_entries_and_unknown_paths_cannot_be_redacted(bx: Invoke) -> None:
    run_id = recorded_run(bx)
    bx("redact", run_id, "--field", "1:principal", "--by", "alice", "--reason", "r")
    audit = bx("redact", run_id, "--field", "8:by", "--by", "alice", "--reason", "r")
    assert audit.exit_code == 2
    assert "a redaction audit entry cannot be redacted" in audit.output
    unknown = bx("redact", run_id, "--field", "1:nope", "--by", "alice", "--reason", "r")
    assert unknown.exit_code == 2 and "no committed path 'nope'" in unknown.output
    no_reason = bx("redact", run_id, "--field", "1:agent_id", "--by", "alice")
    assert no_reason.exit_code == 2 and "--reason is required" in no_reason.output


def test_repair_records_acceptance_of_an_unsealed_history(bx: Invoke, home: Path) -> None:
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="crashed")
        writer.append("tool_call", {"tool": "t"})
        run_id = writer.run_id
    finally:
        store.close()
    result = bx("repair", run_id, "--by", "ops:alice", "--note", "host lost power")
    assert result.exit_code == 0, result.output
    shown = json.loads(bx("show", run_id, "--json").output)
    assert shown["steps"][-1]["kind"] == "repair"
    assert shown["steps"][-1]["data"]["by"] == "ops:alice"
    assert shown["sealed"] is False
    pub = json.loads(bx("keys", "show", "--json").output)[0]["public_key"]
    verdict = bx("verify", run_id, "--expect-recorder-key", pub)
    assert verdict.exit_code == 0, verdict.output
    assert "unsealed - end not attested" in verdict.output


def test_redact_refuses_under_dual_control_but_resume_still_completes(
    bx: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = recorded_run(bx)
    monkeypatch.setenv("BITEXACT_REQUIRE_DUAL_CONTROL", "1")
    result = bx("redact", run_id, "--field", "1:principal", "--by", "alice", "--reason", "r")
    assert result.exit_code == 1
    assert "BITEXACT_REQUIRE_DUAL_CONTROL is set" in result.output
    assert json.loads(bx("show", run_id, "--json").output)["steps"][1]["data"]["principal"]
    assert bx("redact", run_id, "--resume").exit_code == 0
