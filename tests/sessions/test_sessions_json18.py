"""`--json` for the session commands a CI job reads: `sessions conformance` and `sessions validate` printed
only text, which a script had to parse line by line."""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import run_bitexact


def _suite(tmp_path: Path) -> Path:
    """A small named suite: T-UAS-001 tested and passing, T-UAS-003 tested and failing, the rest untested."""
    suite = tmp_path / "suite" / "tests" / "sessions"
    suite.mkdir(parents=True)
    (suite / "conftest.py").write_text(
        "def pytest_configure(config):\n    config.addinivalue_line('markers', 'uas(*ids): ids')\n")
    (suite / "test_fake.py").write_text(
        "import pytest\n"
        "@pytest.mark.uas('T-UAS-001')\ndef test_ok(): pass\n"
        "@pytest.mark.uas('T-UAS-003')\ndef test_broken(): assert False\n")
    return suite


def test_conformance_json_holds_what_the_text_report_says(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    as_text = run_bitexact(tmp_path / "home", "sessions", "conformance", "--tests", str(suite))
    as_json = run_bitexact(tmp_path / "home", "sessions", "conformance", "--tests", str(suite), "--json")
    assert as_text.returncode == as_json.returncode == 1, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["complete"] is False and report["tests"] == 2 and report["tests_dir"] == str(suite)
    rows = {row["id"]: row for row in report["requirements"]}
    assert (rows["T-UAS-001"]["outcome"], rows["T-UAS-001"]["passed"], rows["T-UAS-001"]["failed"]) == ("pass", 1, 0)
    assert (rows["T-UAS-003"]["outcome"], rows["T-UAS-003"]["failed"]) == ("FAIL", 1)
    assert [failure for failure in report["failures"] if "test_broken" in failure]
    # Each requirement line of the text report, and its unavailable coverage, is in the document.
    for row in report["requirements"]:
        assert f"  {row['id']}  " in as_text.stdout
        assert f" {row['outcome']} " in next(line for line in as_text.stdout.splitlines()
                                             if line.startswith(f"  {row['id']}  "))
    [unavailable] = [line for line in as_text.stdout.splitlines() if line.startswith("Unavailable coverage:")]
    assert unavailable.endswith(", ".join(report["unavailable_coverage"]))
    assert "T-UAS-002" in report["unavailable_coverage"]
    for cls, claim in report["claims"].items():
        assert f"  {cls}  {claim['name']}: " in as_text.stdout
        assert set(claim["declared_gaps"]) <= set(claim["applicable"])


def _trace(tmp_path: Path, events: list[dict[str, object]]) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(events), encoding="utf-8")
    return path


def test_validate_json_counts_a_valid_trace(tmp_path: Path) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_text(json.dumps({"type": "user", "uuid": "u1", "timestamp": "2026-12-01T10:00:00Z",
                               "message": {"role": "user", "content": "hello"}}) + "\n", encoding="utf-8")
    parsed = run_bitexact(tmp_path / "home", "sessions", "parse", str(log), "--engine", "claude", "--json")
    assert parsed.returncode == 0, parsed.stderr
    trace = _trace(tmp_path, json.loads(parsed.stdout))
    result = run_bitexact(tmp_path / "home", "sessions", "validate", "agent", str(trace), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is True and report["diagnostics"] == [] and report["kind"] == "agent"
    assert report["records"] == len(json.loads(parsed.stdout)) == sum(report["counts"].values())


def test_validate_json_names_what_fails_without_its_payload(tmp_path: Path) -> None:
    trace = _trace(tmp_path, [{"data": {"content": "sk-live-SECRET-payload"}}])  # no "type"
    result = run_bitexact(tmp_path / "home", "sessions", "validate", "agent", str(trace), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["valid"] is False and report["diagnostics"]
    assert "SECRET" not in result.stdout and "SECRET" not in result.stderr
    assert result.stderr.splitlines() == report["diagnostics"]  # stderr keeps its diagnostics too
