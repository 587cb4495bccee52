"""Zero-filling a file's blocks ahead of the writes that will overwrite them."""

from __future__ import annotations

import os
from typing import Final

_ZEROS: Final[bytes] = bytes(1 << 20)

HEADROOM: Final[int] = 128 << 20
"""Free space a file system must keep after a file is grown ahead of its writes: growing is a speed-up,
never worth the last megabytes of a disk that other programs (and this store's own data) need."""


def free_bytes(where: int | str | os.PathLike[str]) -> int:
    """The free space of the file system holding ``where`` (a path, or an open file's descriptor), as an
    unprivileged writer has it: root's reserved blocks do not count. Raises :class:`OSError`."""
    stats = os.statvfs(where)
    return stats.f_bavail * stats.f_frsize


def leaves_headroom(fd: int, grow: int) -> bool:
    """Whether growing the file ``fd`` by ``grow`` bytes leaves the file system :data:`HEADROOM` free
    (:func:`free_bytes`). False when the file system cannot say."""
    try:
        return free_bytes(fd) - grow >= HEADROOM
    except OSError:
        return False


def write_zeros(fd: int, start: int, end: int) -> None:
    """Write real zero bytes to ``fd`` from offset ``start`` up to ``end`` (the caller syncs).

    Real zeros, not ``fallocate``: a preallocated extent is "unwritten", and
    the first write into it changes file metadata, which the next
    ``fdatasync`` must commit to the filesystem journal. Overwriting blocks
    the file already owns keeps a later sync to the data alone, which is the
    point of preparing the file (journal slots, the store's WAL).
    """
    offset = start
    while offset < end:
        offset += os.pwrite(fd, _ZEROS[: min(len(_ZEROS), end - offset)], offset)
