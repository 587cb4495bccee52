"""A named pipe in the recorder key's place is refused, never waited on.

An audit put a FIFO at `keys/recorder.key` (as a secrets injector that writes a key into a pipe would leave one
with no writer): `bitexact keys show`, `export`, `verify RUN` and even `health`, the command that says what is
wrong, hung for ever in the key's open, which waits for a writer. The capture key and the host key were opened
without waiting already; the recorder key is now too, and anything but a regular file is refused, naming it.

Real parts: the `bitexact` console script in its own process, a real FIFO made with os.mkfifo. A hang shows as
the generous subprocess timeout expiring (no timing is asserted).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli.real_command import BITEXACT, command_env, record_kept_run



def _bitexact(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BITEXACT, *args], env=command_env(home), capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    home = tmp_path / "home"
    return home, record_kept_run(home)


def test_a_named_pipe_as_the_key_is_refused_by_every_command(recorded: tuple[Path, str], tmp_path: Path) -> None:
    home, run_id = recorded
    key = home / "keys" / "recorder.key"
    key.unlink()
    os.mkfifo(key, 0o600)
    said = f"key {key} is a named pipe (FIFO), not a regular file"

    shown = _bitexact(home, "keys", "show")
    assert shown.returncode == 1 and said in shown.stderr, (shown.stdout, shown.stderr)
    exported = _bitexact(home, "export", run_id, "-o", str(tmp_path / "run.json"))
    assert exported.returncode == 1 and said in exported.stderr, (exported.stdout, exported.stderr)
    verified = _bitexact(home, "verify", run_id)
    assert verified.returncode == 2 and verified.stdout.startswith(f"FAIL: {said}"), verified.stdout
    health = _bitexact(home, "health", "--json")
    findings = json.loads(health.stdout)["findings"]
    assert any(f["name"] == "recorder-key-unusable" and said in f["message"] for f in findings), findings


def test_a_named_pipe_as_the_list_of_compromised_keys_is_refused(recorded: tuple[Path, str], tmp_path: Path) -> None:
    """`keys/compromised.json` a FIFO: read with a plain read, it hung `keys show`, `export` and `health` the same
    way. It now reads as empty, which is refused as a damaged list (no trust file may list a key it names)."""
    home, run_id = recorded
    os.mkfifo(home / "keys" / "compromised.json", 0o600)
    said = "compromised.json is not a list of compromised keys (damaged?)"

    shown = _bitexact(home, "keys", "show")
    assert shown.returncode == 1 and said in shown.stderr, (shown.stdout, shown.stderr)
    exported = _bitexact(home, "export", run_id, "-o", str(tmp_path / "run.json"))
    assert exported.returncode == 1 and said in exported.stderr, (exported.stdout, exported.stderr)
    health = _bitexact(home, "health", "--json")
    assert said in health.stdout, health.stdout
