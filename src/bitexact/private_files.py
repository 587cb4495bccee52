"""Creating owner-only (0600) files: whole under their final name, or not there at all.

Keys, journals and the plaintext a journal opens to are files nobody but
their owner may read. They are written the same way everywhere:

- created new (``O_EXCL``, ``O_NOFOLLOW``), so an existing file, or a symlink
  planted where the file goes, is never written through or overwritten;
- given mode 0600 with ``fchmod``, since the mode passed to ``open`` passes
  through the umask (a umask that removes the owner's bits would leave a
  file its owner cannot use);
- written whole and fsynced under a temporary name in the same directory,
  then linked (or, when asked to replace, renamed) into place and the
  directory fsynced, so a crash never leaves half a key or half a journal
  under the final name, and a reader never sees one.

This module knows nothing of what the bytes are; what a key or a journal is
stays with its layer. It sits at the package root because crypto, store,
recording and cli all use it.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TypeAlias

Buffer: TypeAlias = bytes | bytearray | memoryview
PRIVATE_MODE: Final[int] = 0o600

# O_EXCL alone already refuses a symlink at the path; O_NOFOLLOW says so
# outright. getattr: Windows has neither O_NOFOLLOW nor O_CLOEXEC, and needs
# O_BINARY so os.write does not translate newlines.
_CREATE_FLAGS: Final[int] = (
    os.O_CREAT | os.O_EXCL
    | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)
# What link(2) says on a filesystem without hard links (FAT, exFAT, some
# network mounts): the file is then written in place instead (see below).
_NO_HARD_LINKS: Final[frozenset[int]] = frozenset(
    {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}
)
_IOV_MAX: Final[int] = 1024  # the POSIX minimum is 16, Linux and macOS allow 1024
_POSIX: Final[bool] = os.name != "nt"


def is_special(path: Path | str) -> bool:
    """True when ``path`` exists and is not a regular file (a device such as ``/dev/null``, a named pipe):
    an output written there by rename would replace it. A name the file system cannot hold is not one (the
    write that follows says why)."""
    try:
        target = Path(path)
        return target.exists() and not target.is_file()
    except OSError:
        return False


def create_private_file(path: Path | str, *, flags: int = os.O_WRONLY) -> int:
    """Create a new, empty file at ``path`` that only its owner may read or write; return its descriptor.

    ``flags`` is the access mode (``os.O_WRONLY`` or ``os.O_RDWR``). Raises
    :class:`FileExistsError` when anything (a file, a directory, a symlink,
    even a dangling one) is already at ``path``; nothing there is touched.
    The caller closes the descriptor. Nothing is synced: for contents that
    must survive a crash whole, use :func:`write_private_file`.
    """
    fd = os.open(path, flags | _CREATE_FLAGS, PRIVATE_MODE)
    try:
        if hasattr(os, "fchmod"):  # the umask applied to open's mode; say the mode outright
            os.fchmod(fd, PRIVATE_MODE)
    except BaseException:
        os.close(fd)
        _unlink_quietly(path)
        raise
    return fd


def write_private_file(path: Path | str, data: Buffer | Sequence[Buffer], *, replace: bool = False) -> None:
    """Write ``data`` (bytes, or buffers written in order) durably to a new owner-only file at ``path``.

    The bytes are written and fsynced under a temporary name beside
    ``path``, then moved into place, and the directory is fsynced: once this
    returns the file is whole and durable, and at no moment is a partial
    file visible under ``path``. No temporary file is left behind, whether
    it succeeds or raises.

    Without ``replace``, raises :class:`FileExistsError` when anything is at
    ``path`` (a symlink included), leaving it as it was. With ``replace``,
    an existing file or symlink at ``path`` is atomically replaced (a
    symlink itself, never the file it points to). The directory must exist.
    Other failures raise :class:`OSError`; if only the final directory sync
    fails, the file is in place but its name may not survive a crash. A
    directory that cannot be opened for reading is not synced.
    """
    path = Path(path)
    chunks: Sequence[Buffer] = [data] if isinstance(data, (bytes, bytearray, memoryview)) else data
    # A random name, not the pid, so two writers of one path (threads or processes) never share a
    # temporary; at 64 bits it never meets a stale one either.
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = create_private_file(temporary)
    renamed = False
    try:
        try:
            _write_all(fd, chunks)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temporary, path)
            renamed = True
        elif not _link(temporary, path):
            _write_in_place(path, chunks)
    finally:
        if not renamed:  # after a link the temporary is a second name for the file; after a failure, debris
            _unlink_quietly(temporary)
    if _POSIX:  # Windows cannot open a directory to sync it
        try:
            fsync_directory(path.parent)
        except PermissionError:
            pass  # a directory one may write but not read (a drop box) cannot be opened to sync


def fsync_directory(directory: Path | str) -> None:
    """Make ``directory``'s entries durable: a file just created, linked, renamed or removed in it."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _link(temporary: Path, path: Path) -> bool:
    """Give the whole file its final name, refusing an existing one; ``False`` where hard links are unsupported.

    link(2), unlike rename(2), never replaces what is at ``path``: the
    check for an existing file and the naming are one step, so two writers
    racing for the same name cannot both win.
    """
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno in _NO_HARD_LINKS:
            return False
        raise
    return True


def _write_in_place(path: Path, chunks: Sequence[Buffer]) -> None:
    """Write the file directly under its final name (no hard links here), still never over an existing one.

    Exclusive, as with a link, but a crash part way through can leave a
    partial file under ``path``: the price of a filesystem without hard
    links, and what writing a key there always did.
    """
    fd = create_private_file(path)
    try:
        _write_all(fd, chunks)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(path)  # ours: O_EXCL made it
        raise
    os.close(fd)


def _write_all(fd: int, chunks: Sequence[Buffer]) -> None:
    """Write every buffer, in order: one ``writev`` when the kernel takes it all, more after a short write."""
    pending = [memoryview(chunk).cast("B") for chunk in chunks if len(chunk)]
    while pending:
        batch = pending[:_IOV_MAX]
        written = os.writev(fd, batch) if hasattr(os, "writev") else os.write(fd, batch[0])
        if written <= 0:  # a regular file never does this, but looping on it would never end
            raise OSError(errno.EIO, "a write made no progress")
        done = 0
        while done < len(batch) and written >= len(batch[done]):
            written -= len(batch[done])
            done += 1
        if written:
            pending[done] = pending[done][written:]
        del pending[:done]


def _unlink_quietly(path: Path | str) -> None:
    """Remove a file this module created, if it is still there."""
    try:
        os.unlink(path)
    except OSError:
        pass  # cleanup on the way out must not hide the error that got us here
