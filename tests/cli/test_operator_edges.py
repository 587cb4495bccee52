"""The operator commands (health, redact, repair, runs, show): regression tests, each for a bug a review found.

The CLI is run as a real subprocess (the installed `bitexact` script) with
BITEXACT_HOME pointing at a fresh directory under the test's tmp_path.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto.hostkey import load_host_key
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.recording.journal import JournalRecord, journal_dir, write_journal
from bitexact.sdk.stores import close_stores, recorder_for
from bitexact.store import open_store

BITEXACT = str(Path(sys.executable).parent / "bitexact")


def bx(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real `bitexact` command against ``home`` with a clean BITEXACT_* environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    env.update({"BITEXACT_HOME": str(home), "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"})
    return subprocess.run([BITEXACT, *args], env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=120)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("BITEXACT_"):
            monkeypatch.delenv(name, raising=False)


def _age(path: Path) -> None:
    then = time.time() - 600
    os.utime(path, (then, then))


def _run_with_written_entry_and_leftover_journal(home: Path, data: dict[str, Any], *, seal: bool = False) -> str:
    """A run whose entry reached the chain but whose journal was never removed (a crash in between).

    docs/sdk.md names this state: "`already_written` for one whose entry reached the chain before its
    journal was removed".
    """
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="crashed")
    writer.append("tool_call", data)
    path = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "tool_call", data,
                                                                  steps_before=1))
    if seal:
        writer.seal()
    _age(path)
    close_stores()
    return writer.run_id


def _run_with_orphan_journal(home: Path) -> str:
    """A run whose process journaled an entry and stopped before writing it into the chain."""
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="stopped")
    path = write_journal(home, load_host_key(home),
                         JournalRecord(writer.run_id, 1, "tool_call", {"tool": "scan", "n": 1}, steps_before=1))
    _age(path)
    close_stores()
    return writer.run_id


def _steps(home: Path, run_id: str) -> list[dict[str, Any]]:
    shown = bx(home, "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["steps"]


# ---------------------------------------------------------------------------------------------------------
# redact: a value destroyed must not stay readable anywhere


def test_redacting_the_run_name_leaves_it_readable_in_runs_json(tmp_path: Path) -> None:
    """`bitexact redact RUN --field 0:name` destroys run_meta's `name`, but the store keeps a copy of it in
    the run's `meta` column, and `bitexact runs --json` keeps printing it.

    Spec §6 "Store redaction": "delete the value ... and its salt"; the brief's rule: a redaction must not
    leave the value anywhere readable.
    """
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="claim for Jane Q. Doe 1957-03-02")
        writer.append("tool_call", {"tool": "t", "result": {"x": 1}})
        run_id = writer.run_id
    finally:
        store.close()
    result = bx(home, "redact", run_id, "--field", "0:name", "--by", "alice", "--reason", "erasure request")
    assert result.returncode == 0, result.stderr
    assert "name" not in _steps(home, run_id)[0]["data"]  # the chain copy is gone ...
    runs = bx(home, "runs", "--json")
    assert runs.returncode == 0, runs.stderr
    assert "Jane Q. Doe" not in runs.stdout, "the redacted run name is still printed by `bitexact runs --json`"


def test_repair_after_a_redaction_brings_the_destroyed_value_back_into_the_chain(tmp_path: Path) -> None:
    """A redacted entry whose journal a crash left behind is not recognized as already written by the
    fold (the stored copy no longer holds the redacted value), so `bitexact repair` appends the whole
    entry again, redacted value included, at a new step no claim covers.

    docs/sdk.md: "`already_written` for one whose entry reached the chain before its journal was removed";
    spec §6: a redaction destroys the value; the brief: no value left readable after a redaction.
    """
    home = tmp_path / "home"
    secret = "ACCT-SECRET-778899"
    run_id = _run_with_written_entry_and_leftover_journal(
        home, {"tool": "lookup", "result": {"account": secret, "ok": True}})
    # The leftover journal holds a copy of the value: the redaction waits for the repair that folds it
    # (it used to go first, and the repair then had to recognize the redacted entry as already written).
    refused = bx(home, "redact", run_id, "--field", "1:result.account", "--by", "alice", "--reason", "gdpr")
    assert refused.returncode == 1 and "not folded into its chain" in refused.stderr, refused.stderr  # a state: 1
    repaired = bx(home, "repair", run_id, "--by", "ops", "--note", "agent host lost power")
    assert repaired.returncode == 0, repaired.stderr
    redacted = bx(home, "redact", run_id, "--field", "1:result.account", "--by", "alice", "--reason", "gdpr")
    assert redacted.returncode == 0, redacted.stderr
    assert not (home / "journals" / run_id).exists() or not any((home / "journals" / run_id).glob("*.bxj*"))
    steps = _steps(home, run_id)
    assert secret not in json.dumps(steps), \
        "repair re-appended the redacted value: " + repr([s["step"] for s in steps if secret in json.dumps(s)])


# ---------------------------------------------------------------------------------------------------------
# repair: a refused command changes nothing


def test_repair_with_a_blank_note_is_refused_but_has_already_folded_the_journals(tmp_path: Path) -> None:
    """`bitexact repair RUN --by ops --note "  "` exits 2 with "--note must say what is being accepted",
    yet it has already folded the orphan journal into the chain, appended a repair entry and deleted the
    journal: the operator is told the command failed while the run was changed.

    Rule: bad input gets a clear error and loses or changes nothing.
    """
    home = tmp_path / "home"
    run_id = _run_with_orphan_journal(home)
    before = _steps(home, run_id)
    result = bx(home, "repair", run_id, "--by", "ops", "--note", "   ")
    assert result.returncode == 2
    assert "--note" in result.stderr
    after = _steps(home, run_id)
    assert [s["kind"] for s in after] == [s["kind"] for s in before], \
        f"a refused repair appended {[s['kind'] for s in after[len(before):]]}"
    assert any(journal_dir(home, run_id).iterdir()), "a refused repair removed the orphan journal"


def test_repair_with_a_blank_by_is_refused_but_has_already_written_the_orphans(tmp_path: Path) -> None:
    """`bitexact repair RUN --by "" --note TEXT` exits 2 ("--by must name the operator ..."), yet the
    orphan's entry has been appended to the chain with no repair entry naming it (the fold validates
    `--by` only after writing the entries).

    Rule: bad input gets a clear error and loses or changes nothing; docs/sdk.md: the fold "appends a
    `repair` entry naming them".
    """
    home = tmp_path / "home"
    run_id = _run_with_orphan_journal(home)
    before = _steps(home, run_id)
    result = bx(home, "repair", run_id, "--by", "", "--note", "host lost power")
    assert result.returncode == 2
    assert "--by" in result.stderr
    after = _steps(home, run_id)
    assert [s["kind"] for s in after] == [s["kind"] for s in before], \
        f"a refused repair appended {[s['kind'] for s in after[len(before):]]}"


# ---------------------------------------------------------------------------------------------------------
# show / runs: output a script can read, and no traceback


def _run_with_lone_surrogates(home: Path) -> str:
    """Lone surrogates are valid data (spec §1: canonical JSON writes them as \\udxxx); the store keeps them."""
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(run_id="sur", name="name \ud800 x")
        writer.append("tool_call", {"tool": "t\ud800", "result": {"v": "a\udfffb"}})
    finally:
        store.close()
    return "sur"


def test_show_json_and_runs_json_crash_on_a_lone_surrogate(tmp_path: Path) -> None:
    """`bitexact show RUN --json` and `bitexact runs --json` on a run holding a lone surrogate (a string
    the store and spec §1 accept) die with a UnicodeEncodeError traceback and print no JSON:
    `print_json` dumps with ensure_ascii=False.

    Rule: --json output must be valid JSON; no tracebacks.
    """
    home = tmp_path / "home"
    run_id = _run_with_lone_surrogates(home)
    for args in (("show", run_id, "--json"), ("runs", "--json")):
        result = bx(home, *args)
        assert "Traceback" not in result.stderr, f"`bitexact {' '.join(args)}` crashed:\n{result.stderr[-400:]}"
        assert result.returncode == 0
        json.loads(result.stdout)


def test_show_table_crashes_on_a_lone_surrogate(tmp_path: Path) -> None:
    """`bitexact show RUN` (the table) dies with a UnicodeEncodeError traceback from rich when a summary
    holds a lone surrogate. Rule: no tracebacks in the CLI."""
    home = tmp_path / "home"
    run_id = _run_with_lone_surrogates(home)
    result = bx(home, "show", run_id)
    assert "Traceback" not in result.stderr, result.stderr[-400:]
    assert result.returncode == 0


# ---------------------------------------------------------------------------------------------------------
# health: findings for real problems


def test_health_calls_a_dangling_store_symlink_healthy_while_every_command_fails(tmp_path: Path) -> None:
    """A `bitexact.db` that is a symlink to nowhere: `bitexact runs` fails with "cannot open the store",
    recordings cannot start, but `bitexact health` says healthy and exits 0 (it checks `Path.exists()`,
    which follows the link, and so skips the store).

    docs/capture-verify.md: `store-unreadable` | critical | "the store under the data directory does not
    open (a damaged file, a directory in its place)".
    """
    home = tmp_path / "home"
    home.mkdir()
    (home / "bitexact.db").symlink_to(tmp_path / "gone" / "bitexact.db")
    runs = bx(home, "runs")
    assert runs.returncode != 0 and "cannot open the store" in runs.stderr  # the store really does not open
    health = bx(home, "health", "--json")
    report = json.loads(health.stdout)
    assert report["status"] == "critical", report
    assert "store-unreadable" in [f["name"] for f in report["findings"]]
    assert health.returncode == 2


def test_health_turns_another_applications_database_into_a_store_and_calls_it_healthy(tmp_path: Path) -> None:
    """A `bitexact.db` that is some other program's SQLite database (a store that is not a store):
    `bitexact health` creates BitExact's tables inside it, stamps it schema version 3 and reports
    "healthy", exit 0.

    docs/capture-verify.md: health "never creates" a store; `store-unreadable` (critical) is for "the
    store under the data directory does not open". A read-only check must not rewrite the file it checks.
    """
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    db = home / "bitexact.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
    conn.execute("INSERT INTO customers VALUES (1, 'Jane')")
    conn.commit()
    conn.close()
    os.chmod(db, 0o600)

    health = bx(home, "health", "--json")

    conn = sqlite3.connect(db)
    tables = sorted(name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    assert (tables, version) == (["customers"], 0), f"health wrote into the foreign database: {tables}, v{version}"
    assert json.loads(health.stdout)["status"] != "healthy"


def test_health_tells_to_repair_a_sealed_run_whose_repair_is_refused(tmp_path: Path) -> None:
    """A sealed run with a left-over journal whose entry is already in the chain (docs/sdk.md: after a
    crash "a released slot can read as full"; a journal whose removal was cut short): health warns
    orphan-journals and says "`bitexact repair RUN --by NAME --note TEXT` folds them", but repair refuses
    ("run ... is sealed: its 1 orphan journal(s) ... cannot follow the seal"), although folding an
    already-written orphan appends nothing but an audit entry (spec §6: repair may follow a seal). The
    warning can never be cleared.
    """
    home = tmp_path / "home"
    run_id = _run_with_written_entry_and_leftover_journal(home, {"tool": "lookup", "result": {"ok": True}},
                                                          seal=True)
    report = json.loads(bx(home, "health", "--json").stdout)
    [finding] = [f for f in report["findings"] if f["name"] == "orphan-journals"]
    if "bitexact repair" in finding["message"]:
        repaired = bx(home, "repair", run_id, "--by", "ops", "--note", "host lost power after the seal")
        assert repaired.returncode == 0, f"health says repair folds them; repair says: {repaired.stderr.strip()}"
        after = json.loads(bx(home, "health", "--json").stdout)
        assert not [f for f in after["findings"] if f["name"] == "orphan-journals"]


def test_an_approval_a_leftover_journal_refuses_stays_pending_not_approved_with_nothing_done(tmp_path: Path) -> None:
    """A redaction claim waits for the run's journals to be folded (one may hold a copy of the value). A
    dual-control approval was recorded first and its claim refused after, so the request read as approved
    with nothing redacted: the refusal now comes before the approval is recorded."""
    from bitexact.errors import EvidenceError
    from bitexact.recording.requests import approve_request, file_request, list_requests

    home = tmp_path / "home"
    secret = "ACCT-SECRET-445566"
    run_id = _run_with_written_entry_and_leftover_journal(home, {"tool": "lookup", "result": {"account": secret}})
    recorder, _ = recorder_for(home)
    try:
        file_request(recorder.store, run_id, ["1:result.account"], by="dpo:alice", reason="erasure request")
        with pytest.raises(EvidenceError, match="not folded into its chain"):
            approve_request(recorder.attach(run_id), by="dpo:bob")
        assert [r.status for r in list_requests(recorder.store, run_id)] == ["pending"]
    finally:
        close_stores()
    assert bx(home, "repair", run_id, "--by", "ops", "--note", "agent host lost power").returncode == 0
    recorder, _ = recorder_for(home)
    try:
        approval = approve_request(recorder.attach(run_id), by="dpo:bob")
        assert approval.redacted == ("1:result.account",)
        assert secret not in json.dumps(list(recorder.store.entries(run_id)))
    finally:
        close_stores()
