"""Running the real `bitexact` command in-process against a fresh data directory."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli

Invoke = Callable[..., Result]


@pytest.fixture
def bx(home: Path) -> Invoke:
    """``bx("runs", "--json")`` runs the CLI with BITEXACT_HOME set to the test's home."""
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"},
                             catch_exceptions=False)

    return invoke


def recorded_run(bx: Invoke) -> str:
    """Record the demo run and return its id."""
    result = bx("demo", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["run_id"]
