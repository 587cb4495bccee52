"""Writing files whole under their final name, or not at all; owner-only (0600) ones among them.

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

Any other file that must never be seen cut short (a bundle, a trust file,
a session's records) is written by :func:`write_whole`: the same temporary,
sync and rename, with the mode its caller asks for.

This module knows nothing of what the bytes are; what a key or a journal is
stays with its layer. It sits at the package root because crypto, store,
recording, evidence, sessions and cli all use it.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import time
from collections.abc import Callable, Iterable, Sequence
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
# Streamed buffers (a bundle's lines) are gathered up to this many bytes a write: few system calls, and
# no more of a large file in memory than this.
_BATCH_BYTES: Final[int] = 256 * 1024
_SMALL_BYTES: Final[int] = 64 * 1024  # a buffer smaller than this is copied into its batch, a larger one is not
# Where a file is placed once whole: True when the temporary's name went with it (a rename).
_Place: TypeAlias = Callable[[Path, Path], bool]
_POSIX: Final[bool] = os.name != "nt"


def file_kind(mode: int) -> str:
    """What a file that is no regular file is, in words, for a refusal to name (``st_mode`` of an ``lstat`` or an
    ``fstat``)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


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
    return _create(path, flags, private=True)


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
    if replace:
        write_whole(path, data)
        return
    chunks = _chunks(data)

    def link_or_write_in_place(temporary: Path, final: Path) -> bool:
        if not _link(temporary, final):
            _write_in_place(final, chunks)
        return False  # after a link the temporary is a second name for the file

    _write_then_place(Path(path), chunks, private=True, place=link_or_write_in_place)


def write_whole(path: Path | str, data: Buffer | Iterable[Buffer], *, private: bool = True,
                strict_directory: bool = True) -> int:
    """Put ``data`` (bytes, or buffers in order) whole and durably at ``path``, over any file there; return its size.

    As :func:`write_private_file` with ``replace``: written and fsynced
    under a short temporary name beside ``path`` (so any name the file
    system takes for ``path`` works, one near its 255-byte limit included),
    renamed over ``path`` (a symlink there is replaced, never written
    through) and the directory fsynced. A failure at any point, a full disk
    or an exception raised by ``data``'s iterator, leaves ``path`` as it
    was and no temporary behind. A kill -9 leaves its hidden temporary
    (``.bx-PID-RANDOM.tmp``); the next ``write_whole`` into the directory
    removes it once its process is gone and it has lain untouched for
    :data:`STALE_AFTER_S` (:func:`sweep_stale_temporaries`). ``data`` may be a generator: it is read
    once, a batch at a time, and a buffer it yields must not change after.

    ``private`` makes the file owner-only (0600); without it the file gets
    the mode any new file gets (0666 less the umask). Checking what is at
    ``path`` (a device, a symlink) is the caller's: the rename replaces it.
    Raises :class:`OSError` as the system call that failed raised it; with
    ``strict_directory`` off, a directory that refuses its sync is let be
    (the file is whole and in place, only its name may not survive a power
    loss): for an output the caller can write again, never for a key or a
    journal.
    """
    path = Path(path)
    sweep_stale_temporaries(path.parent)
    return _write_then_place(path, _chunks(data), private=private, place=_rename,
                             strict_directory=strict_directory)


_TEMPORARY: Final[re.Pattern[str]] = re.compile(r"\.bx-(\d+)-[0-9a-f]{12}\.tmp")
STALE_AFTER_S: Final[float] = 15 * 60
"""How long a temporary whose writer is gone stays untouched before a later write removes it: a live writer's
file changes with every batch it writes, and its process runs."""


def _temporary_name(path: Path) -> Path:
    # The writer's pid, so that a later writer can tell a temporary whose writer was killed (kill -9 runs no
    # cleanup); random bits, so two writers of one path (threads, or processes in other pid namespaces sharing
    # the directory) never share one. Short, so it fits wherever ``path`` does.
    return path.with_name(f".bx-{os.getpid()}-{secrets.token_hex(6)}.tmp")


