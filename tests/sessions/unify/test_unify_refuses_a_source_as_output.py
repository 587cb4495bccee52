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


# -- the same file under another name: a hard link or a symbolic link to a source -----------------------------


@pytest.mark.parametrize("link", ["hard", "symbolic"])
@pytest.mark.parametrize("where", ["outside", "inside"])
def test_an_output_that_is_a_source_under_another_name_is_refused_and_nothing_changes(
        tmp_path: Path, link: str, where: str) -> None:
    """Refused by the file's identity (st_dev, st_ino), not its name: the path check saw `copy.jsonl`, no
    source's name, so a hard link was written over (the rename took that name from the evidence, and a failed
    collection removes a previous output) and a symbolic link refused only after the whole collection, as
    any link."""
    root = _tree(tmp_path / "art")
    out = (tmp_path if where == "outside" else root / "usage") / "copy.jsonl"
    out.parent.mkdir(exist_ok=True)
    if link == "hard":
        out.hardlink_to(root / "agent-session.jsonl")
    else:
        out.symlink_to(root / "agent-session.jsonl")
    before = tree_bytes(root)
    with pytest.raises(UnifyError) as refused:
        unify(root, out, env={})
    assert str(refused.value) == (f"{out} is agent-session.jsonl in {root}, a file the collection reads: writing"
                                  " the unified file there would replace that evidence; name another output file")
    assert tree_bytes(root) == before and out.read_text() == CANONICAL
    assert out.is_symlink() == (link == "symbolic")


def test_a_native_copilot_session_under_another_name_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path / "art")
    out = tmp_path / "events-copy.jsonl"
    out.hardlink_to(root / "copilot-session-state" / "s1" / "events.jsonl")
    with pytest.raises(UnifyError, match="is copilot-session-state/s1/events.jsonl in "):
        unify(root, out, env={})


def test_a_hard_link_to_a_file_the_collection_does_not_read_is_written(tmp_path: Path) -> None:
    root = _tree(tmp_path / "art")
    (root / "notes.txt").write_text("mine\n")
    out = tmp_path / "aw_session.jsonl"
    out.hardlink_to(root / "notes.txt")
    assert unify(root, out, env={}).records > 0
    assert (root / "notes.txt").read_text() == "mine\n"  # the rename replaced only the output's name


def test_the_cli_refuses_a_hard_link_to_a_source_with_exit_2_and_the_same_words(tmp_path: Path) -> None:
    root = _tree(tmp_path / "art")
    out = tmp_path / "aw_session.jsonl"
    out.hardlink_to(root / "agent-session.jsonl")
    result = CliRunner().invoke(cli, ["sessions", "unify", str(root), "-o", str(out)],
                                env={"BITEXACT_HOME": str(tmp_path / "home"), "COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"error: {out} is agent-session.jsonl in {root}, a file the collection reads:"
                                     " writing the unified file there would replace that evidence; name another"
                                     " output file"), result.stderr
    assert out.read_text() == CANONICAL and out.stat().st_nlink == 2
