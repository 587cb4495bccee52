"""What the keys commands say: `keys init` with a directory (or a named pipe) in the key's place said "a
recorder key already exists"; `keys trust-file -o X` said the path twice (`-o X: cannot write X: ...`)."""

from __future__ import annotations

import os
from pathlib import Path

from cli.real_command import run_bitexact


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_keys_init_names_a_directory_in_the_keys_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = home / "keys" / "recorder.key"
    key.mkdir(parents=True)
    result = run_bitexact(home, "keys", "init")
    said = _one_line(result.stderr)
    assert result.returncode == 1, said
    assert f"{key} is a directory, not a recorder key: move it aside (`mv {key} {key}.aside`) and run" \
           " `bitexact keys init` again" in said
    assert "already exists" not in said
    assert key.is_dir()  # left as it was


def test_keys_init_names_a_named_pipe_in_the_keys_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = home / "keys" / "recorder.key"
    key.parent.mkdir(parents=True)
    os.mkfifo(key, 0o600)
    result = run_bitexact(home, "keys", "init")
    assert result.returncode == 1 and f"{key} is a named pipe (FIFO), not a recorder key" in _one_line(result.stderr)


def test_keys_init_over_a_key_still_says_it_exists(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    again = run_bitexact(home, "keys", "init")
    assert again.returncode == 1 and "a recorder key already exists at" in _one_line(again.stderr)


def test_trust_file_names_the_path_it_cannot_write_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    target = tmp_path / "missing-dir" / "trust.json"
    result = run_bitexact(home, "keys", "trust-file", "-o", str(target))
    said = _one_line(result.stderr)
    assert result.returncode == 2, said
    assert said == f"error: cannot write {target}: No such file or directory"
