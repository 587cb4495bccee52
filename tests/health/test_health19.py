"""`bitexact health` on data directories broken the ways an operator meets them (session 19's audit)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli.real_command import command_env, run_bitexact


def _health(home: Path) -> tuple[int, list[dict[str, Any]]]:
    result = run_bitexact(home, "health", "--json")
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)["findings"]


def _demo(home: Path) -> str:
    demo = run_bitexact(home, "demo", "--json")
    assert demo.returncode == 0, demo.stderr
    return str(json.loads(demo.stdout)["run_id"])


# -- a program holding SQLite's own write lock ---------------------------------------------------------------

_SQLITE_SHELL = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
"""


def test_a_sqlite_shell_holding_the_write_lock_is_reported(tmp_path: Path) -> None:
    """A sqlite3 shell in `BEGIN IMMEDIATE` (outside the store's lock file): health said "healthy", exit 0,
    while every write waited BITEXACT_LOCK_TIMEOUT and failed."""
    home = tmp_path / "home"
    _demo(home)
    shell = subprocess.Popen([sys.executable, "-c", _SQLITE_SHELL, str(home / "bitexact.db")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert shell.stdout is not None and shell.stdout.readline().strip() == "held"
        code, findings = _health(home)
    finally:
        shell.communicate("\n", timeout=30)
    assert code == 1
    [locked] = findings
    assert locked["name"] == "store-locked" and locked["level"] == "warn"
    assert locked["details"] == {"holder": "sqlite"}
    assert locked["message"].startswith("the store's SQLite write lock has been held for over 1 s by a program that"
                                        " is no BitExact writer")
    assert f"fuser -v {home / 'bitexact.db'}" in locked["message"]
    assert _health(home) == (0, [])  # let go: nothing left behind, nothing reported
