"""`bitexact capture backfill` and `bitexact redaction approve|reject|status`, with every exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.store import Store
from capture_verdict.support import CONTRACT_POLICY, IBAN, VISA, policy_file, recorder


@pytest.fixture
def policy_env(tmp_path: Path) -> dict[str, str]:
    return {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, CONTRACT_POLICY))}


@pytest.fixture
def off_run(store: Store, recorder_key: SigningKey) -> str:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("identity", {"principal": "svc:claims", "on_behalf_of": "user:7f3a9c"})
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"], "kwargs": {"iban": IBAN}})
    writer.seal()
    return writer.run_id


def test_backfill_files_one_request_and_approval_by_another_redacts(
    bx: Any, off_run: str, policy_env: dict[str, str], store: Store
) -> None:
    filed = bx("capture", "backfill", "--run", off_run, "--by", "alice", "--json", env=policy_env)
    assert filed.exit_code == 0, filed.stderr
    answer = json.loads(filed.stdout)
    assert [f["field"] for f in answer["fields"]] == ["1:on_behalf_of", "2:args", "2:kwargs.iban"]
    assert store.entry(off_run, 2).get("redacted") is None  # nothing changes until the approval

    status = json.loads(bx("redaction", "status", off_run, "--json").stdout)
    assert status["pending"] == answer["request"]
    assert status["requests"][0]["requested_by"] == "alice"
    assert answer["policy"] in status["requests"][0]["reason"]
    shown = bx("redaction", "status", off_run)
    assert "pending" in shown.stdout and "2:kwargs.iban" in shown.stdout

    again = bx("capture", "backfill", "--run", off_run, "--by", "carol", env=policy_env)
    assert again.exit_code == 1 and "already has a pending redaction request" in again.stderr

    own = bx("redaction", "approve", off_run, "--by", "alice", env=policy_env)
    assert own.exit_code == 1 and "a different principal must decide it" in own.stderr

    approved = bx("redaction", "approve", off_run, "--by", "bob", env=policy_env)
    assert approved.exit_code == 0, approved.stderr
    assert "3 field(s) redacted" in approved.stdout
    claim = list(store.entries(off_run))[-1]["data"]
    assert (claim["by"], claim["requested_by"]) == ("bob", "alice")
    verdict = bx("verify", off_run)
    assert verdict.exit_code == 0 and "3 field(s) redacted" in verdict.stdout
    assert "no capture policy was in force" in verdict.stdout

    nothing = bx("capture", "backfill", "--run", off_run, "--by", "alice", env=policy_env)
    assert nothing.exit_code == 0 and "nothing to request" in nothing.stdout
    assert bx("redaction", "approve", off_run, "--by", "bob", env=policy_env).exit_code == 1  # nothing pending


def test_a_pending_request_refuses_a_backfill_even_with_nothing_to_request(
    bx: Any, store: Store, recorder_key: SigningKey, policy_env: dict[str, str]
) -> None:
    from bitexact.recording.requests import file_request

    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "lookup", "args": ["HX-20931"]})
    file_request(store, writer.run_id, ["1:args"], by="dave", reason="filed in the viewer")
    refused = bx("capture", "backfill", "--run", writer.run_id, "--by", "alice", env=policy_env)
    assert refused.exit_code == 1 and "already has a pending redaction request" in refused.stderr


def test_reject_changes_nothing(bx: Any, off_run: str, policy_env: dict[str, str], store: Store) -> None:
    assert bx("capture", "backfill", "--run", off_run, "--by", "alice", env=policy_env).exit_code == 0
    before = list(store.entries(off_run))
    assert bx("redaction", "reject", off_run, "--by", "bob").exit_code == 2  # --reason is required
    rejected = bx("redaction", "reject", off_run, "--by", "bob", "--reason", "needed for the dispute")
    assert rejected.exit_code == 0
    assert list(store.entries(off_run)) == before
    status = json.loads(bx("redaction", "status", off_run, "--json").stdout)
    assert status["pending"] is None and status["requests"][0]["status"] == "rejected"
    assert status["requests"][0]["decision_reason"] == "needed for the dispute"


def test_backfill_exits_1_with_the_policy_off(bx: Any, off_run: str) -> None:
    result = bx("capture", "backfill", "--run", off_run, "--by", "alice", env={"BITEXACT_CAPTURE_POLICY": "off"})
    assert result.exit_code == 1 and "nothing to backfill against" in result.stderr


def test_backfill_exits_1_for_a_run_that_does_not_exist(bx: Any, policy_env: dict[str, str], store: Store) -> None:
    """capture-controls.md: "Backfill exits 1 when the policy is off ..., when the run does not exist, ..."
    (show, export, repair and redact exit 2 for an unknown run id: the contract wins for backfill)."""
    result = bx("capture", "backfill", "--run", "run-nope", "--by", "alice", env=policy_env)
    assert result.exit_code == 1 and "no run 'run-nope'" in result.stderr


@pytest.mark.parametrize("value", ["1", "true", "maybe"])
def test_backfill_and_decisions_exit_1_under_dual_control(
    bx: Any, off_run: str, policy_env: dict[str, str], store: Store, value: str
) -> None:
    env = {**policy_env, "BITEXACT_REQUIRE_DUAL_CONTROL": value}
    result = bx("capture", "backfill", "--run", off_run, "--by", "alice", env=env)
    assert result.exit_code == 1
    assert "BITEXACT_REQUIRE_DUAL_CONTROL" in result.stderr
    assert store.custody(off_run) == []
    assert bx("redaction", "approve", off_run, "--by", "bob", env=env).exit_code == 1
    assert bx("redaction", "reject", off_run, "--by", "bob", "--reason", "x", env=env).exit_code == 1
    assert bx("redaction", "status", off_run, env=env).exit_code == 0


def test_a_run_holding_nothing_the_policy_removes_exits_0(
    bx: Any, store: Store, recorder_key: SigningKey, policy_env: dict[str, str]
) -> None:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "lookup", "args": ["HX-20931"]})
    result = bx("capture", "backfill", "--run", writer.run_id, "--by", "alice", env=policy_env)
    assert result.exit_code == 0 and "nothing to request" in result.stdout
    assert store.custody(writer.run_id) == []


def test_redaction_commands_on_a_missing_run_exit_2(bx: Any, store: Store) -> None:
    """An unknown run id is input that is not valid: exit 2, as from show, export, repair and redact."""
    assert bx("redaction", "status", "run-nope").exit_code == 2
    assert bx("redaction", "approve", "run-nope", "--by", "bob").exit_code == 2
    assert bx("redaction", "reject", "run-nope", "--by", "bob", "--reason", "x").exit_code == 2
    assert bx("capture", "backfill", "--run", "r").exit_code == 2  # --by is required (usage)


def test_after_approval_no_byte_under_home_holds_the_destroyed_values(
    bx: Any, store: Store, recorder_key: SigningKey, policy_env: dict[str, str], home: Path
) -> None:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}"], "kwargs": {"iban": IBAN}})
    writer.seal()
    run_id = writer.run_id
    store.close()  # the commands below are other processes' worth of connections
    assert bx("capture", "backfill", "--run", run_id, "--by", "alice", env=policy_env).exit_code == 0
    assert bx("redaction", "approve", run_id, "--by", "bob", env=policy_env).exit_code == 0
    assert bx("verify", run_id).exit_code == 0
    for path in home.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            assert VISA.encode() not in raw and IBAN.encode() not in raw, path
