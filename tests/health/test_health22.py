"""`bitexact health`, session 22: the data directory in `--json`, and BitExact's own processes named apart
from the reader that pins the store's write-ahead log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bitexact.crypto.keystore import KeyStore
from bitexact.health.recording import _store_holders
from bitexact.recording import Recorder
from bitexact.store import open_store
from cli.real_command import run_bitexact
from health.test_health20 import READER as SQLITE_READER


def test_health_json_names_the_data_directory_it_checked_absolute(tmp_path: Path) -> None:
    """A relative BITEXACT_HOME names another directory from each working directory: the document says which
    one it read, absolute, as the table's title does (the document had only status and findings)."""
    (tmp_path / "data").mkdir()
    result = run_bitexact(Path("data"), "health", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"status": "healthy", "home": str(tmp_path / "data"), "findings": []}


def test_health_json_names_the_home_beside_findings_too(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "journals").write_text("not a directory")
    result = run_bitexact(home, "health", "--json")
    document = json.loads(result.stdout)
    assert result.returncode == 2 and list(document) == ["status", "home", "findings"]
    assert document["home"] == str(home) and "journals-unusable" in [f["name"] for f in document["findings"]]


_BITEXACT_HOLDER = """
import sys
from bitexact.store import open_store
store = open_store(sys.argv[1])
print("held", flush=True)
sys.stdin.readline()
store.close()
"""


def test_bitexact_processes_are_named_apart_from_other_programs_with_the_store_open(tmp_path: Path) -> None:
    """store-wal-pinned lists who has the store open, to find the reader holding a snapshot. BitExact's own
    processes hold none, so they are named apart (they hold the store's lock file open, which other programs
    never do); they were listed in one list beside the culprit."""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        Recorder(store, KeyStore(home).current_or_init()).start(name="held").append("marker", {"note": "x"})
    finally:
        store.close()
    children = [subprocess.Popen([sys.executable, "-c", code, str(where)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
                for code, where in ((SQLITE_READER, home / "bitexact.db"), (_BITEXACT_HOLDER, home))]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "held"
        others, bitexact = _store_holders(home / "bitexact.db")
        reader, holder = children
        assert [int(name.split()[0]) for name in others] == [reader.pid]
        assert [int(name.split()[0]) for name in bitexact] == [holder.pid]
        assert all(name.endswith(")") and " (" in name for name in others + bitexact)
    finally:
        for child in children:
            child.communicate("\n", timeout=30)
