"""The store on a nearly full disk (the seventeenth session's store audit)."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

from cli.real_command import demo_run, run_bitexact
from disks import fill_disk
from store.pages import overwrite_page, root_page
from store_chain import check_chain, make_chain

from bitexact.health.recording import DISK_FULL
from bitexact.store import SQLiteStore
from bitexact.zerofill import HEADROOM


def _free(path: Path) -> int:
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize


def test_the_first_commit_does_not_grow_the_wal_into_a_small_disks_last_space(small_disk: Path) -> None:
    """On a 24 MiB disk the first commit grew the WAL by 9.8 MB of zeros; with less free than that it took
    every free byte: the database could not grow to take a checkpoint, appends failed after ~0.6 MB of data,
    and the WAL kept the disk full after the process left."""
    assert _free(small_disk) < HEADROOM
    store = SQLiteStore(small_disk / "s.db")
    try:
        store.create_run("r")
        chain = make_chain("r", 3)
        for entry in chain:
            store.append("r", entry)
        check_chain(list(store.entries("r")))
        assert (small_disk / "s.db-wal").stat().st_size < 1 << 20
    finally:
        store.close()


_GROW_UNDER_A_LIMIT = """
import resource, sys
from pathlib import Path
from bitexact.store.walcheckpoint import presize
wal = Path(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))  # Python ignores SIGXFSZ: EFBIG
print(presize(wal, 4096))
"""


def test_a_growth_that_fails_part_way_is_cut_back(tmp_path: Path) -> None:
    """A write refused part way (here a file size limit: EFBIG, as a full disk's ENOSPC) left the zeros
    written so far in the file, holding the space it had taken."""
    wal = tmp_path / "s.db-wal"
    wal.write_bytes(b"\x01" * 1000)
    done = subprocess.run([sys.executable, "-c", _GROW_UNDER_A_LIMIT, str(wal)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert wal.read_bytes() == b"\x01" * 1000
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY  # only the child was limited


# -- a damaged store is said to be damaged: by every command, and by health ---------------------------------


def _recorded(home: Path) -> str:
    """A small sealed run made by the real `bitexact demo`, its store checkpointed into the file and closed."""
    run_id = demo_run(home)
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    return run_id


def _damage(home: Path, table_or_index: str) -> None:
    """Flip 300 bytes of the root page of ``table_or_index`` in the store file, as a failing disk or a stray
    write would (past the page header, where the cells are)."""
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        [(page,)] = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table_or_index,))
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    finally:
        connection.close()
    data = bytearray((home / "bitexact.db").read_bytes())
    start = page_size * (page - 1) + 8
    data[start:start + 300] = bytes(b ^ 0xA5 for b in data[start:start + 300])
    (home / "bitexact.db").write_bytes(bytes(data))


def _health(home: Path) -> tuple[int, list[dict[str, object]]]:
    result = run_bitexact(home, "health", "--json")
    return result.returncode, list(json.loads(result.stdout)["findings"])


def test_a_run_its_index_no_longer_finds_is_damaged_not_unknown(tmp_path: Path) -> None:
    """`bitexact runs` listed the run, yet show, export and verify said "no run" with exit 2, as if the id
    were mistyped, and health said the same inside a critical finding."""
    home = tmp_path / "home"
    run_id = _recorded(home)
    _damage(home, "sqlite_autoindex_runs_1")
    assert run_id in run_bitexact(home, "runs").stdout
    for command in (("show", run_id), ("export", run_id, "-o", str(tmp_path / "b.json")), ("verify", run_id)):
        result = run_bitexact(home, *command)
        assert result.returncode == 1, (command, result.stderr)
        said = " ".join((result.stdout + result.stderr).split())
        assert f"the store is damaged: run '{run_id}' is in its runs table, but the table's index does not find" \
               " it" in said, command
        assert "restore bitexact.db from a backup" in said
    code, findings = _health(home)
    assert code == 2
    assert "store-damaged" in {finding["name"] for finding in findings}


def test_health_reports_damaged_checkpoints_it_said_nothing_of(tmp_path: Path) -> None:
    """Damaged checkpoint pages: verify and export failed ("checkpoint 0 is missing"), and health said
    "healthy: nothing needs attention", exit 0."""
    home = tmp_path / "home"
    run_id = _recorded(home)
    _damage(home, "checkpoints")
    assert run_bitexact(home, "verify", run_id).returncode == 1
    code, findings = _health(home)
    assert code == 2
    checks = {(finding["name"], finding.get("run_id")) for finding in findings}
    assert ("store-unreadable", run_id) in checks and ("store-damaged", None) in checks
    [damaged] = [finding for finding in findings if finding["name"] == "store-damaged"]
    problems = damaged["details"]["problems"]  # type: ignore[index]
    assert problems and all("\n" not in line and "*** in database" not in line for line in problems)


def test_an_undamaged_store_has_no_integrity_problem(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _recorded(home)
    store = SQLiteStore(home / "bitexact.db")
    try:
        assert store.integrity_problems() == []
    finally:
        store.close()
    code, findings = _health(home)
    assert code == 0 and findings == []


def test_a_runs_row_with_no_readable_id_is_named_as_such(tmp_path: Path) -> None:
    """A damaged runs page read a row's run id as NULL: "run None: its name does not read back as JSON
    (object of type 'NoneType' has no len())"."""
    home = tmp_path / "home"
    _recorded(home)
    _damage(home, "runs")
    result = run_bitexact(home, "runs")
    assert result.returncode == 1
    assert "run None" not in result.stderr and "NoneType" not in result.stderr
    assert "the store is damaged" in result.stderr


def _wreck(home: Path, table: str) -> None:
    """Overwrite the whole root page of ``table`` (its header too): SQLite then reads it as "database disk
    image is malformed", an error of the read itself rather than a row that reads wrong."""
    overwrite_page(home / "bitexact.db", *root_page(home / "bitexact.db", table))


def test_health_reports_a_page_that_does_not_read_at_all(tmp_path: Path) -> None:
    """An entries page SQLite calls malformed: health's own check raised on it (its read transaction's end
    failed too), so health said only "check_runs_readable raised StoreError", never store-damaged, and each
    run's finding sent the reader to `bitexact health` and to a backup twice."""
    home = tmp_path / "home"
    run_id = _recorded(home)
    _wreck(home, "entries")
    store = SQLiteStore(home / "bitexact.db")
    try:
        assert store.integrity_problems() == ["database disk image is malformed"]
    finally:
        store.close()
    code, findings = _health(home)
    assert code == 2
    assert "health-check-failed" not in {finding["name"] for finding in findings}
    [unreadable] = [finding for finding in findings if finding["name"] == "store-unreadable"]
    assert unreadable["run_id"] == run_id
    message = str(unreadable["message"])
    assert message.startswith(f"the store at {home / 'bitexact.db'} is damaged (database disk image is malformed):")
    assert message.count("from a backup") == 1 and "bitexact health" not in message
    assert {finding["name"] for finding in findings} >= {"store-damaged", "store-unreadable"}


def test_a_malformed_page_is_said_to_be_damage_with_what_to_do(tmp_path: Path) -> None:
    """`show` said "error: …/bitexact.db: database disk image is malformed" and nothing more: not that the
    store is damaged, nor what to do."""
    home = tmp_path / "home"
    run_id = _recorded(home)
    _wreck(home, "entries")
    result = run_bitexact(home, "show", run_id)
    assert result.returncode == 1
    error, hint = result.stderr.strip().splitlines()
    assert error == (f"error: the store at {home / 'bitexact.db'} is damaged (database disk image is malformed);"
                     " the file was changed outside BitExact, or its disk failed; restore bitexact.db from a backup")
    assert hint == "`bitexact health` lists what else in the data directory is damaged."


# -- health names a data directory on a full disk -----------------------------------------------------------


def test_health_says_the_data_directorys_disk_is_full(small_disk: Path) -> None:
    """After a full disk, health said "healthy: nothing needs attention" while no run could start, and the
    failures record that recording-gaps reads could not be written either."""
    home = small_disk / "home"
    _recorded(home)
    filler = fill_disk(small_disk)
    code, findings = _health(home)
    assert code == 2
    [low] = [finding for finding in findings if finding["name"] == "store-disk-low"]
    assert low["level"] == "critical" and int(low["details"]["free_bytes"]) < DISK_FULL  # type: ignore[index]
    assert f"the file system of {home} has " in str(low["message"])
    filler.unlink()
    code, findings = _health(home)
    assert "store-disk-low" not in {finding["name"] for finding in findings}