def sweep_stale_temporaries(directory: Path, *, now: float | None = None) -> list[str]:
    """Remove what killed writers left in ``directory``: temporaries of :func:`write_whole` whose process is
    not running here and that nothing touched for :data:`STALE_AFTER_S`; return their names.

    Best effort: a directory that cannot be listed, or a file that cannot be removed, is let be.
    """
    removed: list[str] = []
    now = time.time() if now is None else now
    try:
        listing = list(os.scandir(directory))
    except OSError:
        return removed
    for item in listing:
        found = _TEMPORARY.fullmatch(item.name)
        if found is None or _running(int(found.group(1))):
            continue
        try:
            if not item.is_file(follow_symlinks=False) or now - item.stat(follow_symlinks=False).st_mtime < STALE_AFTER_S:
                continue
            os.unlink(item.path)
        except OSError:
            continue
        removed.append(item.name)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0  # another user's process (or a number no pid is: not ours to judge)
    return True


def _chunks(data: Buffer | Iterable[Buffer]) -> Iterable[Buffer]:
    return [data] if isinstance(data, (bytes, bytearray, memoryview)) else data


def _create(path: Path | str, flags: int, *, private: bool) -> int:
    """A new file's descriptor: owner-only when ``private``, else with the umask's mode; never through a symlink."""
    fd = os.open(path, flags | _CREATE_FLAGS, PRIVATE_MODE if private else 0o666)
    if not private:
        return fd
    try:
        if hasattr(os, "fchmod"):  # the umask applied to open's mode; say the mode outright
            os.fchmod(fd, PRIVATE_MODE)
    except BaseException:
        os.close(fd)
        _unlink_quietly(path)
        raise
    return fd


def _write_then_place(path: Path, chunks: Iterable[Buffer], *, private: bool, place: _Place,
                      strict_directory: bool = True) -> int:
    """Write ``chunks`` to a new temporary beside ``path``, fsync it, ``place`` it, fsync the directory."""
    temporary = _temporary_name(path)
    fd = _create(temporary, os.O_WRONLY, private=private)
    renamed = False
    try:
        try:
            written = _write_stream(fd, chunks)
            os.fsync(fd)
        finally:
            os.close(fd)
        renamed = place(temporary, path)
    finally:
        if not renamed:  # after a failure the temporary is debris
            _unlink_quietly(temporary)
    if _POSIX:  # Windows cannot open a directory to sync it
        try:
            fsync_directory(path.parent)
        except PermissionError:
            pass  # a directory one may write but not read (a drop box) cannot be opened to sync
        except OSError:
            if strict_directory:
                raise
    return written


def _rename(temporary: Path, path: Path) -> bool:
    os.replace(temporary, path)
    return True


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


def _write_in_place(path: Path, chunks: Iterable[Buffer]) -> None:
    """Write the file directly under its final name (no hard links here), still never over an existing one.

    Exclusive, as with a link, but a crash part way through can leave a
    partial file under ``path``: the price of a filesystem without hard
    links, and what writing a key there always did.
    """
    fd = create_private_file(path)
    try:
        _write_stream(fd, chunks)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(path)  # ours: O_EXCL made it
        raise
    os.close(fd)


def _write_stream(fd: int, chunks: Iterable[Buffer]) -> int:
    """Write every buffer, in order, in writes of about ``_BATCH_BYTES``; return the bytes written.

    Small buffers (a bundle's lines) are copied together, so a write costs
    no Python work per line; large ones (a journal's payload) are handed to
    the kernel as they are, never copied.
    """
    batch: list[Buffer] = []
    small = bytearray()
    pending = written = 0
    for chunk in chunks:
        size = chunk.nbytes if isinstance(chunk, memoryview) else len(chunk)
        if size < _SMALL_BYTES:
            small += chunk
        else:
            if small:
                batch.append(small)
                small = bytearray()
            batch.append(chunk)
        pending += size
        if pending >= _BATCH_BYTES:
            _write_all(fd, [*batch, small])
            written += pending
            batch, small, pending = [], bytearray(), 0
    _write_all(fd, [*batch, small])
    return written + pending


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
