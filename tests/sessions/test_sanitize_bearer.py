"""sessions sanitize masks a bearer token whatever the scheme's case and the white space after it (found in review)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.sessions.unify.sanitize import sanitize_tree

TOKEN = "abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(
    "header",
    [
        f"Authorization: BEARER {TOKEN}",  # auth scheme is case-insensitive (RFC 9110 11.1)
        f"Authorization: Bearer  {TOKEN}",  # 1*SP between scheme and token
        f"Authorization: Bearer\t{TOKEN}",
    ],
)
def test_sanitize_removes_bearer_token_regardless_of_scheme_case_or_spacing(tmp_path: Path, header: str) -> None:
    (tmp_path / "agent.log").write_text(f"curl -H '{header}' https://api.example\n", encoding="utf-8")
    sanitize_tree(tmp_path)
    assert TOKEN not in (tmp_path / "agent.log").read_text(encoding="utf-8")
