"""`bitexact health` edges (the sixth review): each test is a bug it found, fixed.

Every condition is made for real (SDK runs in their own processes, a live
run holding its lock, recorded data) and the real console script is run.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cli.real_command import command_env, run_bitexact


def _python(home: Path, script: str, **env: str) -> subprocess.Popen[str]:
    """``script`` run by this interpreter in its own process, recording into ``home``; stdin and stdout are pipes."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), str(home)], env=command_env(home, **env),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _record(home: Path, script: str, **env: str) -> str:
    """Run ``script`` to its end; what it printed."""
    proc = _python(home, script, **env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out


def _hash_only_policy(tmp_path: Path) -> Path:
    """A policy keeping every value under key ``x`` hash-only, with no capture key (never openable)."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"fields": [{"kind": "*", "path": "*.x", "mode": "hash-only"}]}), encoding="utf-8")
    return path


def test_recorded_escape_sequences_never_reach_the_terminal_through_the_health_table(tmp_path: Path) -> None:
    """A field path is recorded data (an entry's key): the table printed it raw, so a key holding
    ESC ]0; (set the window title), BEL and ESC [2J (clear the screen) reached the terminal."""
    home = tmp_path / "home"
    policy = _hash_only_policy(tmp_path)
    _record(home, """
        import bitexact
        with bitexact.run(name="esc") as r:
            r.record("marker", {"note": "n", "\\x1b]0;pwned\\x07\\x1b[2Jkey": {"x": "secret"}})
    """, BITEXACT_CAPTURE_POLICY=str(policy))
    table = run_bitexact(home, "health", BITEXACT_CAPTURE_POLICY=str(policy))
    assert table.returncode == 1, table.stderr
    assert "capture-key-unavailable" in table.stdout
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout, repr(table.stdout)
    assert "\\x1b]0;pwned" in table.stdout  # named, as an escape
    report = json.loads(run_bitexact(home, "health", "--json", BITEXACT_CAPTURE_POLICY=str(policy)).stdout)
    [finding] = [f for f in report["findings"] if f["name"] == "capture-key-unavailable"]
    assert finding["details"]["fields"] == ["1:\x1b]0;pwned\x07\x1b[2Jkey.x"]  # --json keeps the data as it is


def _cells(table: str, column: int) -> list[str]:
    """Each row's text in ``column`` of a rich table, its folded lines joined."""
    rows: list[str] = []
    for line in table.splitlines():
        parts = line.split("│")
        if len(parts) < 5:
            continue  # a border or the title
        if parts[1].strip():  # a row's first line names its level
            rows.append("")
        rows[-1] += parts[column].strip()
    return rows


def test_the_table_names_the_run_whole_on_an_80_column_terminal(tmp_path: Path) -> None:
    """On a terminal of 80 columns (and when piped, where rich assumes 80) the run column was cut to
    `run-20261130T101845-…` and the check to `capture-key-unavaila…`: the finding no longer said which
    run, nor which check."""
    home = tmp_path / "home"
    policy = _hash_only_policy(tmp_path)
    run_id = _record(home, """
        import bitexact
        with bitexact.run(name="narrow") as r:
            r.record("marker", {"note": "n", "k": {"x": "secret"}})
            print(r.run_id)
    """, BITEXACT_CAPTURE_POLICY=str(policy)).strip()
    table = run_bitexact(home, "health", BITEXACT_CAPTURE_POLICY=str(policy), COLUMNS="80")
    assert table.returncode == 1, table.stderr
    assert "…" not in table.stdout, table.stdout
    assert _cells(table.stdout, 2) == ["capture-key-missing", "capture-key-unavailable"], table.stdout
    assert _cells(table.stdout, 3) == ["", run_id], table.stdout


LIVE_RUN = """
    import fcntl, os, sys, time
    import bitexact
    home = sys.argv[1]
    with bitexact.run(name="live") as r:
        r.marker("first")
        r.drain()
        # The store's lock held elsewhere for a moment: the next write fails and is journaled for repair.
        fd = os.open(os.path.join(home, "bitexact.db.lock"), os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        r.record_tool_call("scan", args=["x"], result={"ok": 1})
        r.drain()
        fcntl.flock(fd, fcntl.LOCK_UN)
        directory = os.path.join(home, "journals", r.run_id)
        then = time.time() - 600  # as old as a stopped recording's journal
        for name in os.listdir(directory):
            os.utime(os.path.join(directory, name), (then, then))
        print(r.run_id, flush=True)
        sys.stdin.readline()  # still recording until told to end
"""


def test_the_journal_of_a_run_a_live_process_is_recording_is_not_an_orphan(tmp_path: Path) -> None:
    """A run still recording (its process holds the run's live lock) whose journal is older than the
    grace period was reported as `orphan-journals`, "left by a recording that stopped", while
    `bitexact repair` refuses it: "still being recorded by a live process"."""
    home = tmp_path / "home"
    proc = _python(home, LIVE_RUN, BITEXACT_LOCK_TIMEOUT="0.2")
    try:
        assert proc.stdout is not None and proc.stdin is not None
        run_id = proc.stdout.readline().strip()
        assert run_id, proc.stderr.read() if proc.stderr else ""
        assert any(p.suffix == ".bxj" for p in (home / "journals" / run_id).iterdir())
        repair = run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "n")
        assert repair.returncode != 0 and "still being recorded" in repair.stderr  # the run is live
        live = run_bitexact(home, "health", "--json")
        # The write the held store lock failed is a recording gap of the day (reported as such); its
        # journal is the live run's, not an orphan.
        assert [f["name"] for f in json.loads(live.stdout)["findings"]] == ["recording-gaps"], live.stdout
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Once the process has ended, the journal it left is the repair's: reported, naming the run.
    journals = home / "journals" / run_id
    then = time.time() - 600
    for path in journals.iterdir():
        os.utime(path, (then, then))
    stopped = run_bitexact(home, "health", "--json")
    assert stopped.returncode == 1
    [finding] = [f for f in json.loads(stopped.stdout)["findings"] if f["name"] != "recording-gaps"]
    assert (finding["name"], finding["run_id"]) == ("orphan-journals", run_id)


def test_one_damaged_run_hides_no_other_runs_findings(tmp_path: Path) -> None:
    """A run whose stored entries cannot be read (a step missing) made the per-run scan raise: three
    `health-check-failed` findings, and every other run's findings (here its never-openable field)
    were never reported. The damaged run is itself named, once, as critical `store-unreadable`."""
    home = tmp_path / "home"
    policy = _hash_only_policy(tmp_path)
    _record(home, """
        import bitexact
        for run_id in ("damaged", "intact"):
            with bitexact.run(name=run_id, run_id=run_id) as r:
                r.record("marker", {"note": "n", "k": {"x": "secret"}})
    """, BITEXACT_CAPTURE_POLICY=str(policy))
    with sqlite3.connect(home / "bitexact.db") as conn:
        conn.execute("DELETE FROM entries WHERE run_id = 'damaged' AND step = 1")
    conn.close()
    result = run_bitexact(home, "health", "--json", BITEXACT_CAPTURE_POLICY=str(policy))
    assert result.returncode == 2, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert [(f["level"], f["name"], f.get("run_id")) for f in findings] == [
        ("critical", "store-unreadable", "damaged"),
        ("warn", "capture-key-missing", None),
        ("warn", "capture-key-unavailable", "intact"),
    ], findings
    assert "step 1 is missing from the store" in findings[0]["message"]


def test_health_help_names_every_documented_finding(tmp_path: Path) -> None:
    """`bitexact health --help` lists what it warns and is critical on, but left out environment-unknown
    (critical: BITEXACT_ENV holds a value other than prod), one of docs/capture-verify.md's findings."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "capture-verify.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Health"):doc.index("## Tests and benchmark")]
    names = re.findall(r"^\| `([a-z-]+)` \| (?:warn|critical)", section, flags=re.MULTILINE)
    assert len(names) == 30, names  # recorder-key-retired, store-missing (19); entry-time-backwards, store-wal-pinned,
    # recorder-key-compromise-lost (20); retired-key-unusable (32)
    shown = run_bitexact(tmp_path / "home", "health", "--help")
    assert shown.returncode == 0, shown.stderr
    text = re.sub(r"-\s+", "-", " ".join(shown.stdout.split()))  # click wraps lines at hyphens too
    assert [name for name in names if name not in text] == []
    assert "environment-unknown (BITEXACT_ENV" in text


def test_a_data_directory_that_is_a_dangling_symlink_is_critical(tmp_path: Path) -> None:
    """BITEXACT_HOME a symlink to a directory that is gone (an unmounted volume): the store's mkdir
    takes the link for a directory another process made, every run fails to start and records
    nothing, yet `bitexact health` said healthy (it only looked for a file in the directory's place)."""
    home = tmp_path / "home"
    home.symlink_to(tmp_path / "volume" / "bitexact")
    started = _record(home, """
        import bitexact
        with bitexact.run(name="lost") as r:
            r.marker("nothing records")
            print(r.run_id, bool(r.failures.gaps))
    """)
    assert started.split() == ["None", "True"]  # the run did not start: nothing was recorded
    result = run_bitexact(home, "health", "--json")
    assert result.returncode == 2, result.stdout + result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["level"], finding["name"]) == ("critical", "store-unreadable")
    assert str(home) in finding["message"] and str(tmp_path / "volume" / "bitexact") in finding["message"]
    assert not home.exists()  # health made nothing
    assert "store-unreadable" in run_bitexact(home, "health").stdout


def test_a_run_whose_store_failed_its_recording_in_the_last_day_is_reported(tmp_path: Path) -> None:
    """The SDK declared storage_unavailable gaps (another process held the store past BITEXACT_LOCK_TIMEOUT:
    what a full disk or a hung writer does), yet `bitexact health` said healthy: it never read the runs'
    failures records. After a repair folds the journals the gaps remain in the record, reported for a day;
    an agent's own misuse (invalid_argument) is never reported."""
    home = tmp_path / "home"
    out = _record(home, """
        import fcntl, os, sys
        import bitexact
        home = sys.argv[1]
        with bitexact.run(home=home) as r:
            r.marker("made")
            r.drain()
            # The store's lock held elsewhere (a hung writer): the next write fails and is journaled.
            fd = os.open(os.path.join(home, "bitexact.db.lock"), os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX)
            r.marker("lost to the lock")
            r.drain()
            fcntl.flock(fd, fcntl.LOCK_UN)
            r.record("marker", {"note": "x"}, custody={"note": "not a hint"})  # the agent's misuse
        print(r.run_id)
        """, BITEXACT_LOCK_TIMEOUT="0.3")
    run_id = out.strip()
    causes = [json.loads(line)["cause"] for line in (home / "failures" / f"{run_id}.jsonl").read_text().splitlines()]
    assert "storage_unavailable" in causes and "invalid_argument" in causes, causes
    report = run_bitexact(home, "health", "--json")
    findings = [f for f in json.loads(report.stdout)["findings"] if f["name"] == "recording-gaps"]
    assert [f["run_id"] for f in findings] == [run_id], report.stdout
    assert set(findings[0]["details"]["causes"]) == {"storage_unavailable"}, findings[0]
    assert report.returncode == 1
    table = run_bitexact(home, "health", COLUMNS="200")
    assert "recording-gaps" in table.stdout and "storage_unavailable" in table.stdout, table.stdout

    # A day later it is no longer news: the same record, its gaps dated 25 hours ago.
    record = home / "failures" / f"{run_id}.jsonl"
    old = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 25 * 3600))
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]
    record.write_text("".join(json.dumps({**g, "at": old}) + "\n" for g in lines), encoding="utf-8")
    later = run_bitexact(home, "health", "--json")
    assert not [f for f in json.loads(later.stdout)["findings"] if f["name"] == "recording-gaps"], later.stdout


@pytest.mark.parametrize(("variable", "value"), [
    ("BITEXACT_DRAIN_TIMEOUT", "abc"),
    ("BITEXACT_QUEUE_MAX_BYTES", "-1"),
    ("BITEXACT_CHECKPOINT_EVERY", "0"),
    ("BITEXACT_HASH_ALG", "md5"),
    ("BITEXACT_JOURNAL_SMALL", "maybe"),
    ("BITEXACT_REQUIRE_DUAL_CONTROL", "sometimes"),
])
def test_a_setting_every_recording_refuses_is_critical(tmp_path: Path, variable: str, value: str) -> None:
    """With a setting every recording refuses at its start, every SDK run recorded nothing but its start
    gap, yet `bitexact health` said healthy."""
    home = tmp_path / "home"
    report = run_bitexact(home, "health", "--json", **{variable: value})
    assert report.returncode == 2, report.stdout + report.stderr
    [finding] = [f for f in json.loads(report.stdout)["findings"] if f["name"] == "setting-invalid"]
    assert variable in finding["message"] and variable in finding["details"]["variables"], finding
    assert run_bitexact(home, "health", "--json").returncode == 0  # unset: healthy again
