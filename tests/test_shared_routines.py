"""The routines several layers share: writing a file whole (``bitexact.private_files.write_whole``),
telling whether a path lies inside the data directory (``bitexact.config.inside``) and reading a file
no further than a limit (``bitexact.canon.read_within``)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bitexact import config
from bitexact.canon import read_limited, read_within
from bitexact.crypto.hostkey import HostKeyError, load_host_key
from bitexact.evidence.export import atomic_write
from bitexact.evidence.verify.bag_files import read as read_bag_file
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import InputError, read_bounded
from bitexact.private_files import write_whole
from bitexact.sessions.unify.files import CollectionIOError
from bitexact.sessions.unify.write import write_atomic

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX modes, symlinks and directory permissions")


def entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def cut_short(first: bytes) -> Iterator[bytes]:
    """A producer that fails after its first chunk was handed over (and, batched, perhaps written)."""
    yield first
    raise RuntimeError("the producer failed midway")


@pytest.mark.parametrize("private", [True, False])
def test_a_producer_failing_midway_leaves_the_old_file_and_no_temporary(tmp_path: Path, private: bool) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="midway"):
        write_whole(path, cut_short(b"n" * 300_000), private=private)  # past one batch: written before it fails
    assert path.read_bytes() == b"old"
    assert entries(tmp_path) == ["out"]


_NO_MORE_FILES = """
import resource, sys
from bitexact.private_files import write_whole
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (3, hard))  # stdin, stdout, stderr: no descriptor is left to open
try:
    write_whole(sys.argv[1], b"new")
except OSError as exc:
    print(exc.errno)
"""


@posix_only
def test_a_temporary_that_cannot_be_made_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    """The temporary's open is refused (no descriptor left, which root is refused too): nothing is written."""
    path = tmp_path / "out"
    path.write_bytes(b"old")
    child = subprocess.run([sys.executable, "-c", _NO_MORE_FILES, str(path)], capture_output=True, text=True,
                           timeout=60, check=True)
    assert child.stdout.strip() == str(errno.EMFILE), child.stderr
    assert path.read_bytes() == b"old" and entries(tmp_path) == ["out"]


def test_a_full_disk_never_leaves_the_target_cut_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"old")
    real_writev = os.writev
    calls: list[int] = []

    def fills_up(fd: int, buffers: list[memoryview]) -> int:
        calls.append(fd)
        if len(calls) > 1:  # the first batch goes in, the second finds the disk full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_writev(fd, buffers)

    monkeypatch.setattr(os, "writev", fills_up)
    with pytest.raises(OSError) as raised:
        write_whole(path, [b"a" * 300_000, b"b" * 300_000])
    assert raised.value.errno == errno.ENOSPC and len(calls) == 2
    assert path.read_bytes() == b"old" and entries(tmp_path) == ["out"]


def test_streamed_chunks_are_written_in_order_and_counted(tmp_path: Path) -> None:
    chunks = [bytes([n % 251]) * (n * 997 % 70_000) for n in range(40)]  # about 1.4 MB: several batches
    path = tmp_path / "out"
    written = write_whole(path, iter(chunks))
    assert written == sum(map(len, chunks))
    assert path.read_bytes() == b"".join(chunks)


@posix_only
def test_the_mode_is_the_callers(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_whole(tmp_path / "private", b"x")
        write_whole(tmp_path / "public", b"x", private=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "private").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "public").stat().st_mode) == 0o644


@posix_only
def test_a_symlink_at_the_target_is_replaced_never_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"keep")
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    write_whole(link, b"new")
    assert not link.is_symlink() and link.read_bytes() == b"new" and elsewhere.read_bytes() == b"keep"


def test_a_name_at_the_file_systems_limit_is_written(tmp_path: Path) -> None:
    path = tmp_path / ("n" * 250)
    assert write_whole(path, b"whole") == 5 and path.read_bytes() == b"whole"


def test_each_caller_keeps_its_message(tmp_path: Path) -> None:
    nowhere = tmp_path / "missing" / "out"  # the temporary cannot be made: its directory is not there
    with pytest.raises(OSError, match=r"^cannot write .*missing/out: No such file or directory$"):
        atomic_write(nowhere, [b"x"])
    with pytest.raises(CollectionIOError, match=r"^cannot write .*missing/out: No such file or directory$"):
        write_atomic(nowhere, b"x")
    assert entries(tmp_path) == []


