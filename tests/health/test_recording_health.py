"""`bitexact health` names the journals a stopped recording left, until `bitexact repair` folds them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from store.lock_holder import held_by_another_process

from bitexact.crypto.hostkey import load_host_key
from bitexact.health import HealthContext, run_health
from bitexact.health import recording as recording_health
from bitexact.health.recording import GRACE_SECONDS, check_orphan_journals, check_store_lock
from bitexact.recording.journal import JournalRecord, journal_dir, write_journal
from bitexact.recording.journal_slots import JournalSlots
from bitexact.sdk.stores import close_stores, recorder_for
from bitexact.store import DB_NAME


def _age(path: Path, seconds: float = GRACE_SECONDS + 5) -> None:
    """Make a journal look as old as one whose process stopped a while ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def _stopped_recording(home: Path, *, files: int = 1, slots: int = 0) -> tuple[str, list[Path]]:
    """A run whose process journaled entries and stopped before writing them into the chain."""
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="stopped")
    key = load_host_key(home)
    made: list[Path] = []
    for seq in range(1, files + 1):
        record = JournalRecord(writer.run_id, seq, "tool_call", {"tool": "scan", "n": seq}, steps_before=1)
        made.append(write_journal(home, key, record))
    if slots:
        table = JournalSlots(home, key, writer.run_id, count=4, slot_bytes=16 * 1024)
        for seq in range(files + 1, files + 1 + slots):
            data = {"note": f"n{seq}"}
            table.write(JournalRecord(writer.run_id, seq, "marker", data, steps_before=1), json.dumps(data).encode())
        made.append(table.path)
    close_stores()
    return writer.run_id, made


def test_journals_of_a_stopped_recording_are_named_per_run(home: Path) -> None:
    run_id, made = _stopped_recording(home, files=2, slots=2)
    for path in made:
        _age(path)
    [finding] = check_orphan_journals(HealthContext(env={}, home=home))
    assert (finding.level, finding.name, finding.run_id) == ("warn", "orphan-journals", run_id)
    slots_name = made[-1].name
    assert finding.details["journals"] == [made[0].name, made[1].name, f"{slots_name}#0", f"{slots_name}#1"]
    assert finding.message.startswith("4 journals left by a recording that stopped")
    assert f"bitexact repair {run_id} --by NAME --note TEXT" in finding.message


def test_journals_a_live_recording_just_wrote_are_left_out(home: Path) -> None:
    _stopped_recording(home, files=1, slots=1)  # modified just now: a recording in progress
    assert check_orphan_journals(HealthContext(env={}, home=home)) == []


def test_a_slots_file_with_every_slot_free_is_not_reported(home: Path) -> None:
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="live")
    table = JournalSlots(home, load_host_key(home), writer.run_id, count=2, slot_bytes=16 * 1024)
    index = table.write(JournalRecord(writer.run_id, 1, "marker", {"note": "n"}), b'{"note": "n"}')
    assert index is not None
    table.release(index)  # its entry reached the chain
    _age(table.path)
    close_stores()
    assert check_orphan_journals(HealthContext(env={}, home=home)) == []


def test_a_directory_not_named_as_a_run_is_ignored(home: Path) -> None:
    (home / "journals" / "not a run").mkdir(parents=True)
    assert check_orphan_journals(HealthContext(env={}, home=home)) == []
    assert check_orphan_journals(HealthContext(env={}, home=None)) == []


def test_the_command_warns_until_repair_folds_the_journals(bx: Any, home: Path) -> None:
    run_id, made = _stopped_recording(home, files=1)
    _age(made[0])
    result = bx("health", "--json")
    assert result.exit_code == 1
    [finding] = [f for f in json.loads(result.stdout)["findings"] if f["name"] == "orphan-journals"]
    assert finding["run_id"] == run_id and finding["details"]["journals"] == [made[0].name]
    table = bx("health")
    assert "orphan-journals" in table.stdout and run_id in table.stdout

    repaired = bx("repair", run_id, "--by", "ops", "--note", "the agent host was rebooted")
    assert repaired.exit_code == 0, repaired.stdout + repaired.stderr
    assert not journal_dir(home, run_id).exists() or not any(journal_dir(home, run_id).iterdir())
    after = json.loads(bx("health", "--json").stdout)
    assert [f for f in after["findings"] if f["name"] == "orphan-journals"] == []


def test_health_runs_the_recording_checks(home: Path) -> None:
    run_id, made = _stopped_recording(home, files=1)
    _age(made[0])
    report = run_health(HealthContext(env={}, home=home))
    assert [(f.name, f.run_id) for f in report.findings] == [("orphan-journals", run_id)]
    assert report.exit_code() == 1


def test_a_store_lock_held_on_end_by_another_process_is_reported_with_its_pid(
    bx: Any, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording_health, "LOCK_PROBE_SECONDS", 0.2)
    recorder, _ = recorder_for(home)
    recorder.start(name="made the store")
    close_stores()
    assert check_store_lock(HealthContext(env={}, home=home)) == []  # free: one try, nothing to say
    with held_by_another_process(home / f"{DB_NAME}.lock") as (pid, _):
        [finding] = check_store_lock(HealthContext(env={}, home=home))
        assert (finding.level, finding.name, finding.details) == ("warn", "store-locked", {"pid": pid})
        assert f"held by process {pid} for over 0.2 s" in finding.message
        result = bx("health", "--json")  # the store opens for reading while another process holds the lock
        assert result.exit_code == 1, result.stdout + result.stderr
        assert [f["name"] for f in json.loads(result.stdout)["findings"]] == ["store-locked"]
    assert check_store_lock(HealthContext(env={}, home=home)) == []
    assert check_store_lock(HealthContext(env={}, home=None)) == []
