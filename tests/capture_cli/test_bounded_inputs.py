"""Files a capture command reads are read no further than the largest document: `/dev/zero` (a device, a
stuck pipe) given as `capture test --file`, as a capture policy, or as `verify --candidate-file` was read
whole until memory ran out (a MemoryError traceback under a memory limit)."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

from cli.real_command import BITEXACT, command_env, demo_run

_LIMIT = 1 << 30  # 1 GiB of address space: four times the 256 MiB a document may take


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_LIMIT, _LIMIT))


def _bounded(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BITEXACT, *args], env=command_env(home, **env), capture_output=True, text=True,
                          timeout=300, preexec_fn=_limited, check=False)


def test_capture_test_file_from_an_endless_device_is_refused(tmp_path: Path) -> None:
    done = _bounded(tmp_path / "home", "capture", "test", "--file", "/dev/zero")
    assert done.returncode == 2, done.stderr
    assert "--file /dev/zero: over 268435456 bytes" in done.stderr and "Traceback" not in done.stderr


def test_a_capture_policy_from_an_endless_device_is_refused(tmp_path: Path) -> None:
    done = _bounded(tmp_path / "home", "capture", "policy", "check", "/dev/zero")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "over the limit of 268435456 bytes" in done.stdout + done.stderr


def test_a_candidate_file_from_an_endless_device_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    done = _bounded(home, "verify", run_id, "--open", "1:principal", "--candidate-file", "/dev/zero",
                    "--by", "auditor:ann")
    said = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in said, said
    assert "--candidate-file /dev/zero: over 268435456 bytes" in said
