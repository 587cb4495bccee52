"""`bitexact redact` of a run one of whose other entries no longer reads back (a damaged row).

An audit changed one entry's stored body (step 2) outside BitExact, then redacted a field of step 1: the claim
landed, then the removal read every entry of the run's last page looking for claims, met step 2, and stopped.
The value stayed stored, and `redact --resume` failed the same way until the store was restored from a backup
(the claim lost with it). Looking for claims now reads the claims alone (the store's kind column), so the value
is removed; the damaged step is still what `verify` fails on. A claim the store counts but whose entry is gone
is said as damage, never read as "nothing pending".

Real parts: the `bitexact` console script in its own process, a store written by the recorder, damaged with
SQLite as any other program would.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cli.real_command import run_bitexact

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import DB_NAME, open_store

SECRET = "ACC-0001-SECRET"


def _record(home: Path) -> str:
    """A sealed run of four tool calls; step 1's result holds :data:`SECRET`."""
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="accounts")
        for i in range(4):
            writer.append("tool_call", {"tool": "t", "args": [i], "result": {"account": SECRET if i == 0 else f"n{i}"}})
        writer.seal()
        return writer.run_id
    finally:
        store.close()


def _sql(home: Path, statement: str, *args: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(home / DB_NAME) as conn:
        return conn.execute(statement, args).fetchall()


def _stored_anywhere(home: Path, run_id: str, text: str) -> int:
    rows = _sql(home, "SELECT count(*) FROM entries WHERE run_id = ? AND instr(CAST(body AS TEXT), ?) > 0",
                run_id, text)
    return int(rows[0][0])  # type: ignore[call-overload]


def test_a_redaction_removes_the_value_though_another_entry_does_not_read_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = _record(home)
    assert _stored_anywhere(home, run_id, SECRET) == 1
    _sql(home, "UPDATE entries SET body = X'00FF' WHERE run_id = ? AND step = 2", run_id)

    done = run_bitexact(home, "redact", run_id, "--field", "1:result.account", "--by", "dpo:a", "--reason", "erasure")
    assert done.returncode == 0, done.stderr
    assert f"redacted 1 field(s) on {run_id}: 1:result.account" in done.stdout
    assert _stored_anywhere(home, run_id, SECRET) == 0

    resumed = run_bitexact(home, "redact", run_id, "--resume")
    assert resumed.returncode == 0 and f"nothing pending on {run_id}" in resumed.stdout, resumed.stderr
    verified = run_bitexact(home, "verify", run_id)
    assert verified.returncode == 1
    assert "step 2 does not read back as JSON" in verified.stdout, verified.stdout


def test_a_claim_counted_but_gone_is_damage_not_nothing_pending(tmp_path: Path) -> None:
    """A guard (it passes before the fix too, naming the missing step): reading the claims alone must not
    turn a claim whose entry is gone into "nothing pending"."""
    home = tmp_path / "home"
    run_id = _record(home)
    done = run_bitexact(home, "redact", run_id, "--field", "1:result.account", "--by", "dpo:a", "--reason", "erasure")
    assert done.returncode == 0, done.stderr
    _sql(home, "DELETE FROM entries WHERE run_id = ? AND kind = 'redaction'", run_id)

    resumed = run_bitexact(home, "redact", run_id, "--resume")
    assert resumed.returncode == 1, resumed.stdout
    assert "damaged" in resumed.stderr and "restore bitexact.db from a backup" in resumed.stderr, resumed.stderr
    assert "nothing pending" not in resumed.stdout
