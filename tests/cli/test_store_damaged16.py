"""A store changed outside BitExact (a search-and-replace over a directory) is said to be damaged, naming the row.

`bitexact runs` used to print `error: Extra data: line 2 column 1 (char 109)`, naming neither the file nor the row.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cli.real_command import demo_run, run_bitexact


def _damage(home: Path, sql: str) -> None:
    conn = sqlite3.connect(home / "bitexact.db")
    with conn:
        conn.execute(sql)
    conn.close()


def test_a_damaged_runs_row_names_the_run_and_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    _damage(home, "UPDATE runs SET meta = '{\"name\": \"x\"}\n***' ")
    listed = run_bitexact(home, "runs")
    assert listed.returncode == 1
    assert f"the store is damaged: run {run_id}: its name does not read back as JSON" in listed.stderr
    assert "restore bitexact.db from a backup\n`bitexact health` lists what else in the data directory is damaged." \
        in listed.stderr


def test_a_damaged_entry_names_its_step(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    _damage(home, "UPDATE entries SET body = CAST('{\"v\": 2} ***' AS BLOB) WHERE step = 3")
    shown = run_bitexact(home, "show", run_id, "--json")
    assert shown.returncode == 1
    assert f"the store is damaged: run {run_id}: step 3 does not read back as JSON" in shown.stderr
