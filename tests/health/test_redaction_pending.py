"""`bitexact health` names a run holding a redaction claim whose values are still stored: redaction-pending.

A `bitexact redact` killed between its claim and the removal (a real
SIGKILL, in its own process) left a claim that `bitexact verify` fails and
`bitexact export` refuses, while health said "healthy". The check reads
only the runs the store counts a claim for, and of those only the last
entries back to the claim.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto.keystore import KeyStore
from bitexact.health import HealthContext
from bitexact.health.redaction import check_pending_redactions
from bitexact.recording import Recorder
from bitexact.recording.audit import apply_pending, record_claim
from bitexact.store import open_store
from bitexact.store.sqlite import SQLiteStore
from tests.cli.real_command import command_env, demo_run, run_bitexact

_KILLED_BETWEEN = """
import os, signal, sys
import bitexact.cli.audit as audit
audit.apply_pending = lambda *_: os.kill(os.getpid(), signal.SIGKILL)  # the claim has landed: die before removing
from bitexact.cli import main
sys.argv = ["bitexact", *sys.argv[1:]]
main()
"""


def _findings(home: Path) -> list[dict[str, Any]]:
    shown = run_bitexact(home, "health", "--json")
    report = json.loads(shown.stdout)
    return [f for f in report["findings"] if f["name"] == "redaction-pending"]


def test_a_redaction_killed_between_its_claim_and_the_removal_is_named_until_resumed(home: Path) -> None:
    run_id = demo_run(home)
    killed = subprocess.run([sys.executable, "-c", _KILLED_BETWEEN, "redact", run_id, "--field", "3:result.policy",
                             "--by", "dpo:a", "--reason", "erasure"], env=command_env(home), capture_output=True,
                            text=True, timeout=120, check=False)
    assert killed.returncode == -9, killed.stderr
    verdict = run_bitexact(home, "verify", run_id)
    assert "redaction of 3:result.policy recorded but not applied" in verdict.stdout
    shown = run_bitexact(home, "health", "--json")
    assert shown.returncode == 1, shown.stdout  # a warning
    [finding] = [f for f in json.loads(shown.stdout)["findings"] if f["name"] == "redaction-pending"]
    assert finding["level"] == "warn" and finding["run_id"] == run_id
    assert finding["details"] == {"fields": ["3:result.policy"], "claim_steps": [8]}  # after the demo's 8 steps
    assert "the redaction claim at step 8 is recorded but not applied" in finding["message"]
    assert f"`bitexact redact --resume {run_id}`" in finding["message"]
    assert run_bitexact(home, "redact", run_id, "--resume").returncode == 0
    assert _findings(home) == []


def test_claims_of_several_steps_are_one_finding_naming_every_field(home: Path) -> None:
    """Two claims left pending on one run (a claim, then a viewer's approved request): one finding per run."""
    run_id = demo_run(home)
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current()).attach(run_id)
        record_claim(writer, ["3:result.policy"], by="alice", reason="r")
        record_claim(writer, ["1:principal", "1:agent_id"], by="bob", reason="r")
    finally:
        store.close()
    [finding] = _findings(home)
    assert finding["details"] == {"fields": ["3:result.policy", "1:principal", "1:agent_id"], "claim_steps": [8, 9]}
    assert "the redaction claims at steps 8, 9 are recorded but not applied" in finding["message"]
    assert "the values of 3 claimed fields are still stored" in finding["message"]


STEPS = 1000
"""Steps of the redacted run: far more than the page the check reads back from the head."""


def test_the_check_reads_no_entry_of_a_run_never_redacted_and_only_the_tail_of_one_that_was(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It runs on every `bitexact health`: counted reads, not time."""
    store = open_store(home)
    key = KeyStore(home).current_or_init()
    quiet = []
    for _ in range(20):
        writer = Recorder(store, key).start(name="quiet")
        writer.append_batch([("tool_call", {"tool": "t", "args": [i]}, None) for i in range(50)])
        writer.seal()
        quiet.append(writer.run_id)
    long = Recorder(store, key).start(name="long")
    long.append_batch([("tool_call", {"tool": "t", "result": {"account": f"ACC-{i}"}}, None) for i in range(STEPS)])
    long.seal()
    record_claim(long, ["5:result.account"], by="alice", reason="r")
    apply_pending(store, long.run_id)  # applied: nothing to report, and still only the tail is read
    record_claim(long, ["7:result.account"], by="alice", reason="r")  # pending

    read: dict[str, int] = {}
    stream, entry = SQLiteStore._stream, SQLiteStore.entry

    def counted_stream(self: SQLiteStore, run_id: str, start: int, stop: int) -> Any:
        for found in stream(self, run_id, start, stop):
            read[run_id] = read.get(run_id, 0) + 1
            yield found

    def counted_entry(self: SQLiteStore, run_id: str, step: int) -> dict[str, Any]:
        read[run_id] = read.get(run_id, 0) + 1
        return entry(self, run_id, step)

    monkeypatch.setattr(SQLiteStore, "_stream", counted_stream)
    monkeypatch.setattr(SQLiteStore, "entry", counted_entry)
    try:
        [finding] = check_pending_redactions(HealthContext(env={}, store=store, home=home))
    finally:
        store.close()
    assert finding.run_id == long.run_id and finding.details["fields"] == ["7:result.account"]
    assert set(read) == {long.run_id}  # the quiet runs: not one entry
    assert read[long.run_id] <= 256 + 2  # one page back from the head, then each claimed entry
