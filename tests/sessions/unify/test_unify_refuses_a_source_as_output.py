"""`sessions unify` never writes the unified file over a file it reads (exit 2, the source untouched)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from uas_unify_helpers import tree_bytes, write_tree

from bitexact.cli import cli
from bitexact.sessions.unify import UnifyError, unify

pytestmark = pytest.mark.uas("T-UAS-059")

CANONICAL = '{"type":"assistant.message","data":{"content":"hi"},"id":"a1","timestamp":"2026-10-02T00:00:00Z"}\n'


def _tree(root: Path) -> Path:
    return write_tree(root, {
        "agent-session.jsonl": CANONICAL,
        "agent-stdio.log": "::add-mask::X\n",
        "copilot-session-state/s1/events.jsonl": CANONICAL,
        "sandbox/firewall/logs/audit.jsonl": "",
    })


@pytest.mark.parametrize("relative", [
    "agent-session.jsonl",  # the selected agent stream
    "agent-stdio.log",  # read for its masks
    "copilot-session-state/s1/events.jsonl",  # a native session (not selected here)
    "sandbox/firewall/logs/audit.jsonl",
    "aw-prompts/user.txt",  # a candidate that does not exist yet: the next collection would read it
])
def test_an_output_naming_a_read_file_is_refused_and_nothing_changes(tmp_path: Path, relative: str) -> None:
    root = _tree(tmp_path / "art")
    before = tree_bytes(root)
    with pytest.raises(UnifyError, match=f"is {relative} in "):
        unify(root, root / relative, env={})
    assert tree_bytes(root) == before


def test_another_spelling_of_a_source_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path / "art")
    (tmp_path / "link").symlink_to(root, target_is_directory=True)
    before = tree_bytes(root)
    for out in (root / "agent" / ".." / "agent-session.jsonl", tmp_path / "link" / "agent-session.jsonl"):
        with pytest.raises(UnifyError, match="is agent-session.jsonl in "):
            unify(root, out, env={})
    assert tree_bytes(root) == before


def test_an_output_elsewhere_in_the_root_is_written(tmp_path: Path) -> None:
    root = _tree(tmp_path / "art")
    (root / "usage").mkdir()
    report = unify(root, root / "usage" / "aw_session.jsonl", env={})
    assert report.records > 0 and (root / "agent-session.jsonl").read_text() == CANONICAL


def test_the_cli_exits_2_naming_the_file(tmp_path: Path) -> None:
    root = _tree(tmp_path / "art")
    target = root / "agent-session.jsonl"
    result = CliRunner().invoke(cli, ["sessions", "unify", str(root), "-o", str(target)],
                                env={"BITEXACT_HOME": str(tmp_path / "home"), "COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert str(target) in result.stderr and "agent-session.jsonl" in result.stderr
    assert target.read_text() == CANONICAL
