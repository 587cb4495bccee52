"""`bitexact health` edges (the seventh review): each test is a bug it found, fixed.

Every condition is made for real (SDK runs in their own processes, a damaged store file, settings and
policy files) and the real console script is run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli.real_command import command_env, run_bitexact


def _record(home: Path, script: str, **env: str) -> str:
    """Run ``script`` (recording into ``home``) to its end in its own process; what it printed."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=command_env(home, **env),
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _findings(home: Path, **env: str) -> tuple[int, list[dict[str, object]]]:
    result = run_bitexact(home, "health", "--json", **env)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


_ONE_RUN = """
    import bitexact
    with bitexact.run(name="one") as r:
        r.marker("recorded")
        print(r.run_id, bool(r.failures.gaps))
"""


def test_a_host_key_that_is_a_symlink_to_nowhere_is_not_said_to_be_made_on_first_use(tmp_path: Path) -> None:
    """The host key a symlink to a file that is gone (an unmounted secrets volume): no recording can make
    it (the link is in the way), yet host-key-unusable said "no such file (it is made on first use by a
    recording)", telling the operator nothing needs doing."""
    home = tmp_path / "home"
    _record(home, _ONE_RUN)
    link = tmp_path / "home.host.key"
    link.symlink_to(tmp_path / "secrets" / "host.key")
    big = _record(home, """
        import bitexact
        with bitexact.run(name="big") as r:
            r.record("marker", {"pad": "x" * 2_000_000})  # journaled after the call, when a host key opens
    """)
    assert big == "" and not link.exists()  # a recording did not make it
    code, findings = _findings(home)
    assert code == 1
    [finding] = findings
    assert finding["name"] == "host-key-unusable"
    message = str(finding["message"])
    assert "made on first use" not in message, message
    assert str(tmp_path / "secrets" / "host.key") in message, message


def _damage_runs_table(database: Path) -> None:
    """Overwrite the header of the store's runs table's root page: the file opens, its runs do not list."""
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'runs'").fetchone()[0]
    finally:
        conn.close()
    with open(database, "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xff" * 16)


def test_a_store_whose_runs_do_not_list_is_store_unreadable_not_five_failed_checks(tmp_path: Path) -> None:
    """A damaged store file that opens but whose runs table does not read back made every check that
    lists the runs raise: five health-check-failed findings, and no store-unreadable saying what is wrong."""
    home = tmp_path / "home"
    _record(home, _ONE_RUN)
    _damage_runs_table(home / "bitexact.db")
    code, findings = _findings(home)
    assert code == 2
    assert [f["name"] for f in findings] == ["store-unreadable"], findings
    assert "malformed" in str(findings[0]["message"])


def test_an_unusable_lock_timeout_is_critical_before_any_store_exists(tmp_path: Path) -> None:
    """BITEXACT_LOCK_TIMEOUT=abc on a host with no store yet: every SDK run refuses to start and records
    nothing, yet `bitexact health` said healthy (the setting showed, as store-unreadable, only once a
    store was there to fail to open)."""
    home = tmp_path / "home"
    for recorded in (False, True):  # no data directory, then the one a refused run left, holding no store
        if recorded:
            started = _record(home, _ONE_RUN, BITEXACT_LOCK_TIMEOUT="abc")
            assert started.split() == ["None", "True"]  # the run did not start: nothing was recorded
        code, findings = _findings(home, BITEXACT_LOCK_TIMEOUT="abc")
        assert code == 2, findings
        [finding] = findings
        assert finding["name"] == "store-unreadable"
        assert "BITEXACT_LOCK_TIMEOUT='abc'" in str(finding["message"])
        assert home.exists() == recorded and not (home / "bitexact.db").exists()  # health made nothing
    assert _findings(home) == (0, [])


