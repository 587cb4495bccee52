"""Real disks for the tests that fill one (the ``small_disk`` fixture of tests/conftest.py mounts it)."""

from __future__ import annotations

from pathlib import Path


def fill_disk(disk: Path) -> Path:
    """Write zeros into ``disk`` until it is full; the file written, to unlink when space should return."""
    filler = disk / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass  # full
    return filler
