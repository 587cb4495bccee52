"""Session import and `bitexact sessions ...`: regression tests, each for a defect the sixteenth audit found.

Each test runs the real `bitexact` console script in its own process against a data directory of its own,
on real files (a FIFO, /dev/zero, a store and keys made by the command itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from cli.real_command import run_bitexact

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude" / "subagent_lifecycle_and_status.jsonl"


def _digests(directory: Path) -> dict[str, str]:
    """Every regular file below ``directory``, by relative path, with its SHA-256."""
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file() and not p.is_symlink()}


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- 1. sanitize never rewrites BitExact's own files ---------------------------------------------------------


def _workspace_with_home(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace holding artifacts and, below it, a data directory with one imported run."""
    workspace = tmp_path / "ws"
    (workspace / "artifacts").mkdir(parents=True)
    log = workspace / "artifacts" / "session.jsonl"
    shutil.copy(CLAUDE, log)
    home = workspace / ".bitexact"
    imported = run_bitexact(home, "import", "session", str(log))
    assert imported.returncode == 0, imported.stderr
    return workspace, home


def test_sanitize_refuses_a_directory_that_holds_the_data_directory(tmp_path: Path) -> None:
    """The audit's DIR held the data directory: exit 0, the store rewritten as text and the recorder key
    (a PEM private key, a credential shape) replaced by ***."""
    workspace, home = _workspace_with_home(tmp_path)
    before = _digests(home)
    result = run_bitexact(home, "sessions", "sanitize", str(workspace), "--mask", "claude")
    assert result.returncode == 2
    said = _one_line(result.stderr)
    assert f"DIR: {workspace} holds BitExact's data directory {home}" in said
    assert "Nothing was changed" in said
    assert _digests(home) == before
    assert (workspace / "artifacts" / "session.jsonl").read_bytes() == CLAUDE.read_bytes()


@pytest.mark.parametrize("where", ["home", "inside"])
def test_sanitize_refuses_the_data_directory_and_a_directory_inside_it(tmp_path: Path, where: str) -> None:
    _workspace, home = _workspace_with_home(tmp_path)
    target = home if where == "home" else home / "keys"
    before = _digests(home)
    result = run_bitexact(home, "sessions", "sanitize", str(target), "--mask", "a")
    assert result.returncode == 2
    verb = "is" if where == "home" else "is inside"
    assert f"DIR: {target} {verb} BitExact's data directory {home}" in _one_line(result.stderr)
    assert _digests(home) == before


def test_sanitize_refuses_a_directory_holding_a_capture_key_in_force(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    key = tree / "capture.key"
    key.write_bytes(b"\x01" * 32)
    result = run_bitexact(tmp_path / "home", "sessions", "sanitize", str(tree), BITEXACT_CAPTURE_KEY=str(key))
    assert result.returncode == 2
    assert f"DIR: {tree} holds a capture key file in force, {key}" in _one_line(result.stderr)
    assert key.read_bytes() == b"\x01" * 32


def test_sanitize_refuses_a_directory_holding_the_host_key(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    host_key = tree / "host.key"
    host_key.write_text("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n")
    result = run_bitexact(tmp_path / "home", "sessions", "sanitize", str(tree), BITEXACT_HOST_KEY=str(host_key))
    assert result.returncode == 2
    assert f"DIR: {tree} holds the host key, {host_key}" in _one_line(result.stderr)
    assert "BEGIN PRIVATE KEY" in host_key.read_text()


# -- 2. session files are read bounded: a regular file, its size at open, at most 1 GiB ----------------------

_READERS = [("import", "session"), ("sessions", "parse"), ("sessions", "render"), ("sessions", "validate", "agent")]


@pytest.mark.parametrize("command", _READERS, ids=lambda c: " ".join(c))
def test_a_device_is_refused_before_it_is_read(tmp_path: Path, command: tuple[str, ...]) -> None:
    """/dev/zero was read to no end: 4-5 GB of memory in 5 s, Ctrl-C ignored."""
    started = time.monotonic()
    result = run_bitexact(tmp_path / "home", *command, "/dev/zero")
    assert result.returncode == 2
    assert "/dev/zero is a device, not a regular file" in _one_line(result.stderr)
    assert time.monotonic() - started < 60  # before the fix: never (the test's 120 s timeout)


@pytest.mark.parametrize("command", _READERS, ids=lambda c: " ".join(c))
def test_a_fifo_with_no_writer_is_refused_not_waited_on(tmp_path: Path, command: tuple[str, ...]) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = run_bitexact(tmp_path / "home", *command, str(fifo))
    assert result.returncode == 2
    assert f"{fifo} is a named pipe (FIFO), not a regular file" in _one_line(result.stderr)


def test_a_file_over_the_limit_is_refused_naming_its_size(tmp_path: Path) -> None:
    from bitexact.sessions.readfile import SessionFileError, read_session_file

    log = tmp_path / "big.jsonl"
    log.write_bytes(b"x" * 2048)
    with pytest.raises(SessionFileError, match=r"big\.jsonl is 2,048 bytes, over the 1,024 bytes"):
        read_session_file(log, limit=1024)
    assert read_session_file(log, limit=2048) == b"x" * 2048


def test_import_of_a_sparse_file_over_1_gib_is_refused_without_reading_it(tmp_path: Path) -> None:
    log = tmp_path / "huge.jsonl"
    with log.open("wb") as handle:
        handle.truncate((1 << 30) + 1)  # sparse: no disk used
    started = time.monotonic()
    result = run_bitexact(tmp_path / "home", "import", "session", str(log))
    assert result.returncode == 2
    assert f"{log} is 1,073,741,825 bytes, over the 1,073,741,824 bytes (1 GiB)" in _one_line(result.stderr)
    assert time.monotonic() - started < 60