def test_retired_keys_that_are_not_a_list_fail_no_check_and_crash_no_command(tmp_path: Path) -> None:
    """A policy file whose retired_keys is a number: capture-policy-invalid says so, but the capture key
    files in force were read with `*retired_keys`, so health also reported health-check-failed
    (TypeError) and `bitexact capture keygen -o` died with a traceback."""
    home = tmp_path / "home"
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"retired_keys": 5}), encoding="utf-8")
    code, findings = _findings(home, BITEXACT_CAPTURE_POLICY=str(policy))
    assert code == 2
    assert [f["name"] for f in findings] == ["capture-policy-invalid"], findings
    made = run_bitexact(home, "capture", "keygen", "-o", str(tmp_path / "new.key"), BITEXACT_CAPTURE_POLICY=str(policy))
    assert "Traceback" not in made.stderr, made.stderr
    assert made.returncode == 0 and (tmp_path / "new.key").is_file(), made.stderr


def test_health_makes_no_store_in_the_empty_file_a_killed_recording_left(tmp_path: Path) -> None:
    """A recording killed as it made the store leaves bitexact.db empty (made owner-only before SQLite
    writes its tables): `bitexact health` opened it and wrote the store's tables into it, though health
    never creates a store."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "bitexact.db").touch(mode=0o600)
    assert _findings(home) == (0, [])
    assert (home / "bitexact.db").stat().st_size == 0 and sorted(p.name for p in home.iterdir()) == ["bitexact.db"]
    assert _record(home, _ONE_RUN).split()[1] == "False"  # the next recording makes the store there
    assert _findings(home) == (0, [])


@pytest.mark.parametrize("below", ["link", "file"])
def test_a_data_directory_below_a_symlink_to_nowhere_or_a_file_is_critical(tmp_path: Path, below: str) -> None:
    """BITEXACT_HOME=/mnt/secure/bitexact where /mnt/secure is a symlink to an unmounted volume (or a file):
    no recording can make the data directory, every run records nothing, yet `bitexact health` said healthy
    (only the data directory itself being a file or a symlink to nowhere was a finding)."""
    parent = tmp_path / "secure"
    if below == "link":
        parent.symlink_to(tmp_path / "unmounted")
    else:
        parent.write_text("not a directory", encoding="utf-8")
    home = parent / "bitexact"
    assert _record(home, _ONE_RUN).split() == ["None", "True"]  # the run did not start: nothing was recorded
    code, findings = _findings(home)
    assert code == 2, findings
    [finding] = findings
    assert finding["name"] == "store-unreadable"
    assert str(parent) in str(finding["message"]), finding
    assert not (tmp_path / "unmounted").exists()  # health made nothing


def test_a_host_key_to_be_made_inside_the_data_directory_is_named_before_it_exists(tmp_path: Path) -> None:
    """BITEXACT_HOST_KEY naming a file inside the data directory that is not there yet: every recording
    refuses to make or use it (a copy of the store would carry it), so nothing is journaled, yet
    host-key-unusable stayed silent, taking a missing key for one made on first use."""
    home = tmp_path / "home"
    inside = str(home / "host.key")
    big = _record(home, """
        import bitexact
        with bitexact.run(name="big") as r:
            r.record("marker", {"pad": "x" * 2_000_000})  # journaled after the call, when a host key opens
    """, BITEXACT_HOST_KEY=inside)
    assert big == "" and not (home / "host.key").exists() and list((home / "journals").iterdir()) == []
    code, findings = _findings(home, BITEXACT_HOST_KEY=inside)
    assert code == 1
    [finding] = findings
    assert (finding["name"], finding["details"]) == ("host-key-unusable", {"path": inside})
    assert "inside the data directory" in str(finding["message"])
    assert _findings(home, BITEXACT_HOST_KEY=str(tmp_path / "outside.key")) == (0, [])  # made on first use
    loop = tmp_path / "loop"
    loop.symlink_to(loop)  # a data directory that is a symlink loop: store-unreadable says so, no check fails
    assert [f["name"] for f in _findings(loop)[1]] == ["store-unreadable"]


def _stopped_with_a_journal(home: Path) -> tuple[str, str]:
    """A run whose process journaled an entry and stopped before writing it, a minute ago: its id and journal."""
    out = _record(home, """
        import os
        from bitexact.crypto.hostkey import load_host_key
        from bitexact.recording.journal import JournalRecord, write_journal
        from bitexact.sdk.stores import recorder_for
        home = os.environ["BITEXACT_HOME"]
        writer = recorder_for(home)[0].start(name="stopped")
        record = JournalRecord(writer.run_id, 1, "tool_call", {"tool": "scan"}, steps_before=1)
        print(writer.run_id, write_journal(home, load_host_key(home), record))
    """)
    run_id, journal = out.split()
    then = time.time() - 120
    os.utime(journal, (then, then))  # untouched for over a minute
    return run_id, journal


def _only_orphan_finding(home: Path, run_id: str) -> str:
    """The message of health's one finding (exit 1), an orphan-journals warning for ``run_id``."""
    code, findings = _findings(home)
    assert code == 1
    [finding] = findings
    assert (finding["name"], finding["run_id"]) == ("orphan-journals", run_id)
    return str(finding["message"])


