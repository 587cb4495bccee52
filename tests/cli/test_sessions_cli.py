"""The session commands through the real CLI: parse, render, unify, compact, validate, import."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Invoke

FIXTURES = Path(__file__).resolve().parents[1] / "sessions" / "fixtures"
CLAUDE = FIXTURES / "claude" / "jsonl_full_session_with_debug_and_trailing_extension.jsonl"
ARTIFACTS = FIXTURES / "unify" / "interleaved_all_components"


def test_parse_prints_the_canonical_array(bx: Invoke) -> None:
    result = bx("sessions", "parse", str(CLAUDE), "--json")
    assert result.exit_code == 0, result.output
    events = json.loads(result.stdout)
    assert events and all(isinstance(e["type"], str) and isinstance(e["data"], dict) for e in events)


def test_render_hides_prompts_by_default(bx: Invoke) -> None:
    result = bx("sessions", "render", str(CLAUDE), "--format", "text")
    assert result.exit_code == 0, result.output
    assert result.output.strip()


def test_unify_then_validate_then_compact(bx: Invoke, tmp_path: Path) -> None:
    out = tmp_path / "aw_session.jsonl"
    unified = bx("sessions", "unify", str(ARTIFACTS), "-o", str(out))
    assert unified.exit_code == 0, unified.output
    assert f"wrote {out}" in unified.output
    first = json.loads(out.read_text().splitlines()[0])
    assert first["type"] == "session.format"
    valid = bx("sessions", "validate", "unified", str(out))
    assert valid.exit_code == 0, valid.output
    compacted = bx("sessions", "compact", str(out), "--json")
    assert compacted.exit_code == 0, compacted.output
    assert isinstance(json.loads(compacted.stdout), dict)


def test_validate_fails_on_a_broken_file(bx: Invoke, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": 3}\n')
    result = bx("sessions", "validate", "unified", str(bad))
    assert result.exit_code != 0


def test_import_session_records_a_sealed_verifiable_run_and_refuses_a_reimport(bx: Invoke) -> None:
    imported = bx("import", "session", str(CLAUDE), "--json")
    assert imported.exit_code == 0, imported.output
    run_id = json.loads(imported.stdout)["run_id"]
    verdict = bx("verify", run_id, "--require-sealed")
    assert verdict.exit_code == 0, verdict.output
    again = bx("import", "session", str(CLAUDE))
    assert again.exit_code == 1
    assert run_id in again.output
