"""`-o -` is refused (exit 2): BitExact writes its outputs as files, never to standard output.

An audit ran `bitexact export RUN -o - | gzip > run.gz`, as with most tools: the bundle went to a file named
`-` in the working directory, the pipe got the "exported ... to -" report, and the command exited 0. `keys
trust-file -o -` did the same. Now both refuse before writing anything, saying how to name such a file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.real_command import record_kept_run, run_bitexact



@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    home = tmp_path / "home"
    return home, record_kept_run(home)


@pytest.mark.parametrize("command", [["export", "kept"], ["keys", "trust-file"]])
def test_dash_as_the_output_is_refused_and_writes_nothing(recorded: tuple[Path, str], tmp_path: Path,
                                                          command: list[str]) -> None:
    home, _ = recorded
    work = tmp_path / "work"
    work.mkdir()
    done = run_bitexact(home, *command, "-o", "-", cwd=work)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "-o -: the output is written as a file, never to standard output" in done.stderr
    assert done.stdout == ""
    scripted = run_bitexact(home, *command, "-o", "-", "--json", cwd=work)
    assert scripted.returncode == 2 and json.loads(scripted.stdout)["exit"] == 2
    assert list(work.iterdir()) == []


def test_a_file_named_dash_in_a_directory_is_still_written(recorded: tuple[Path, str], tmp_path: Path) -> None:
    home, run_id = recorded
    (tmp_path / "out").mkdir()
    done = run_bitexact(home, "export", run_id, "-o", "out/-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "out" / "-").read_bytes())["run_id"] == run_id
