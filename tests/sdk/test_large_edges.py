"""Large entries, journals, slots, the ordered writer, the exit drain and repair: regression tests.

Each test states the contract it holds the SDK to (capture-controls.md, budget_ms; docs/sdk.md) and
what the code did before the fix of the bug it names.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.errors import StoreBusyError
from bitexact.recording.fold import fold_orphans
from bitexact.recording.journal import journal_dir
from bitexact.recording.writer import RunWriter
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries, journaled
from sdk.test_large import BIG, store_write_lock


# -- 1. A queued write that failed leaves a journal that a later identical entry "claims" -------


@pytest.mark.parametrize("size", ["large", "small-in-a-slot"])
def test_a_queued_entry_whose_write_failed_is_not_taken_for_a_later_identical_one(
    home: Path, monkeypatch: pytest.MonkeyPatch, size: str
) -> None:
    """The background writer's commit fails (another process holds the store past
    BITEXACT_LOCK_TIMEOUT): the entry is a declared gap and its journal is "kept for `bitexact
    repair`". The store frees up and the agent records the same thing again, which lands. Repair
    then takes the later entry for the orphan's (``already_written``), because the writer's failure
    path (``Run._queued_failed``) never marks the journal ``unwritten`` as the in-call failure path
    does: the entry whose call returned first is never written. No process died, so this is not
    the documented kill -9 limitation of two identical queued entries."""
    from store.lock_holder import held_by_another_process

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    data: dict[str, Any] = ({"tool": "read_file", "result": BIG} if size == "large"
                            else {"tool": "heartbeat", "result": "ok"})
    with bitexact.run(journal_small=size != "large") as r:
        with held_by_another_process(home / "bitexact.db.lock"):
            first = r.record("tool_call", data)  # journaled in the call, written (and failing) after it
            assert first.result(30) == {}
        second = r.record("tool_call", data)
        assert second.result(30)["step"] > 0
    assert first.gap is not None and first.gap.journal is not None
    recorder, _ = recorder_for()
    fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    calls = [e for e in entries(r.run_id) if e["kind"] == "tool_call"]
    repair = entries(r.run_id)[-1]["data"]
    assert len(calls) == 2, f"two calls returned, {len(calls)} entry in the chain; repair said {repair}"


# -- 2. A fold cut short writes an `unwritten` orphan again on the next attempt -----------------


def test_a_fold_cut_short_never_writes_an_unwritten_orphan_twice(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: "A store error (the store locked, the disk) stops the fold instead and keeps
    every journal for the next attempt", and "a fold cut short folds again without writing an
    entry twice". An orphan the SDK journaled after its append raised is marked ``unwritten`` and
    fold_orphans never looks for it in the chain (``claimed = None if o.record.unwritten``), so once
    a fold has written it and stopped before removing its journal, the next fold writes it again."""
    from store.lock_holder import held_by_another_process

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run() as r:
        with held_by_another_process(home / "bitexact.db.lock"):
            first = r.marker("first")  # the store stays locked: journaled `unwritten`, a declared gap
            second = r.marker("second")
    assert first.gap is not None and second.gap is not None and not r.sealed
    assert len(journaled(home, r.run_id)) == 2

    real_append = RunWriter.append
    calls = {"n": 0}

    def append(self: RunWriter, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # another process takes the store between the fold's two appends
            raise StoreBusyError("the store stayed locked by another process")
        return real_append(self, *args, **kwargs)

    recorder, _ = recorder_for()
    monkeypatch.setattr(RunWriter, "append", append)
    with pytest.raises(StoreBusyError):
        fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    monkeypatch.setattr(RunWriter, "append", real_append)
    # The journal not yet written stays; the one written is kept renamed, naming the step it landed at.
    assert len(journaled(home, r.run_id)) == 1, "a fold the store stopped keeps the journal it did not write"
    marks = [p.name for p in journal_dir(home, r.run_id).iterdir() if ".folded-" in p.name]
    assert len(marks) == 1
    fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    assert not journal_dir(home, r.run_id).exists() or not any(journal_dir(home, r.run_id).iterdir())
    (repair,) = [e for e in entries(r.run_id) if e["kind"] == "repair"]
    assert list(repair["data"]["already_written"]) == [marks[0].split(".folded-")[0]]
    notes = [e["data"]["note"] for e in entries(r.run_id) if e["kind"] == "marker" and "gap" not in e["data"]]
    assert notes == ["first", "second"], f"each returned call once, in record order; the chain holds {notes}"


# -- 3. A gap declared in the call jumps ahead of entries recorded before it -------------------


@pytest.mark.parametrize("how", ["bad custody", "unserializable"])
def test_a_gap_declared_in_the_call_keeps_its_place_in_record_order(
    home: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """docs/sdk.md: while anything is queued, every later entry queues behind it, "so the chain's
    order is always the record order"; test_slots holds a gap "declared where the entry would be".
    A record the SDK withholds in the call (a custody that is not one, data no converter can write)
    declares its gap marker straight into the chain (``FailureLog.declare(gap, self.writer)``),
    past the large entry the agent recorded before it that is still being scanned and written."""
    with bitexact.run() as r:
        assert r.writer is not None
        gate = threading.Event()
        real = r.writer.append_each

        def slow_scan(items: Any, **options: Any) -> Any:  # the background writer's scan of a large entry takes a while
            assert gate.wait(30)
            return real(items, **options)

        monkeypatch.setattr(r.writer, "append_each", slow_scan)
        big = r.record("tool_call", {"tool": "scan", "result": BIG})
        if how == "bad custody":
            bad = r.record("tool_call", {"tool": "kyc", "result": "r"}, custody={"result": "not a custody"})
        else:
            bad = r.record("tool_call", {"tool": "kyc", "result": {1: "a", "1": "b"}})
        assert bad.gap is not None and bad.gap.cause == "invalid_argument"
        gate.set()
        assert r.drain(30) and big.written
    kinds = [(e["kind"], "gap" in e.get("data", {})) for e in entries(r.run_id)]
    assert kinds == [("run_meta", False), ("tool_call", False), ("marker", True), ("run_end", False)], (
        f"the gap of the second record landed before the first record: {kinds}")


# -- 4. Calls waiting for queue room wait for each other too -------------------------------------


def test_each_call_waits_for_queue_room_at_most_the_drain_timeout_however_many_threads_wait(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: past BITEXACT_QUEUE_MAX_BYTES "a recording call waits for the writer to make
    room, at most BITEXACT_DRAIN_TIMEOUT, then queues anyway". ``Run._submit`` waits for room while
    holding the run's record-order lock, so a second thread's call first waits out the first
    thread's whole wait, then its own: with N agent threads the last call blocks N times the bound."""
    monkeypatch.setenv("BITEXACT_QUEUE_MAX_BYTES", str(3 << 19))  # 1.5 MiB: room for one large entry
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.5")
    took: dict[int, float] = {}

    def agent(n: int) -> None:
        start = time.monotonic()
        r.record("tool_call", {"tool": "scan", "result": BIG, "n": n})
        took[n] = time.monotonic() - start

    with bitexact.run() as r:
        with store_write_lock(home):
            r.record("tool_call", {"tool": "scan", "result": BIG, "n": 0})  # in flight, held by the lock
            threads = [threading.Thread(target=agent, args=(n,)) for n in (1, 2, 3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        assert r.drain(30)
    assert sorted(took) == [1, 2, 3]
    assert max(took.values()) < 0.5 + 0.35, f"calls took {sorted(round(t, 2) for t in took.values())} s"


# -- 5. A decision bound to an entry the background writer could not write raises ---------------


@pytest.mark.parametrize("record", ["human_decision", "policy_check"])
def test_binding_to_an_entry_that_became_a_gap_does_not_raise_into_the_agent(
    home: Path, monkeypatch: pytest.MonkeyPatch, record: str
) -> None:
    """A non-strict run "never changes what the agent sends, receives or raises": a recording
    failure is a declared gap. A large entry's background write fails (the store stays locked
    past BITEXACT_LOCK_TIMEOUT): its handle is a gap. The agent then records the reviewer's decision
    on it, ``binds_step=handle``, as docs/sdk.md shows; the SDK raises SdkArgumentError ("the entry it
    names was never written") into the agent, and the decision itself is not recorded at all."""
    from store.lock_holder import held_by_another_process

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run() as r:
        with held_by_another_process(home / "bitexact.db.lock"):
            handle = r.record("tool_call", {"tool": "scan", "result": BIG})
            assert handle.result(30) == {} and handle.gap is not None
        try:
            if record == "human_decision":
                r.human_decision("adjuster:m.okafor", "approve", binds_step=handle)
            else:
                r.policy_check("pii-review", "pass", binds_step=handle)
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"a non-strict run raised into the agent for a recording failure: {exc!r}")
    recorded = [e for e in entries(r.run_id)
                if e["kind"] == record or (record == "policy_check" and "policy_check" in e["data"])]
    assert len(recorded) == 1, "the decision was not recorded"
    binding = recorded[0]["data"].get("policy_check", recorded[0]["data"])
    assert binding["binds_step"] is None and binding["binds_record"] == f"tool_call #{handle.seq}"


# -- 6. The large slots a run starts making outlive it in a sealed run --------------------------

_SHORT_LIVED_AGENT = r"""
import time
import bitexact
import bitexact.recording.journal_slots as journal_slots

real = journal_slots.write_zeros

def slow_disk(*args):  # 8 MiB of zeros, synced, on a slow disk (network storage, a busy host)
    time.sleep(1.0)
    real(*args)

journal_slots.write_zeros = slow_disk
with bitexact.run(name="short-lived") as r:
    r.record("tool_call", {"tool": "scan", "result": "z" * ((1 << 20) + 10)})
print(r.run_id, r.sealed, flush=True)
"""


def test_a_short_lived_agent_leaves_nothing_in_the_journal_directory_of_its_sealed_run(home: Path) -> None:
    """docs/sdk.md: the run's first large entry "starts a thread that makes the run's large slots",
    and "a slots file is removed when its run ends with every entry in the chain". The thread is a
    daemon the run's exit never waits for: an agent process that ends right after its run (a CLI
    tool, a batch job) kills it mid zero-fill, leaving an 8 MiB ``.slots-*.tmp`` (or a whole, empty
    slots file) in the journal directory of a run that sealed with every entry in its chain."""
    import os
    import subprocess
    import sys

    from bitexact.recording.journal import journal_dir

    env = {**os.environ, "BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": "off"}
    env.pop("BITEXACT_HOST_KEY", None)
    done = subprocess.run([sys.executable, "-c", _SHORT_LIVED_AGENT], env=env, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run_id, sealed = done.stdout.split()
    assert sealed == "True"
    directory = journal_dir(home, run_id)
    left = sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []
    assert left == [], f"run {run_id} sealed with every entry in its chain, yet left {left}"


# -- 7. Repair writes an orphan under whatever policy the repairing shell has -------------------

_KYC_AGENT = r"""
import fcntl, os, sys, time
import bitexact
from bitexact import config

with bitexact.run(name="kyc") as r:
    fd = os.open(config.home() / "bitexact.db.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a slow writer: the entry stays in its journal
    r.record("tool_call", {"tool": "kyc_lookup", "result": sys.argv[1], "raw": "r" * ((1 << 20) + 10)})
    print(f"returned {r.run_id}", flush=True)
    time.sleep(600)
"""


def test_repair_never_writes_a_field_the_runs_own_policy_keeps_hash_only(home: Path, tmp_path: Path) -> None:
    """capture-controls.md: the policy "runs before anything is written ... so a value the policy
    removes never reaches a spool, the wire, a store"; docs/sdk.md says the fold compares a journal
    "as the run's capture policy makes it". The agent records under its deployment's policy (a
    hash-only rule for its KYC tool, as in the contract's example) and is killed with the large
    entry still in its journal. An operator runs `bitexact repair` from a shell without
    BITEXACT_CAPTURE_POLICY: before the fix, fold_orphans wrote the journaled entry through the
    repairing process's policy (the shipped default), and the KYC result landed in the chain in clear,
    in a run whose run_meta names the policy that keeps it hash-only. A fold is now refused under any
    other policy than the run's (named by digest in its run_meta), and folds under the run's own."""
    import json
    import os
    import signal
    import subprocess
    import sys

    from click.testing import CliRunner

    from bitexact.cli import cli

    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({
        "detectors": {"pan": {"keep_last4": True}, "iban": {}, "credentials": {}},
        "fields": [{"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
                   {"kind": "*", "path": "*", "mode": "scrub"}],
    }), encoding="utf-8")
    identity = "Jane Roe, passport 533380006, born 1961-04-02"
    env = {**os.environ, "BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": str(policy), "PYTHONUNBUFFERED": "1"}
    env.pop("BITEXACT_HOST_KEY", None)
    agent = subprocess.Popen([sys.executable, "-c", _KYC_AGENT, identity], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert agent.stdout is not None
        line = agent.stdout.readline().split()
        assert line[:1] == ["returned"], agent.stderr.read() if agent.stderr else ""
        run_id = line[1]
    finally:
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait(30)
    assert len(journaled(home, run_id)) == 1

    # Under another policy than the run's, the fold is refused before anything is written, naming both.
    refused = CliRunner().invoke(cli, ["repair", run_id, "--by", "ops:alice", "--note", "agent host killed"],
                                 env={"BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": None},
                                 catch_exceptions=False)
    assert refused.exit_code == 1 and "was recorded under capture policy" in refused.output  # refused, refused.output
    assert not [e for e in entries(run_id) if e["kind"] == "tool_call"] and len(journaled(home, run_id)) == 1
    # Under the run's own policy it folds, and the field is kept hash-only.
    result = CliRunner().invoke(cli, ["repair", run_id, "--by", "ops:alice", "--note", "agent host killed"],
                                env={"BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": str(policy)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    stored = [e for e in entries(run_id) if e["kind"] == "tool_call"]
    assert len(stored) == 1, "the entry whose call returned is folded"
    assert identity not in json.dumps(stored[0]), (
        "the run's own policy keeps the KYC result hash-only; repair stored it in clear: "
        f"{stored[0]['data']['result']!r}")
