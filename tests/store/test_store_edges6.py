"""Store edges (the sixth review): each test pins one behaviour that used to break.

Real files, real SQLite, and the CLI as a real subprocess; nothing depends on machine speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bitexact.errors import RunNotFoundError
from bitexact.store import SQLiteStore

BITEXACT = [str(Path(sys.executable).parent / "bitexact")]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "s.db")
    yield s
    s.close()


def _cli(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "BITEXACT_HOME": str(home)}
    return subprocess.run([*BITEXACT, *args], env=env, capture_output=True, timeout=60, check=False)


# -- 1. a run id no store can hold, asked for by a reading call ----------------


@pytest.mark.parametrize("call", ["head", "run", "checkpoints", "custody", "entries", "entry"])
def test_a_run_id_sqlite_cannot_bind_is_an_unknown_run_when_read(store: SQLiteStore, call: str) -> None:
    """A lone surrogate (what a non-UTF-8 command-line argument decodes to) raised a raw UnicodeEncodeError."""
    run_id = "run-\udcff"
    with pytest.raises(RunNotFoundError):
        if call == "entries":
            list(store.entries(run_id))
        elif call == "entry":
            store.entry(run_id, 0)
        else:
            getattr(store, call)(run_id)


@pytest.mark.parametrize("command", ["show", "verify"])
def test_a_non_utf8_run_argument_is_no_traceback(tmp_path: Path, command: str) -> None:
    """`bitexact show|verify $'\\xff'` on a store printed a Python traceback (UnicodeEncodeError in Store.run)."""
    home = tmp_path / "home"
    with SQLiteStore(_db(home)) as s:
        s.create_run("run-1")
    done = _cli(home, command, b"run-\xff")
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode in (1, 2), done
    assert b"run-" in done.stdout + done.stderr


def _db(home: Path) -> Path:
    home.mkdir(mode=0o700, exist_ok=True)
    return home / "bitexact.db"
