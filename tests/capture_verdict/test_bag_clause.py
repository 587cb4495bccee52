"""A bag speaks for all its runs: runs recorded with no capture policy are counted, in the plural."""

from __future__ import annotations

from pathlib import Path

from bitexact.capture.clause import OFF_SENTENCE, capture_clause
from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_path
from tests.verify.producer import Run, fork_run, write_bag


def _family(policy_of_child: str) -> dict[str, dict]:
    key = SigningKey.generate()
    root = Run("root", recorder=key)
    root.append("run_meta", {"python": "3.11", "capture_policy": "off"})
    root.append("tool_call", {"tool": "t", "args": ["4111111111111111"]})
    root.seal()
    child = fork_run(root, "child", 2, recorder=key)
    child.append("run_meta", {"python": "3.11", "capture_policy": policy_of_child})
    child.seal()
    return {"root": root.bundle(key), "child": child.bundle(key)}


def test_two_runs_with_no_policy_are_counted_in_the_plural(tmp_path: Path) -> None:
    bag = write_bag(tmp_path / "bag", _family("off"), "root")
    verdict = verify_path(bag, Pins(), clauses=[capture_clause()])
    assert verdict.ok, verdict.line
    assert verdict.line.endswith(", 2 runs recorded with no capture policy in force")
    assert verdict.scope_lines == (OFF_SENTENCE,)


def test_a_bag_without_clauses_prints_the_plain_spec_line(tmp_path: Path) -> None:
    bag = write_bag(tmp_path / "bag", _family("off"), "root")
    assert verify_path(bag, Pins()).line == (
        "OK: provenance bundle rooted at 'root' - 2 run(s), 1 fork edge(s), graph verified, unsigned"
    )


def test_one_run_of_two_with_no_policy(tmp_path: Path) -> None:
    bag = write_bag(tmp_path / "bag", _family("a" * 64), "root")
    verdict = verify_path(bag, Pins(), clauses=[capture_clause()])
    assert verdict.line.endswith(", 1 run recorded with no capture policy in force"), verdict.line
