"""Capture verdict and opening edges (the sixth review): each test is a bug it found, fixed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


from bitexact.store import Store


def test_json_with_candidate_and_by_but_no_open_still_prints_one_json_document(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path, store: Store
) -> None:
    """--candidate-file and --by without --open under --json printed a plain error and nothing on stdout,
    where the docs say an option missing or wrong under --json still gives one JSON document."""
    candidate = tmp_path / "c.json"
    candidate.write_text('"user:7f3a9c"\n', encoding="utf-8")
    result = bx("verify", contract, "--candidate-file", str(candidate), "--by", "alice", "--json", env=keyed_env)
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    answer = json.loads(result.stdout)
    assert answer["opening"] is None and "--open" in answer["error"]
    assert store.custody(contract) == []


def test_json_with_a_key_pin_that_is_not_a_key_prints_a_json_verdict(bx: Any, contract: str) -> None:
    """verify --json --expect-key abc printed nothing on stdout (a plain error), where a missing trust file, the
    other input error of exit 2, prints the FAIL verdict as JSON: --json output is JSON."""
    result = bx("verify", contract, "--expect-key", "abc", "--json")
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    answer = json.loads(result.stdout)
    assert answer["ok"] is False and answer["form"] == "input" and "--expect-key" in answer["message"]
