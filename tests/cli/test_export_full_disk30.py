"""`bitexact export` and `keys trust-file` whose `-o` is on a full disk exit 1, not 2.

An audit exported a run onto a full file system: `error: cannot write …: No space left on device`, exit 2,
which says "the arguments must change" (export's own help: "-o … cannot be used"). The arguments were good,
and the same command works once there is room: exit 1, as README's convention says of a store out of disk.
A path that cannot be used (no such directory) still exits 2, and no bundle, nor a piece of one, is left.

The disk is a real tmpfs (the ``small_disk`` fixture), filled with zeros.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli.real_command import record_kept_run, run_bitexact
from disks import fill_disk


pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")




def test_an_export_onto_a_full_disk_fails_with_1(tmp_path: Path, small_disk: Path) -> None:
    home = tmp_path / "home"  # the store has room; only -o's disk is full
    run_id = record_kept_run(home)
    fill_disk(small_disk)
    target = small_disk / "run.bundle.json"

    done = run_bitexact(home, "export", run_id, "-o", str(target))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"cannot write {target}: No space left on device" in done.stderr
    scripted = run_bitexact(home, "export", run_id, "-o", str(target), "--json")
    assert scripted.returncode == 1
    assert json.loads(scripted.stdout)["exit"] == 1
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]  # nothing half written is left

    trust = run_bitexact(home, "keys", "trust-file", "-o", str(small_disk / "trust.json"))
    assert trust.returncode == 1, (trust.stdout, trust.stderr)
    assert "No space left on device" in trust.stderr


def test_an_export_to_a_directory_that_does_not_exist_still_exits_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = record_kept_run(home)
    done = run_bitexact(home, "export", run_id, "-o", str(tmp_path / "nowhere" / "run.json"))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "No such file or directory" in done.stderr
    trust = run_bitexact(home, "keys", "trust-file", "-o", str(tmp_path / "nowhere" / "trust.json"))
    assert trust.returncode == 2, (trust.stdout, trust.stderr)
