"""kill -9: an entry whose record call returned is never lost (journals, then `bitexact repair`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bitexact.cli import cli
from bitexact.recording.fold import fold_orphans
from bitexact.recording.journal import journal_dir, orphan_journals
from bitexact.recording.journal_slots import slot_files
from bitexact.sdk.stores import recorder_for
from sdk.conftest import journaled

AGENT = Path(__file__).with_name("kill_agent.py")


def _start(mode: str, count: int, home: Path, *, journal_small: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "BITEXACT_HOME": str(home), "PYTHONUNBUFFERED": "1",
           "BITEXACT_JOURNAL_SMALL": "1" if journal_small else "0"}
    env.pop("BITEXACT_HOST_KEY", None)
    return subprocess.Popen([sys.executable, str(AGENT), mode, str(count)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _read_until(process: subprocess.Popen[str], stop: str) -> tuple[str, list[int]]:
    assert process.stdout is not None
    run_id = ""
    returned: list[int] = []
    for line in process.stdout:
        line = line.strip()
        if line.startswith("run "):
            run_id = line.split()[1]
        elif line.startswith("returned "):
            returned.append(int(line.split()[1]))
        if line == stop:
            return run_id, returned
    raise AssertionError(f"the agent ended before {stop!r}: {process.stderr.read() if process.stderr else ''}")


def _kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    assert process.wait(30) == -signal.SIGKILL


def _recorded_ns(run_id: str) -> list[int]:
    recorder, _ = recorder_for()
    return [e["data"]["n"] for e in recorder.store.entries(run_id) if "n" in e.get("data", {})]


@pytest.mark.parametrize("journal_small", [False, True])
def test_kill_9_with_every_entry_still_in_its_journal(home: Path, journal_small: bool) -> None:
    process = _start("blocked", 6, home, journal_small=journal_small)
    try:
        run_id, returned = _read_until(process, "ready")
    finally:
        _kill(process)
    assert returned == list(range(6))
    journals = journaled(home, run_id)
    assert len(journals) == 6, "the store was held: every returned call is only in its journal"
    for n, name in enumerate(journals):
        if n % 3 == 2:  # queued behind a large one: journaled, in a small slot with journal_small
            assert ("-16k.bxs#" in name) if journal_small else name.endswith(".bxj"), f"small entry {n}: {name}"
        else:  # the first large entry in a file; later ones in one too, or in a large slot once those exist
            assert name.endswith(".bxj") or "-4160k.bxs#" in name, f"large entry {n}: {name}"
    assert journals[0].endswith(".bxj")
    assert _recorded_ns(run_id) == []
    recorder, _ = recorder_for()
    folded = fold_orphans(recorder, run_id)
    assert folded == journals
    assert _recorded_ns(run_id) == returned, "every returned entry, once, in record order"
    entries = list(recorder.store.entries(run_id))
    assert entries[-1]["kind"] == "repair" and entries[-1]["data"]["journals"] == folded
    assert not recorder.store.run(run_id).sealed


@pytest.mark.parametrize("journal_small", [False, True])
@pytest.mark.parametrize("kill_after", [1, 4, 9])
def test_kill_9_mid_stream_loses_no_returned_entry(home: Path, kill_after: int, journal_small: bool) -> None:
    process = _start("racing", 40, home, journal_small=journal_small)
    try:
        run_id, returned = _read_until(process, f"returned {kill_after}")
    finally:
        _kill(process)
    recorder, _ = recorder_for()
    fold_orphans(recorder, run_id)
    recorded = _recorded_ns(run_id)
    assert recorded[: len(returned)] == returned, "every returned entry is there, in record order"
    assert recorded == sorted(set(recorded)), "and none twice"
    assert orphan_journals(home, run_id) == []
    assert slot_files(journal_dir(home, run_id)) == [], "the slots file goes once folded"


def test_bitexact_repair_folds_orphan_journals_then_records_the_operator(home: Path) -> None:
    process = _start("blocked", 3, home)
    try:
        run_id, returned = _read_until(process, "ready")
    finally:
        _kill(process)
    result = CliRunner().invoke(cli, ["repair", run_id, "--by", "ops:alice", "--note", "agent host killed"],
                                env={"BITEXACT_HOME": str(home)}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "3 orphan journal(s) folded" in result.output
    assert _recorded_ns(run_id) == returned
    recorder, _ = recorder_for()
    last = list(recorder.store.entries(run_id))[-1]
    assert last["kind"] == "repair" and last["data"]["by"] == "ops:alice"
    assert len(last["data"]["journals_folded"]) == 3
    assert orphan_journals(home, run_id) == []
    assert journaled(home, run_id) == []