@posix_only
def test_inside_follows_symlinks_both_ways(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "keys").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "into-home").symlink_to(home / "keys")  # a name outside that leads in
    (home / "out").symlink_to(outside)  # a name inside that leads out
    (tmp_path / "home-link").symlink_to(home)
    assert config.inside(home / "keys" / "k", home)
    assert config.inside(home, home)
    assert config.inside(tmp_path / "into-home" / "k", home)
    assert not config.inside(home / "out" / "k", home)
    assert config.inside(home / "keys" / "k", tmp_path / "home-link")  # the directory named through a link
    assert not config.inside(tmp_path / "homework", home)  # a sibling sharing the prefix is not below it


@posix_only
def test_a_symlink_loop_is_a_name_never_an_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "a").symlink_to(home / "b")
    (home / "b").symlink_to(home / "a")
    (tmp_path / "x").symlink_to(tmp_path / "y")
    (tmp_path / "y").symlink_to(tmp_path / "x")
    assert config.inside(home / "a" / "key", home)
    assert not config.inside(tmp_path / "x" / "key", home)
    assert not config.inside(home / "key", tmp_path / "x")


@posix_only
def test_a_host_key_named_through_a_loop_is_refused_as_a_host_key_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(tmp_path / "a" / "host.key"))
    with pytest.raises(HostKeyError, match="BITEXACT_HOST_KEY"):  # was a RuntimeError from Path.resolve
        load_host_key(tmp_path / "home")


def test_the_bounded_reader_takes_exactly_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "doc"
    path.write_bytes(b"x" * 10)
    assert read_within(path, 10) == b"x" * 10
    assert read_within(path, 11) == b"x" * 10


def test_the_bounded_reader_refuses_one_byte_over_as_efbig(tmp_path: Path) -> None:
    path = tmp_path / "doc"
    path.write_bytes(b"x" * 11)
    with pytest.raises(OSError) as raised:
        read_within(path, 10)
    assert raised.value.errno == errno.EFBIG and raised.value.strerror == "File too large"
    assert raised.value.filename == str(path)
    assert read_limited(path, 10) == b"x" * 11  # the read it makes stops one past the limit


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_an_endless_input_is_too_large_not_read_whole() -> None:
    with pytest.raises(OSError) as raised:
        read_within("/dev/zero", 1024)
    assert raised.value.errno == errno.EFBIG


def test_its_callers_say_too_large_as_they_say_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bitexact.evidence.verify.bag_files as bag_files
    import bitexact.evidence.verify.pins as pins

    path = tmp_path / "manifest-sha256.txt"
    path.write_bytes(b"x" * 11)
    monkeypatch.setattr(bag_files, "read_within", lambda p: read_within(p, 10))
    monkeypatch.setattr(pins, "read_within", lambda p: read_within(p, 10))
    with pytest.raises(CheckFailed, match=r"^cannot read manifest-sha256.txt: File too large$"):
        read_bag_file(path)
    with pytest.raises(InputError, match=r"^no such file: .*manifest-sha256.txt \(File too large\)$"):
        read_bounded(path)
    with pytest.raises(CheckFailed, match=r"^cannot read missing: No such file or directory$"):
        read_bag_file(tmp_path / "missing")


@posix_only
def test_a_databases_companions_sit_beside_the_file_a_symlink_names(tmp_path: Path) -> None:
    from bitexact.store.sqlite import companions, lock_path

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "bitexact.db").write_bytes(b"")
    (tmp_path / "link.db").symlink_to(tmp_path / "real" / "bitexact.db")
    real = tmp_path.resolve() / "real" / "bitexact.db"
    assert companions(tmp_path / "link.db", "", "-wal", ".lock") == [
        real, real.with_name("bitexact.db-wal"), real.with_name("bitexact.db.lock")]
    assert lock_path(tmp_path / "link.db") == f"{real}.lock"


def test_a_directory_refusing_its_sync_fails_a_key_but_not_an_output(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The review found it: an export or a collection that was whole and in place raised because its directory
    refused the sync (the file system's EINVAL), where before it succeeded. A key or a journal still raises: its
    name must survive a power loss."""
    import bitexact.private_files as private_files

    def refuses(directory: Path | str) -> None:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(private_files, "fsync_directory", refuses)
    bundle, collection, key = tmp_path / "b.json", tmp_path / "unified.jsonl", tmp_path / "k.key"
    assert atomic_write(bundle, [b"{}"]) == 2 and bundle.read_bytes() == b"{}"
    write_atomic(collection, b"[]\n")
    assert collection.read_bytes() == b"[]\n"
    with pytest.raises(OSError) as raised:
        write_whole(key, b"secret")
    assert raised.value.errno == errno.EINVAL
