"""Run lifecycle of the Python SDK, its live lock and health's run-unsealed (the seventh review): each test is
a bug it found, fixed.

Every test here fails on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bitexact.health import HealthContext
from bitexact.health import recording as recording_health
from bitexact.sdk.stores import close_stores
from bitexact.store import open_store
from cli.real_command import killed_run

BITEXACT = str(Path(sys.executable).with_name("bitexact"))

def _bitexact(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BITEXACT, "--home", str(home), *args], capture_output=True, text=True, timeout=60,
                          check=False)


def _unsealed(home: Path) -> list[str | None]:
    close_stores()
    store = open_store(home)
    try:
        return [f.run_id for f in recording_health.check_unsealed_runs(HealthContext(env={}, store=store, home=home))]
    finally:
        store.close()


# -- 1. health: a repaired run redacted afterwards ----------------------------------------------------


def test_a_repaired_run_redacted_afterwards_is_not_named_run_unsealed_again(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run-unsealed read only the run's very last entry for the repair accepting its end: a redaction
    (an audit entry, which changes nothing of where the run's history ends) appended after the repair
    brought the finding back, telling the operator to repair a run already repaired."""
    monkeypatch.setattr(recording_health, "GRACE_SECONDS", 0.0)
    run_id = killed_run(home)
    assert _unsealed(home) == [run_id]
    repaired = _bitexact(home, "repair", run_id, "--by", "ops:alice", "--note", "agent host killed")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert _unsealed(home) == []
    redacted = _bitexact(home, "redact", run_id, "--field", "1:note", "--by", "dpo:bob", "--reason", "erasure")
    assert redacted.returncode == 0, redacted.stdout + redacted.stderr
    assert _unsealed(home) == [], "the repair accepting the run's end no longer counted after a redaction"


# -- 2. a run on a caller's write path whose store was opened by a relative path ---------------------


def test_a_run_on_a_relative_store_keeps_its_files_in_the_data_directory_when_the_agent_changes_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With recorder=, the run's data directory was the store's path as given: a relative one was read
    again at each use, so once the agent changed directory its journals (and the host key sealing them)
    went under the new working directory, where repair never looks, and its end left the live lock and
    the journal directory behind in the real one."""
    import bitexact
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder

    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    store = open_store(Path("data"))
    try:
        recorder = Recorder(store, KeyStore(Path("data")).current_or_init())
        with bitexact.run(recorder=recorder) as r:
            os.chdir(tmp_path / "elsewhere")  # a tool of the agent's works in another directory
            r.record("marker", {"note": "x" * ((1 << 20) + 1)})  # journaled before the call returns
        assert r.sealed
    finally:
        os.chdir(tmp_path)
        store.close()
    assert not (tmp_path / "elsewhere" / "data" / "journals").exists(), "journaled outside the data directory"
    assert not (tmp_path / "elsewhere" / "data.host.key").exists()
    assert not (tmp_path / "data" / "journals" / str(r.run_id)).exists(), "the live lock was left behind"


# -- 3. health: a run killed between its creation and its run_meta ------------------------------------


def test_run_unsealed_of_a_run_with_no_entry_names_no_step_minus_one(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run is made (its own commit) before its run_meta is appended: a recording killed in between
    leaves a run of no entries, which run-unsealed described as "its last entry, step -1, was written"."""
    monkeypatch.setattr(recording_health, "GRACE_SECONDS", 0.0)
    store = open_store(home)
    try:
        store.create_run("run-killed-before-its-meta", {})  # what Recorder.start does before run_meta
        [finding] = recording_health.check_unsealed_runs(HealthContext(env={}, store=store, home=home))
    finally:
        store.close()
    assert finding.run_id == "run-killed-before-its-meta"
    assert "step -1" not in finding.message
    assert "no entry" in finding.message


# -- 4. fork() after a run's exit, while the run still holds its live lock ---------------------------

_FORKS_AFTER_ITS_RUN = """
import os, sys, time, bitexact
scope = bitexact.run(home=sys.argv[1])
r = scope.__enter__()
r.marker("the store is free")
print(r.run_id, flush=True)
sys.stdin.readline()  # another process now holds the store's write lock (a hung writer)
r.record("marker", {"note": "x" * ((1 << 20) + 1)})  # journaled; the writer waits for the store
scope.__exit__(None, None, None)  # the drain times out; the writer still holds its batch, and the lock
ready, told = os.pipe()
pid = os.fork()  # a worker, forked once the run has ended
if pid == 0:
    os.write(told, b"x")  # fork() returned here: the fork hooks have run in this child
    time.sleep(60)
    os._exit(0)
os.read(ready, 1)  # the child's hooks ran (on a loaded host they could run after the agent was killed)
print(pid, flush=True)
sys.stdin.readline()
"""


def test_a_child_forked_after_the_runs_exit_does_not_keep_its_live_lock(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose exit gave up on its writer keeps its live lock until the writer's batch ends, but the
    fork hook closed the child's copy of the lock only for runs still open: a child forked meanwhile held
    the lock for its whole life, so once the agent was killed `bitexact repair` stayed refused (and health
    called the dead run live) for as long as the child lived."""
    from store.lock_holder import held_by_another_process

    from bitexact.recording.journal import journal_dir, take_live_lock

    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.5")
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "60")
    agent = subprocess.Popen([sys.executable, "-c", _FORKS_AFTER_ITS_RUN, str(home)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    child = 0
    try:
        assert agent.stdin is not None and agent.stdout is not None
        run_id = agent.stdout.readline().strip()
        assert run_id
        with held_by_another_process(home / "bitexact.db.lock"):
            agent.stdin.write("\n")
            agent.stdin.flush()
            child = int(agent.stdout.readline())
            os.kill(agent.pid, signal.SIGKILL)  # the agent dies; its forked worker lives on
            agent.wait(10)
            held = take_live_lock(journal_dir(home, run_id))
            assert held is not None, "the forked child keeps the dead run's live lock: repair is refused"
            os.close(held)
    finally:
        if agent.poll() is None:
            agent.kill()
        agent.wait(10)
        if child:
            os.kill(child, signal.SIGKILL)
