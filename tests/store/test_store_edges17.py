"""The store on a nearly full disk (the seventeenth session's store audit)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from store_chain import check_chain, make_chain

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
