"""An error is one line on stderr, whatever the path or value it quotes holds (the seventeenth session)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli.real_command import run_bitexact


@pytest.mark.parametrize("command", [("sessions", "sanitize"), ("import", "session")])
def test_a_line_break_in_a_quoted_path_is_written_as_an_escape(tmp_path: Path, command: tuple[str, ...]) -> None:
    """A path holding a line break was printed raw: its second line read as a line of its own
    (here "FAIL: x", as a verdict reads), so a script reading stderr line by line was misled."""
    missing = tmp_path / "none\nFAIL: x"
    result = run_bitexact(tmp_path / "home", *command, str(missing))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert f"{tmp_path}/none\\nFAIL: x" in result.stderr
