"""`python -m bitexact` is the same command line as the `bitexact` console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bitexact


def _module(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bitexact", *args], capture_output=True, text=True, timeout=120,
                          env={"BITEXACT_HOME": str(home), "PATH": "/usr/bin:/bin"})


def test_module_prints_the_version(tmp_path: Path) -> None:
    done = _module("--version", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert bitexact.__version__ in done.stdout


def test_module_names_itself_bitexact_in_usage(tmp_path: Path) -> None:
    done = _module("--help", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Usage: bitexact [OPTIONS] COMMAND" in done.stdout


def test_module_exit_codes_are_the_commands(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    done = _module("verify", str(missing), home=tmp_path)
    assert done.returncode == 2  # cannot read the input, as `bitexact verify` answers
    assert "missing.json" in done.stdout + done.stderr