def test_journals_a_repair_could_not_open_are_not_said_to_be_folded_by_another_repair(tmp_path: Path) -> None:
    """The data directory restored on a host without its host key: `bitexact repair` cannot open the run's
    journals, names them unreadable and keeps them, yet orphan-journals went on saying `bitexact repair`
    folds them; each repair only appended another entry naming them again, and the finding never ended."""
    home = tmp_path / "home"
    run_id, journal = _stopped_with_a_journal(home)
    key = tmp_path / "home.host.key"
    key.rename(tmp_path / "elsewhere.key")  # the key stayed on the old host
    repaired = run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "restored")
    assert repaired.returncode == 0 and "could not be folded and are kept" in repaired.stdout, repaired
    message = _only_orphan_finding(home, run_id)
    assert "folds them in record order" not in message and "only names them again" in message, message
    assert "host key" in message and Path(journal).name in message
    (tmp_path / "elsewhere.key").rename(key)  # as the finding says: the key back, then one more repair
    assert run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "key back").returncode == 0
    assert _findings(home) == (0, [])


def test_an_unreadable_dual_control_setting_does_not_claim_recordings_refuse(tmp_path: Path) -> None:
    """BITEXACT_REQUIRE_DUAL_CONTROL=sometimes stops every redaction, but recordings go on (an SDK run
    records whole): setting-invalid said SDK runs and imports refuse to start, naming the wrong thing."""
    home = tmp_path / "home"
    assert _record(home, _ONE_RUN, BITEXACT_REQUIRE_DUAL_CONTROL="sometimes").split()[1] == "False"  # no gap
    code, findings = _findings(home, BITEXACT_REQUIRE_DUAL_CONTROL="sometimes")
    assert code == 2
    [finding] = findings
    message = str(finding["message"])
    assert finding["name"] == "setting-invalid" and "SDK runs, imports" not in message, message
    assert "bitexact redact" in message and "recordings go on" in message
    _, others = _findings(home, BITEXACT_DRAIN_TIMEOUT="abc")
    assert "SDK runs, imports, redactions" in str(others[0]["message"])  # the others do stop every recording


def test_journals_of_a_run_the_store_does_not_hold_are_not_said_to_be_folded_by_repair(tmp_path: Path) -> None:
    """The store replaced (restored from a backup older than the run) while a run's journals stayed:
    orphan-journals said `bitexact repair RUN` folds them, but repair has no such run ("no run ...")."""
    home = tmp_path / "home"
    run_id, journal = _stopped_with_a_journal(home)
    for name in ("bitexact.db", "bitexact.db-wal", "bitexact.db-shm"):
        (home / name).unlink(missing_ok=True)
    _record(home, _ONE_RUN)  # the store as restored: another run, not this one
    refused = run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "n")
    assert refused.returncode != 0 and "no run" in refused.stderr, refused
    message = _only_orphan_finding(home, run_id)
    assert "folds them in record order" not in message and "does not hold" in message, message
    assert Path(journal).name in message
