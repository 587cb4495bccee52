"""The keys commands and an SDK run under a data directory that cannot be (an unmounted volume's link, a file
above it): named as such, as every other command names it, never taken for an empty home ("no recorder key:
create one with `bitexact keys init`")."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli.real_command import command_env, run_bitexact


@pytest.mark.parametrize("shape", ["dangling", "below-a-file"])
@pytest.mark.parametrize("args", [("keys", "show"), ("keys", "trust-file", "-o", "TRUST"), ("keys", "rotate")])
def test_the_keys_commands_name_a_data_directory_that_cannot_be(tmp_path: Path, shape: str,
                                                              args: tuple[str, ...]) -> None:
    if shape == "dangling":
        home = tmp_path / "home"
        home.symlink_to(tmp_path / "unmounted")
        said = f"is a symlink to {tmp_path / 'unmounted'}, which does not exist"
    else:
        (tmp_path / "afile").write_text("x")
        home = tmp_path / "afile" / "home"
        said = f"{tmp_path / 'afile'} is a file, not a directory"
    result = run_bitexact(home, *(str(tmp_path / "trust.json") if a == "TRUST" else a for a in args))
    assert result.returncode == 1, result.stderr
    assert said in result.stderr and "bitexact keys init" not in result.stderr, result.stderr
    assert not (tmp_path / "trust.json").exists()


def test_an_sdk_run_says_why_its_data_directory_cannot_be(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = tmp_path / "home"
    home.symlink_to(tmp_path / "unmounted")
    script = "import bitexact\nwith bitexact.run() as r:\n    r.marker('x')\n"
    done = subprocess.run([sys.executable, "-c", script], env=command_env(home), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0  # non-strict: the agent goes on, the gap is declared
    assert f"is a symlink to {tmp_path / 'unmounted'}, which does not exist" in done.stderr, done.stderr
