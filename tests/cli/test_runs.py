"""`bitexact runs`, `bitexact show` and `bitexact demo` as a person and a script see them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Invoke, recorded_run


def test_demo_records_exports_and_verifies(bx: Invoke, home: Path) -> None:
    result = bx("demo")
    assert result.exit_code == 0, result.output
    assert "OK: run-" in result.output and "recorder-attested" in result.output
    assert "http_call" in result.output and "GET /v1/claims/CLM-4471 → 200" in result.output
    bundles = list((home / "exports").glob("*.bundle.json"))
    assert len(bundles) == 1


def test_runs_table_and_json(bx: Invoke) -> None:
    empty = bx("runs")
    assert "No runs" in empty.output
    run_id = recorded_run(bx)
    table = bx("runs")
    assert run_id in table.output and "yes" in table.output
    listed = json.loads(bx("runs", "--json").output)
    assert listed[0]["run_id"] == run_id and listed[0]["steps"] == 8 and listed[0]["sealed"] is True


def test_show_lists_every_step_with_a_summary(bx: Invoke) -> None:
    run_id = recorded_run(bx)
    shown = json.loads(bx("show", run_id, "--json").output)
    kinds = [s["kind"] for s in shown["steps"]]
    assert kinds == ["run_meta", "identity", "context", "tool_call", "http_call", "human_decision", "marker", "run_end"]
    assert shown["steps"][-1]["summary"] == "sealed at 8 steps"
    table = bx("show", run_id)
    assert table.exit_code == 0 and "human_decision" in table.output


def test_show_of_an_unknown_run_says_so(bx: Invoke) -> None:
    result = bx("show", "run-missing")
    assert result.exit_code == 2 and "no run 'run-missing'" in result.output


def test_help_teaches(bx: Invoke) -> None:
    top = bx("--help")
    assert "bitexact demo" in top.output and "verify" in top.output
    verify = " ".join(bx("verify", "--help").output.split())
    assert "Exit codes: 0 verifies 1 does not verify" in verify and "2 cannot read the input" in verify


def test_an_unusable_capture_policy_refuses_to_record_with_one_clear_line(bx: Invoke, monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", str(tmp_path / "missing.json"))
    result = bx("demo")
    assert result.exit_code == 1
    assert "BITEXACT_CAPTURE_POLICY" in result.output and "no such file" in result.output
    assert "Traceback" not in result.output
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY")
    assert json.loads(bx("runs", "--json").output) == []  # nothing was recorded
