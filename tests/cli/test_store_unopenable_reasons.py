"""A store that does not open says why, where SQLite's own words do not.

An audit remounted a data directory read-only: `bitexact runs`, `show`, `verify` and `export` all said
"unable to open database file" and nothing more (SQLite writes the store's -wal and -shm files even to read it).
On a full disk they said "disk I/O error". The message now names the read-only file system (and how to read the
store anyway: a copy), or the full disk. The file systems are real tmpfs mounts (the suite runs as root, as CI does).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli.real_command import record_kept_run, run_bitexact
from disks import fill_disk


pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")




def test_a_store_on_a_read_only_file_system_says_so_and_how_to_read_it(small_disk: Path) -> None:
    home = small_disk / "home"
    run_id = record_kept_run(home)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    for args in (("runs",), ("show", run_id), ("verify", run_id)):
        result = run_bitexact(home, *args)
        assert result.returncode != 0
        said = result.stdout + result.stderr
        assert f"the file system holding {home} is mounted read-only" in said, said
        assert f"cp -a {home} DIR" in said and "Traceback" not in said


def test_a_store_on_a_full_disk_says_the_disk_is_full(small_disk: Path) -> None:
    home = small_disk / "home"
    run_id = record_kept_run(home)
    fill_disk(small_disk)
    result = run_bitexact(home, "show", run_id)
    assert result.returncode != 0, result.stdout
    assert f"the disk holding {home} is full" in result.stderr, result.stderr
