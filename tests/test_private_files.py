"""bitexact.private_files: new owner-only files, whole under their final name or not there at all."""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bitexact import private_files
from bitexact.crypto.keysources import KeySourceError, generate_key_file
from bitexact.private_files import create_private_file, write_private_file

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes and symlinks")


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("umask")
@pytest.mark.parametrize("mask", [0o000, 0o277])
def test_mode_is_0600_whatever_the_umask(tmp_path: Path, mask: int) -> None:
    # 0o000 would let the open mode through as is; 0o277 would take the owner's write bit.
    os.umask(mask)
    write_private_file(tmp_path / "written", b"data")
    os.close(create_private_file(tmp_path / "created"))
    assert mode_of(tmp_path / "written") == 0o600
    assert mode_of(tmp_path / "created") == 0o600


def test_writes_every_buffer_in_order_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "out"
    pieces = [b"head\n", b"", bytearray(b"x" * 100_000), memoryview(b"tail")]
    write_private_file(path, pieces)
    assert path.read_bytes() == b"head\n" + b"x" * 100_000 + b"tail"
    assert entries(tmp_path) == ["out"]


def test_a_short_write_is_continued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.writev

    def at_most_7(fd: int, buffers: list[memoryview]) -> int:
        return real(fd, [bytes(b"".join(buffers)[:7])])

    monkeypatch.setattr(os, "writev", at_most_7)
    write_private_file(tmp_path / "out", [b"0123", b"45678", b"9abcdefghij"])
    assert (tmp_path / "out").read_bytes() == b"0123456789abcdefghij"


def test_an_existing_file_is_refused_and_left_intact(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_bytes(b"the old key")
    os.chmod(path, 0o640)
    with pytest.raises(FileExistsError):
        write_private_file(path, b"a new key")
    with pytest.raises(FileExistsError):
        create_private_file(path)
    assert path.read_bytes() == b"the old key" and mode_of(path) == 0o640
    assert entries(tmp_path) == ["key"]


def test_replace_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"old, and readable by others")
    os.chmod(path, 0o644)
    write_private_file(path, b"new", replace=True)
    assert path.read_bytes() == b"new" and mode_of(path) == 0o600
    assert entries(tmp_path) == ["out"]


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_at_the_target_is_refused(tmp_path: Path, dangling: bool) -> None:
    elsewhere = tmp_path / "elsewhere"
    if not dangling:
        elsewhere.write_bytes(b"not yours to overwrite")
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    with pytest.raises(FileExistsError):
        write_private_file(link, b"secret")
    with pytest.raises(FileExistsError):
        create_private_file(link)
    assert link.is_symlink()
    if dangling:
        assert not elsewhere.exists(), "nothing was created through the symlink"
    else:
        assert elsewhere.read_bytes() == b"not yours to overwrite"
    assert sorted(entries(tmp_path)) == sorted(["link"] + ([] if dangling else ["elsewhere"]))


def test_replace_replaces_a_symlink_itself_never_writing_through_it(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not yours to overwrite")
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    write_private_file(link, b"secret", replace=True)
    assert not link.is_symlink() and link.read_bytes() == b"secret" and mode_of(link) == 0o600
    assert elsewhere.read_bytes() == b"not yours to overwrite"


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("failing", ["writev", "fsync"])
def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              replace: bool, failing: str) -> None:
    path = tmp_path / "out"
    if replace:
        path.write_bytes(b"old")

    def broken(*args: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, failing, broken)
    with pytest.raises(OSError) as raised:
        write_private_file(path, b"x" * 10_000, replace=replace)
    assert raised.value.errno == errno.ENOSPC
    assert entries(tmp_path) == (["out"] if replace else [])
    if replace:
        assert path.read_bytes() == b"old", "the old file stays until the new one is whole"


def test_the_file_and_its_directory_are_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[Path] = []
    real = private_files.fsync_directory
    monkeypatch.setattr(private_files, "fsync_directory", lambda d: (synced.append(Path(d)), real(d)))
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd)))
    write_private_file(tmp_path / "out", b"data")
    assert synced == [tmp_path]
    assert len(fsyncs) == 2  # the file, then the directory


def test_without_hard_links_the_file_is_written_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_links(*args: object) -> None:
        raise OSError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "key"
    write_private_file(path, b"key")
    assert path.read_bytes() == b"key" and mode_of(path) == 0o600
    assert entries(tmp_path) == ["key"]
    with pytest.raises(FileExistsError):
        write_private_file(path, b"another key")
    assert path.read_bytes() == b"key" and entries(tmp_path) == ["key"]


def test_racing_writers_of_one_name_one_wins_whole(tmp_path: Path) -> None:
    path = tmp_path / "key"
    start = threading.Barrier(8)
    won: list[bytes] = []
    lost: list[BaseException] = []

    def write(n: int) -> None:
        data = bytes([n]) * 65536
        start.wait()
        try:
            write_private_file(path, data)
            won.append(data)
        except FileExistsError as exc:
            lost.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(lost) == 7
    assert path.read_bytes() == won[0]
    assert entries(tmp_path) == ["key"]


def test_a_capture_key_cut_short_leaves_no_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(KeySourceError, match="cannot create"):
        generate_key_file(tmp_path / "capture.key")
    assert entries(tmp_path) == []
