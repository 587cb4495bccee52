"""`bitexact health` names a run whose recording stopped before its seal, and a host key it cannot use.

The recordings are real SDK runs in child processes, killed with SIGKILL or
left running; the CLI is the real `bitexact` command.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.health import HealthContext
from bitexact.health import recording as recording_health
from bitexact.health.recording import check_host_key, check_orphan_journals, check_unsealed_runs
from bitexact.recording.journal import LIVE_LOCK, journal_dir, take_live_lock
from bitexact.sdk.stores import close_stores
from bitexact.store import open_store

_CHILD = """
import sys, bitexact
with bitexact.run(name="child", home=sys.argv[1]) as r:
    r.marker("working")
    print(r.run_id, flush=True)
    sys.stdin.readline()   # holds the run open until the parent says (or kills it)
"""


@pytest.fixture
def no_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any idle run counts as idle: the tests need not wait the minute a live one is given."""
    monkeypatch.setattr(recording_health, "GRACE_SECONDS", 0.0)


@pytest.fixture
def recording(home: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A child process recording a run (one marker so far), and the run's id."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(home)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    run_id = child.stdout.readline().strip()
    assert run_id, "the child printed no run id"
    try:
        yield child, run_id
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(10)


def _health(home: Path) -> list[Any]:
    close_stores()
    store = open_store(home)
    try:
        ctx = HealthContext(env={}, store=store, home=home)
        return check_unsealed_runs(ctx)
    finally:
        store.close()


def test_a_killed_recording_with_no_journals_is_named(home: Path, no_grace: None,
                                                      recording: tuple[subprocess.Popen[str], str],
                                                      bx: Any) -> None:
    """Health said nothing of a run killed before it had a journal: it stayed unsealed, unnoticed."""
    child, run_id = recording
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    [finding] = _health(home)
    assert (finding.level, finding.name, finding.run_id) == ("warn", "run-unsealed", run_id)
    assert finding.details["steps"] == 2  # run_meta and the marker
    assert f"bitexact repair {run_id} --by NAME --note TEXT" in finding.message
    # Nothing was journaled, so orphan-journals has nothing to say of it.
    assert check_orphan_journals(HealthContext(env={}, home=home)) == []

    result = bx("health", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert [(f["name"], f.get("run_id")) for f in report["findings"]] == [("run-unsealed", run_id)]

    assert (journal_dir(home, run_id) / LIVE_LOCK).exists()  # the killed process's lock file, held by no one
    repaired = bx("repair", run_id, "--by", "ops:alice", "--note", "agent host killed")
    assert repaired.exit_code == 0, repaired.output
    assert not journal_dir(home, run_id).exists()  # the repair leaves no empty journal directory behind
    assert _health(home) == []  # the operator accepted where the history ends


def test_a_live_recording_is_not_named_and_holds_its_lock_from_the_start(
        home: Path, no_grace: None, recording: tuple[subprocess.Popen[str], str], bx: Any) -> None:
    """A live run that has journaled nothing holds its live lock, so health and repair leave it alone."""
    child, run_id = recording
    directory = journal_dir(home, run_id)
    assert (directory / LIVE_LOCK).exists()
    assert take_live_lock(directory) is None  # what repair takes: held by the child
    assert _health(home) == []
    refused = bx("repair", run_id, "--by", "ops:alice", "--note", "too early")
    assert refused.exit_code == 1  # refused (the run is live), not input that cannot be used
    assert "still being recorded by a live process" in refused.output

    assert child.stdin is not None
    child.stdin.write("\n")
    child.stdin.flush()
    assert child.wait(30) == 0
    assert not directory.exists()  # the end removed its lock and the emptied directory with it
    assert _health(home) == []  # sealed


class _SealsAfterListing:
    """The real store, but the recording seals and ends right after health lists the runs (and before
    it looks at their locks): the order a run idle past the grace period and sealed at that moment gives."""

    def __init__(self, store: Any, child: subprocess.Popen[str]) -> None:
        self._store, self._child = store, child

    def runs(self) -> list[Any]:
        listed = self._store.runs()
        assert self._child.stdin is not None
        self._child.stdin.write("\n")
        self._child.stdin.flush()
        assert self._child.wait(30) == 0
        return listed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_a_run_sealed_after_the_listing_is_not_named(home: Path, no_grace: None,
                                                     recording: tuple[subprocess.Popen[str], str]) -> None:
    """Health listed a live run as unsealed, the recording then sealed and gave its lock back, and health
    named the sealed run: what it reports is read again once no process holds the lock."""
    child, run_id = recording
    close_stores()
    store = open_store(home)
    try:
        sealing = _SealsAfterListing(store, child)
        assert check_unsealed_runs(HealthContext(env={}, store=sealing, home=home)) == []  # type: ignore[arg-type]
        assert store.run(run_id).sealed  # the seal did land between the listing and the check
    finally:
        store.close()


def test_sealed_runs_and_runs_ended_in_process_are_not_named(home: Path, no_grace: None) -> None:
    with bitexact.run(name="done", home=home) as r:
        r.marker("fine")
    with bitexact.run(name="small journals", home=home, journal_small=True) as j:
        j.marker("journaled, then written")
    assert j.sealed and r.sealed
    assert not (home / "journals" / r.run_id).exists()
    assert not (home / "journals" / j.run_id).exists()
    assert _health(home) == []


def test_a_host_key_others_can_read_is_named(home: Path, tmp_path: Path) -> None:
    """A host key others could read left every journal path failing, and health said nothing."""
    ctx = HealthContext(env={}, home=home)
    assert check_host_key(ctx) == []  # none yet: made on first use
    with bitexact.run(name="large", home=home) as r:
        r.record("marker", {"note": "x" * (1 << 20 + 1)})  # a journaled entry makes the host key
    key = home.parent / (home.name + ".host.key")
    assert key.exists()
    assert check_host_key(ctx) == []
    key.chmod(0o644)
    [finding] = check_host_key(ctx)
    assert (finding.level, finding.name) == ("warn", "host-key-unusable")
    assert finding.details["path"] == str(key)
    assert finding.message.startswith(f"host key {key}: permissions 0644 let others read or write it")
    assert "SDK runs journal nothing" in finding.message


def test_a_capture_key_file_inside_the_data_directory_is_critical(home: Path, tmp_path: Path, bx: Any) -> None:
    """A capture key kept inside the data directory (which keygen refuses to write) went unreported:
    every copy of the store carried the key that keeps its hash-only fields from being guessed."""
    outside = tmp_path / "capture.key"
    assert bx("capture", "keygen", "-o", str(outside)).exit_code == 0
    home.mkdir(parents=True, exist_ok=True)
    inside = home / "capture.key"
    inside.write_bytes(outside.read_bytes())
    inside.chmod(0o600)
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"hash_only_key": {"file": str(inside)},
                                  "retired_keys": [{"file": str(outside)}]}), encoding="utf-8")
    env = {"BITEXACT_CAPTURE_POLICY": str(policy)}
    [finding] = recording_health_key_check(env, home)
    assert (finding.level, finding.name, finding.details["path"]) == (
        "critical", "capture-key-in-data-directory", str(inside))
    assert f"the capture key file {inside} is inside the data directory {home}" in finding.message
    assert recording_health_key_check({"BITEXACT_CAPTURE_KEY": str(outside)}, home) == []

    result = bx("health", "--json", env={"BITEXACT_CAPTURE_KEY": str(inside)})
    assert result.exit_code == 2, result.output
    assert "capture-key-in-data-directory" in [f["name"] for f in json.loads(result.output)["findings"]]


