"""`bitexact sessions parse` and `bitexact import session`: output, stderr diagnostics, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from bitexact.sessions import canonical_json, parse
from tests.sessions.evidence.conftest import DATA, FIXTURES, Invoke

GEMINI = FIXTURES / "gemini/stream_json_session_with_deltas_and_stats.jsonl"


def recorder_key(bx: Invoke) -> str:
    return json.loads(bx("keys", "show", "--json").stdout)[0]["public_key"]


def test_parse_json_prints_the_canonical_array_and_diagnostics_go_to_stderr(bx: Invoke) -> None:
    result = bx("sessions", "parse", str(GEMINI), "--json")
    assert result.exit_code == 0
    assert result.stdout == canonical_json(parse(GEMINI.read_text(encoding="utf-8")).events)
    assert "line 14" in result.stderr and "line 14" not in result.stdout


def test_parse_for_people_is_a_table_of_events(bx: Invoke) -> None:
    log = FIXTURES / "codex/jsonl_lifecycle_two_turns_and_snapshot.jsonl"
    result = bx("sessions", "parse", str(log), "--engine", "codex")
    assert result.exit_code == 0
    assert "tool.execution_start" in result.stdout and "codex" in result.stdout


def test_parse_exit_2_for_an_unreadable_log_and_a_usage_error_for_an_unknown_engine(bx: Invoke, tmp_path: Path) -> None:
    missing = bx("sessions", "parse", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"\xff\xfe")
    assert bx("sessions", "parse", str(bad)).exit_code == 2
    assert bx("sessions", "parse", str(GEMINI), "--engine", "nonesuch").exit_code == 2


def test_import_records_a_sealed_run_that_verifies_at_the_recorder_tier(bx: Invoke) -> None:
    result = bx("import", "session", str(GEMINI), "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["events"] == 12 and out["source"]["engine"] == "gemini"
    assert "line 14" in result.stderr  # the skipped record, named on stderr too
    verdict = bx("verify", out["run_id"], "--expect-recorder-key", recorder_key(bx), "--require-sealed")
    assert verdict.exit_code == 0, verdict.output
    shown = json.loads(bx("show", out["run_id"], "--json").stdout)
    assert [s["kind"] for s in shown["steps"]][:2] == ["run_meta", "marker"]
    assert shown["steps"][-1]["kind"] == "run_end"


def test_import_for_people_names_the_run_and_the_kinds(bx: Invoke) -> None:
    result = bx("import", "session", str(DATA / "aw_session.jsonl"), "--run-id", "ci-4711")
    assert result.exit_code == 0, result.stderr
    assert "ci-4711" in result.stdout and "unified" in result.stdout and "tool_call" in result.stdout


def test_reimport_exits_1_naming_the_earlier_run(bx: Invoke) -> None:
    first = json.loads(bx("import", "session", str(GEMINI), "--json").stdout)["run_id"]
    again = bx("import", "session", str(GEMINI), "--run-id", "another")
    assert again.exit_code == 1
    assert first in again.stderr and "already imported" in again.stderr
    runs = json.loads(bx("runs", "--json").stdout)
    assert [r["run_id"] for r in runs] == [first]


def test_a_taken_run_id_exits_1_and_a_malformed_one_exits_2(bx: Invoke) -> None:
    assert bx("import", "session", str(GEMINI), "--run-id", "taken").exit_code == 0
    other = FIXTURES / "codex/legacy_text_layout.log"
    taken = bx("import", "session", str(other), "--run-id", "taken")
    assert taken.exit_code == 1 and "already exists" in taken.stderr
    malformed = bx("import", "session", str(other), "--run-id", "bad\nid")
    assert malformed.exit_code == 2 and "--run-id" in malformed.stderr
    assert [r["run_id"] for r in json.loads(bx("runs", "--json").stdout)] == ["taken"]


def test_an_input_with_no_recognizable_events_exits_2_and_records_nothing(bx: Invoke, tmp_path: Path) -> None:
    for log in (FIXTURES / "custom/unrecognized_only.jsonl", tmp_path / "empty.jsonl", tmp_path / "missing.jsonl"):
        if log.name == "empty.jsonl":
            log.write_bytes(b"")
        result = bx("import", "session", str(log))
        assert result.exit_code == 2, log
        assert "error:" in result.stderr
    assert json.loads(bx("runs", "--json").stdout) == []


def test_unsupported_unified_version_exits_2(bx: Invoke, tmp_path: Path) -> None:
    lines = (DATA / "aw_session.jsonl").read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"version":1', '"version":2')
    future = tmp_path / "aw_session.jsonl"
    future.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = bx("import", "session", str(future))
    assert result.exit_code == 2 and "unsupported file-format version 2" in result.stderr
