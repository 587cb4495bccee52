"""Operator commands, session 20: a relative BITEXACT_HOME names one data directory for a whole process,
printed absolute."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli.real_command import command_env, run_bitexact
from store.pages import overwrite_page, root_page

# -- 1. a relative BITEXACT_HOME is made absolute once, when the process first reads it --------------------------

_TWO_RUNS_ACROSS_A_CHDIR = """
import os
import bitexact
os.chdir("a")
with bitexact.run(name="first") as r:
    r.record("marker", {"note": "one"})
os.chdir("../b")
with bitexact.run(name="second") as r:
    r.record("marker", {"note": "two"})
"""


def test_an_sdk_process_that_changes_directory_keeps_its_data_directory(tmp_path: Path) -> None:
    """With BITEXACT_HOME=data, a second run after `os.chdir` made a second store (b/data/bitexact.db, its own
    keys and host key): the agent's runs were split between two data directories without a word."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    done = subprocess.run([sys.executable, "-c", _TWO_RUNS_ACROSS_A_CHDIR], cwd=tmp_path,
                          env=command_env(Path("data")), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "b" / "data").exists()
    assert not (tmp_path / "b" / "data.host.key").exists()
    listed = run_bitexact(tmp_path / "a" / "data", "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert len(runs) == 2 and all(run["sealed"] for run in runs)  # both runs, in the one store


def test_commands_name_a_relative_data_directory_by_its_absolute_path(tmp_path: Path) -> None:
    """`BITEXACT_HOME=data bitexact show RUN` said "no run 'RUN' in data", and `runs` titled "Runs in data":
    which "data" depends on where it was typed. Health said "healthy" naming no directory at all."""
    shown = run_bitexact(Path("data"), "show", "run-nosuch", cwd=tmp_path)
    assert shown.returncode == 2
    assert shown.stderr.splitlines()[0] == f"error: no run 'run-nosuch' in {tmp_path / 'data'}"
    health = run_bitexact(Path("data"), "health", cwd=tmp_path)
    assert health.returncode == 0, health.stderr
    assert health.stdout.strip() == f"healthy: nothing needs attention in {tmp_path / 'data'}"
    assert not (tmp_path / "data").exists()  # health makes no data directory


# -- 6. `sessions unify --json` lists the warnings, not only their count ----------------------------------------

def test_unify_json_lists_each_warning_with_its_fields(tmp_path: Path) -> None:
    """`--json` said `"warnings": 1` and nothing more: a script had to read the written file to learn what the
    warning was. Now each is listed as its record in the file holds it, and the count stays."""
    (tmp_path / "artifacts").mkdir()
    out = tmp_path / "aw_session.jsonl"
    done = run_bitexact(tmp_path / "home", "sessions", "unify", str(tmp_path / "artifacts"), "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    in_file = [record["data"] for record in map(json.loads, out.read_text().splitlines())
               if record.get("type") == "session.collection_warning"]
    assert document["warnings"] == 1
    assert document["collection_warnings"] == in_file == [{
        "code": "workflow_metadata_absent", "source": "workflow.info", "component": "workflow",
        "message": "no aw_info.json copy was found", "path": "agent/aw_info.json"}]


# -- 5. `keys mark-compromised` writes only key files: a damaged store does not stop it --------------------------

def test_mark_compromised_marks_a_key_whose_file_is_here_on_a_damaged_store(tmp_path: Path) -> None:
    """With the store's keys table damaged, marking a leaked retired key (its file in keys/retired/) was refused
    (exit 1, "the store ... is damaged") and the key stayed in every trust file written from that directory:
    the store is read only for keys whose file is gone, and nothing is written to it."""
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    rotated = run_bitexact(home, "keys", "rotate", "--json")
    assert rotated.returncode == 0, rotated.stderr
    leaked = json.loads(rotated.stdout)["retired"]["key_id"]
    overwrite_page(home / "bitexact.db", *root_page(home / "bitexact.db", "keys"))
    marked = run_bitexact(home, "keys", "mark-compromised", leaked, "--json")
    assert marked.returncode == 0, marked.stderr
    assert json.loads(marked.stdout)["key_id"] == leaked
    assert not (home / "keys" / "retired" / f"{leaked}.key").exists()
    assert leaked in (home / "keys" / "compromised.json").read_text()
    # A key only the store could name is not found, and the message says the store could not be asked (exit 1).
    unknown = run_bitexact(home, "keys", "mark-compromised", "0123456789abcdef")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith(f"error: no recorder key '0123456789abcdef' in {home / 'keys'}")
    assert "and the store, which remembers keys whose file is gone, could not be read (the store at" in unknown.stderr
