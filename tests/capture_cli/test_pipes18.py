"""A named pipe nobody writes into, given as the text or candidate to test (the eighteenth session's audit)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bitexact.capture.opening import OpeningRefusedError, read_candidate_bytes
from cli.real_command import run_bitexact


def test_capture_test_refuses_a_named_pipe_nothing_was_written_into(tmp_path: Path) -> None:
    """`capture test --file FIFO` with no writer read the pipe as empty text at once and showed how an empty
    string is stored (exit 0), as if the file had been tested."""
    fifo = tmp_path / "text.fifo"
    os.mkfifo(fifo)
    done = run_bitexact(tmp_path / "home", "capture", "test", "--file", str(fifo))
    assert done.returncode == 2, done.stderr
    assert f"--file {fifo} is a named pipe (FIFO) and nothing was read from it" in done.stderr
    assert "start the writer first" in done.stderr
    assert done.stdout == ""


def test_capture_test_still_reads_a_pipe_that_is_written_into(tmp_path: Path) -> None:
    """A writer's text comes through a pipe as before (here the command's own stdin, a pipe)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    env["BITEXACT_HOME"] = str(tmp_path / "home")
    from cli.real_command import BITEXACT

    done = subprocess.run([BITEXACT, "capture", "test", "--file", "/dev/stdin"], input="password=hunter2\n",
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "password=[CREDENTIAL]\n\n"


def test_a_candidate_file_that_is_a_named_pipe_nothing_was_written_into_is_not_tested(tmp_path: Path) -> None:
    """`verify --open-withheld STEP --candidate-file FIFO` with no writer tested zero bytes: a custody record
    of a test never made, and "no match" (exit 2) for a candidate never read. Refused before the record."""
    fifo = tmp_path / "candidate.fifo"
    os.mkfifo(fifo)
    with pytest.raises(OpeningRefusedError, match="is a named pipe \\(FIFO\\) and nothing was read from it"):
        read_candidate_bytes(fifo)
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    assert read_candidate_bytes(empty) == b""  # an empty regular file is a candidate like any other


def test_verify_help_says_an_unreadable_candidate_file_exits_1() -> None:
    """Under --open, 2 means only "tested, no match", so an unreadable --candidate-file exits 1 (the code and
    docs/capture-verify.md said so); --help listed only missing options under 1."""
    done = run_bitexact(Path("/nonexistent-home-for-help"), "verify", "--help")
    help_text = " ".join(done.stdout.split())
    assert "a --candidate-file that cannot be read, is over 256 MiB, is not JSON for --open" in help_text
    assert '2 the candidate does not match (only that: 2 is not "cannot read the input" here)' in help_text