def recording_health_key_check(env: dict[str, str], home: Path) -> list[Any]:
    from bitexact.health.capture import check_key_in_data_directory

    return check_key_in_data_directory(HealthContext(env=env, home=home))


def test_a_failures_record_line_with_an_unhashable_cause_is_skipped_not_a_failed_check(home: Path) -> None:
    """A failures record line whose cause is a list (a hand-damaged file) made recording-gaps raise
    TypeError (unhashable), a critical health-check-failed, hiding the gaps the other lines declare."""
    from datetime import datetime, timezone

    from bitexact.health import run_health
    from bitexact.health.recording import check_recording_gaps

    now = datetime.now(timezone.utc).isoformat()
    (home / "failures").mkdir(parents=True)
    (home / "failures" / "run-1.jsonl").write_text(
        json.dumps({"cause": ["storage_unavailable"], "at": now}) + "\n"
        + json.dumps({"cause": "storage_unavailable", "at": now}) + "\n", encoding="utf-8")
    [finding] = check_recording_gaps(HealthContext(env={}, home=home))
    assert finding.details["causes"] == {"storage_unavailable": 1}
    report = run_health(HealthContext(env={}, home=home), checks=(check_recording_gaps,))
    assert [f.name for f in report.findings] == ["recording-gaps"]
