"""A json or dsse bundle larger than a verifier reads as one document is refused at export, not written.

The limit is the strict loader's 256 MiB; a test cannot write that much, so it
lowers the exporter's limit to a size between a small run's jsonl lines and its
whole json document, and checks the refusal, the file left unmade and that jsonl
still exports and verifies.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import bitexact
from bitexact.cli import cli
from bitexact.evidence import export


@pytest.fixture
def run_id(home: Path) -> str:
    with bitexact.run(name="sized", home=home) as r:
        for n in range(20):
            r.marker(f"step {n} " + "x" * 200)
    return r.run_id


@pytest.mark.parametrize("fmt", ["json", "dsse"])
def test_a_bundle_over_the_verifiers_limit_is_refused_and_no_file_is_made(
        home: Path, tmp_path: Path, run_id: str, fmt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "MAX_DOCUMENT_BYTES", 4096)
    out = tmp_path / f"run.{fmt}"
    result = CliRunner().invoke(cli, ["export", run_id, "-o", str(out), "--format", fmt])
    assert result.exit_code == 2, result.output
    assert f"run {run_id} as a {fmt} bundle is" in result.output
    assert "over the 4096 bytes a verifier reads as one JSON document" in result.output
    assert "--format jsonl" in result.output
    assert not out.exists() and list(tmp_path.glob(".bx-*")) == []

    lines = tmp_path / "run.jsonl"
    exported = CliRunner().invoke(cli, ["export", run_id, "-o", str(lines), "--format", "jsonl"])
    assert exported.exit_code == 0, exported.output
    verified = CliRunner().invoke(cli, ["verify", str(lines)])
    assert verified.exit_code == 0 and verified.output.startswith("OK:"), verified.output
