"""Merger, readers, compact projection and validation (review 7): regression tests, each for a bug a
review found; the docstring of each test names what was wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.sessions.unify import unify

TOKEN = "abcdefghijklmnopqrstuvwxyz012345"


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.uas("T-UAS-060")
def test_unify_redacts_a_bearer_token_after_a_tab(tmp_path: Path) -> None:
    """The raw-JSON prefilter looked for `Bearer<space|tab>` literally, but JSON writes a tab as `\\t`,
    so a tab-separated bearer token was never walked and survived into aw_session.jsonl."""
    root = tmp_path / "root"
    _jsonl(root / "agent-session.jsonl", [
        {"type": "assistant.message", "timestamp": "2026-01-01T00:00:01Z",
         "data": {"content": "Authorization: Bearer\t" + TOKEN}},
    ])
    out = tmp_path / "aw_session.jsonl"
    unify(root, out, env={})
    data = out.read_bytes()
    assert TOKEN.encode() not in data
    assert b"Bearer\\t***" in data
