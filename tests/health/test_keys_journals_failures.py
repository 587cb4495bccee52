"""What health, repair and the keys commands say when the files beside the store are not what they should be:
a journals directory in the way, a failures record that is no file, a recorder key file deleted or a link to
nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cli.real_command import command_env, run_bitexact

from bitexact.canon import canonicalize
from bitexact.sdk.failures import FailureLog, Gap


def _python(home: Path, script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=command_env(home, **env),
                          capture_output=True, text=True, timeout=120, check=False)


def _health(home: Path) -> tuple[int, list[dict[str, object]]]:
    result = run_bitexact(home, "health", "--json")
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def _names(findings: list[dict[str, object]]) -> list[object]:
    return [finding["name"] for finding in findings]


def _age(home: Path, run_id: str, seconds: float) -> None:
    """Make the run look idle for ``seconds`` (its last write that long ago)."""
    import sqlite3

    then = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - seconds))
    with sqlite3.connect(home / "bitexact.db") as conn:
        conn.execute("UPDATE runs SET updated_at = ? WHERE run_id = ?", (then, run_id))


# -- a journals directory in the way ------------------------------------------------------------------

_UNSEALED = """
    import bitexact
    scope = bitexact.run(name="left open")
    r = scope.__enter__()
    r.marker("still going")
    print(r.run_id, flush=True)
"""


def test_a_file_in_place_of_journals_is_critical_and_no_run_is_called_dead_or_repaired(tmp_path: Path) -> None:
    """With `<home>/journals` a file, no SDK run could take its live lock, so a run still recording looked
    like one whose process stopped: health named it run-unsealed and `bitexact repair` put an acceptance of
    its end in the middle of its history."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "journals").write_text("x\n")
    recorded = _python(home, _UNSEALED)
    assert recorded.returncode == 0, recorded.stderr
    run_id = recorded.stdout.split()[0]
    assert "holds no live lock" in recorded.stderr  # the agent's log says it once
    _age(home, run_id, 600)
    code, findings = _health(home)
    assert code == 2
    assert "journals-unusable" in _names(findings) and "run-unsealed" not in _names(findings), findings
    [finding] = [f for f in findings if f["name"] == "journals-unusable"]
    assert str(home / "journals") in str(finding["message"])
    repair = run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "dead")
    assert repair.returncode != 0 and "not a directory" in repair.stderr, repair.stderr
    steps = json.loads(run_bitexact(home, "show", run_id, "--json").stdout)
    assert [step["kind"] for step in steps["steps"]] == ["run_meta", "marker"]  # no repair landed
    # Moved away, the same idle run is what it is: unsealed, and repair accepts it.
    (home / "journals").unlink()
    code, findings = _health(home)
    assert _names(findings) == ["run-unsealed"], findings
    assert run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "dead").returncode == 0


# -- a failures record that is not a file ---------------------------------------------------------------

_GAP = {"cause": "storage_unavailable", "where": "sdk", "detail": "the store stayed locked"}


def test_a_failures_record_linked_to_an_endless_device_is_reported_without_reading_it(tmp_path: Path) -> None:
    """`failures/RUN.jsonl` a link to /dev/zero: health read the whole file into memory, gigabytes within
    seconds, and never returned."""
    home = tmp_path / "home"
    assert _python(home, "import bitexact\nwith bitexact.run() as r: r.marker('x')\n").returncode == 0
    failures = home / "failures"
    failures.mkdir()
    (failures / "run-endless.jsonl").symlink_to("/dev/zero")
    os.mkfifo(failures / "run-fifo.jsonl")  # opened for reading, a FIFO with no writer would block
    code, findings = _health(home)  # the subprocess has a timeout: a hang fails the test
    assert code == 1
    unusable = sorted((f["run_id"], f["name"]) for f in findings)
    assert unusable == [("run-endless", "failures-record-unusable"), ("run-fifo", "failures-record-unusable")]


def test_a_line_longer_than_any_gap_is_skipped_and_the_gaps_after_it_are_counted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _python(home, "import bitexact\nwith bitexact.run() as r: r.marker('x')\n").returncode == 0
    (home / "failures").mkdir()
    now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    gap = canonicalize({**_GAP, "at": now})
    (home / "failures" / "run-long.jsonl").write_bytes(b"x" * (3 << 20) + b"\n" + gap + b"\n" + gap + b"\n")
    code, findings = _health(home)
    [finding] = findings
    assert finding["name"] == "recording-gaps" and finding["details"]["causes"] == {"storage_unavailable": 2}


def test_the_sdk_keeps_its_gaps_rather_than_write_them_into_a_fifo_or_a_device(tmp_path: Path) -> None:
    (tmp_path / "failures").mkdir()
    os.mkfifo(tmp_path / "failures" / "run-a.jsonl")
    (tmp_path / "failures" / "run-b.jsonl").symlink_to("/dev/null")
    for run_id in ("run-a", "run-b"):
        log = FailureLog(run_id, tmp_path)
        log.declare(Gap("storage_unavailable", "the store stayed locked"))  # returns: no open blocks
        assert log.flush(None) is False  # the record's line is still waiting to be written
        assert [gap.cause for gap in log.gaps] == ["storage_unavailable"]


# -- the recorder key --------------------------------------------------------------------------------------


def test_a_recorder_key_linked_to_nowhere_is_named_as_such_everywhere(tmp_path: Path) -> None:
    """keys/recorder.key a symlink to a file that is gone (an unmounted secrets volume): health and
    `keys show` said "no key: create one with `bitexact keys init`", which then refused: "already exists"."""
    home = tmp_path / "home"
    (home / "keys").mkdir(parents=True)
    target = tmp_path / "secrets" / "recorder.key"
    (home / "keys" / "recorder.key").symlink_to(target)
    for args in (("keys", "init"), ("keys", "show")):
        result = run_bitexact(home, *args)
        assert result.returncode == 1, result.stderr
        assert "a symlink to " + str(target) in result.stderr and "already exists" not in result.stderr
    code, findings = _health(home)
    assert code == 2
    [finding] = findings
    assert finding["name"] == "recorder-key-unusable" and str(target) in str(finding["message"])
    recorded = _python(home, "import bitexact\nwith bitexact.run() as r: r.marker('x')\nprint(r.run_id)\n")
    assert recorded.returncode == 0 and str(target) in recorded.stderr  # nothing recorded, and said why
    assert not target.exists()


def test_a_deleted_recorder_key_is_reported_and_its_runs_still_verify_against_the_homes_trust_file(
        tmp_path: Path) -> None:
    """The recorder key file deleted: health said healthy, the next run made a new key silently, and a trust
    file made from the home listed only the new key, so every earlier run failed against it."""
    home = tmp_path / "home"
    demo = json.loads(run_bitexact(home, "demo", "--json").stdout)
    old_key = demo["public_key"]
    (home / "keys" / "recorder.key").unlink()
    assert _python(home, "import bitexact\nwith bitexact.run() as r: r.marker('x')\n").returncode == 0
    code, findings = _health(home)
    assert code == 1
    [finding] = findings
    assert finding["name"] == "recorder-key-missing" and finding["details"]["public_key"] == old_key
    shown = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
    assert [(k["status"], k["public_key"] == old_key) for k in shown] == [("current", False), ("missing", True)]
    trust = tmp_path / "trust.json"
    assert run_bitexact(home, "keys", "trust-file", "-o", str(trust)).returncode == 0
    verdict = run_bitexact(home, "verify", demo["bundle"], "--trust-file", str(trust), "--require-sealed")
    assert verdict.returncode == 0 and verdict.stdout.startswith("OK: "), verdict.stdout
