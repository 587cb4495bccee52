"""The command line as an operator meets it for the first time (the eighteenth session): typos, options in the
wrong place, narrow and non-UTF-8 terminals, progress with --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli
from cli.real_command import demo_run, run_bitexact, run_on_terminal


def _invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"}, prog_name="bitexact")


@pytest.mark.parametrize(("typed", "meant"), [("rnus", "runs"), ("run", "runs"), ("exprot", "export"),
                                              ("verfy", "verify")])
def test_a_mistyped_command_is_answered_with_the_one_meant(tmp_path: Path, typed: str, meant: str) -> None:
    """The commands load when they run, so click had none to compare with: `bitexact rnus` said only
    "No such command", where `bitexact keys rotat` says "Did you mean 'rotate'?"."""
    result = _invoke(tmp_path / "home", typed)
    assert result.exit_code == 2
    assert f"Error: No such command '{typed}'. Did you mean '{meant}'?" in result.stderr, result.stderr


@pytest.mark.parametrize("command", [["runs"], ["keys", "show"], ["show", "RUN", "--json"]])
@pytest.mark.parametrize("form", ["--home", "--home="])
def test_home_after_the_command_says_where_it_goes(tmp_path: Path, command: list[str], form: str) -> None:
    """`bitexact runs --home DIR` answered "No such option '--home'. Did you mean '--help'?": the option is
    the group's, and the message now says so, with the command as it would run."""
    home_args = [form + str(tmp_path)] if form.endswith("=") else [form, str(tmp_path)]
    result = _invoke(tmp_path / "home", *command, *home_args)
    assert result.exit_code == 2
    path = " ".join(part for part in command if part.islower() and not part.startswith("-"))
    assert (f"Error: No such option '--home' for `bitexact {path}`: --home goes before the command"
            f" (bitexact --home DIR {path} ...), or set BITEXACT_HOME=DIR.") in result.stderr, result.stderr
    assert "--help'?" not in result.stderr
