"""Reading artifact files without following symbolic links (T-UAS-059).

Every component of an artifact path below the runtime root is checked with
``lstat``; a symlink anywhere on the path refuses the file.  The final open
uses ``O_NOFOLLOW`` as well, so a link swapped in after the check is still
refused.  Missing files are *absent* (``None``), not errors; any other
filesystem failure is surfaced as ``CollectionIOError``.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from bitexact.errors import BitExactError


class UnifyError(BitExactError):
    """The unified session could not be collected or written."""


class CollectionIOError(UnifyError, OSError):
    """A filesystem read or write failed; the message names the path."""


class SymlinkRefusedError(UnifyError):
    """An artifact path contains a symbolic link, which collection never follows."""


@dataclass(frozen=True)
class FileStatus:
    """What exists at one candidate path."""

    kind: str  # "absent" | "file" | "symlink" | "other"
    size: int = 0


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _components(root: Path, relative: str) -> list[Path]:
    parts = [p for p in relative.split("/") if p]
    return [root.joinpath(*parts[: i + 1]) for i in range(len(parts))]


def probe(root: Path, relative: str) -> FileStatus:
    """Classify ``root/relative`` without following any link below ``root``."""
    for path in _components(root, relative):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return FileStatus("absent")
        except NotADirectoryError:
            return FileStatus("absent")
        except OSError as exc:
            raise CollectionIOError(f"cannot inspect {relative}: {exc.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            return FileStatus("symlink")
    if stat.S_ISREG(st.st_mode):
        return FileStatus("file", st.st_size)
    return FileStatus("other")


def read_file(root: Path, relative: str) -> bytes:
    """The bytes of a regular file found by ``probe`` (no link followed)."""
    status = probe(root, relative)
    if status.kind == "symlink":
        raise SymlinkRefusedError(f"{relative}: symbolic links are not followed")
    if status.kind != "file":
        raise CollectionIOError(f"cannot read {relative}: not a regular file")
    path = root / relative
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefusedError(f"{relative}: symbolic links are not followed") from None
        raise CollectionIOError(f"cannot read {relative}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CollectionIOError(f"cannot read {relative}: not a regular file")
        # One read of the whole file into its final bytes object: joining
        # chunks would hold the file twice at the peak of the largest source.
        # A short read (or a file still growing) continues in chunks.
        chunks = [os.read(fd, st.st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
        return chunks[0] if len(chunks) <= 2 else b"".join(chunks)
    except OSError as exc:
        raise CollectionIOError(f"cannot read {relative}: {exc.strerror}") from None
    finally:
        os.close(fd)


def list_dir(root: Path, relative: str, *, limit: int) -> tuple[list[str], bool, list[str]]:
    """Entries of a directory below ``root``: (names, truncated, refused symlinks; ``[""]`` when the
    directory itself is one).

    Names are sorted so enumeration is deterministic; at most ``limit``
    entries are returned and ``truncated`` reports a hit traversal limit.
    """
    status = probe(root, relative)
    if status.kind == "symlink":
        return [], False, [""]  # the directory itself is a link: refused, and said so ("" names it)
    if status.kind != "other" or not (root / relative).is_dir():
        return [], False, []
    try:
        with os.scandir(root / relative) as entries:
            names = sorted(e.name for e in entries)
    except OSError as exc:
        raise CollectionIOError(f"cannot list {relative}: {exc.strerror}") from None
    refused = [n for n in names if (root / relative / n).is_symlink()]
    kept = [n for n in names if n not in refused]
    return kept[:limit], len(kept) > limit, refused
