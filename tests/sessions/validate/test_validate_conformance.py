"""The generated conformance report (T-UAS-001, T-UAS-002, T-UAS-051)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessions.probe_suite import probe_suite

from bitexact.sessions.conformance import (
    CLASS_CLAIMS,
    REQUIREMENTS,
    all_claims,
    build_report,
    conformance_report,
    run_suite,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "sessions" / "uas_requirements.json"
SESSIONS_TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.uas("T-UAS-051", "T-UAS-002")
def test_requirement_table_matches_the_copied_specification_data() -> None:
    spec = json.loads(DATA.read_text(encoding="utf-8"))["requirements"]
    ids = sorted({r["id"] for r in spec})
    assert [r[0] for r in REQUIREMENTS] == ids
    sections = {}
    for r in spec:
        sections.setdefault(r["id"], r["section"])
    assert {rid: section for rid, _title, section in REQUIREMENTS} == sections


@pytest.mark.uas("T-UAS-051")
def test_report_is_generated_from_real_test_outcomes(tmp_path) -> None:
    suite = probe_suite(tmp_path, {
        "test_probe.py": '''
        import pytest

        @pytest.mark.uas("T-UAS-042")
        def test_pass():
            assert True

        @pytest.mark.uas("T-UAS-042", "T-UAS-043")
        def test_fail():
            assert False

        @pytest.mark.uas("T-UAS-044")
        @pytest.mark.skip(reason="unavailable here")
        def test_skip():
            pass
    ''',
    })
    report = conformance_report(suite)
    rows = {row.id: row for row in report.rows}
    assert (rows["T-UAS-042"].outcome, rows["T-UAS-042"].passed, rows["T-UAS-042"].failed) == ("FAIL", 1, 1)
    assert rows["T-UAS-043"].outcome == "FAIL"
    assert rows["T-UAS-044"].outcome == "not run" and rows["T-UAS-044"].skipped == 1
    assert rows["T-UAS-045"].outcome == "no test"
    # Declared partial gaps show as "partial" with their reason, even without a test in this suite.
    assert rows["T-UAS-073"].outcome == "no test" and rows["T-UAS-073"].gap == ""
    assert rows["T-UAS-079"].outcome == "partial" and "Q: " in rows["T-UAS-079"].gap
    assert not report.ok and any("test_fail" in f for f in report.failures)
    text = report.text()
    assert "T-UAS-042  R" in text and "FAIL" in text and "Failing tests" in text
    assert "F  Full pipeline: not claimed" in text


@pytest.mark.uas("T-UAS-001", "T-UAS-051")
def test_every_applicable_reader_merger_bootstrap_compact_requirement_has_a_test() -> None:
    outcomes = run_suite(SESSIONS_TESTS, extra_args=("--collect-only",))
    marked = {rid for entry in outcomes.values() for rid in entry["ids"]}
    for cls, claim in CLASS_CLAIMS.items():
        untested = [rid for rid in claim["applicable"] if rid not in marked and rid not in claim["not_met"]]
        assert untested == [], (cls, untested)
    unmarked = [node for node, entry in outcomes.items() if not entry["ids"]
                and any(part in node for part in ("readers/", "unify/", "compact/", "validate/"))]
    assert unmarked == []


@pytest.mark.uas("T-UAS-001")
def test_claims_declare_class_scope_and_gaps_with_reasons() -> None:
    claims = all_claims()
    assert {"R", "B", "M", "Q"} <= set(claims)
    for cls, claim in claims.items():
        for reason in {**claim["partial"], **claim["not_met"]}.values():
            assert len(reason) > 20, cls
        assert set(claim["partial"]) <= set(claim["applicable"]) and set(claim["not_met"]) <= set(claim["applicable"])
    report = build_report({}, claims, "none")
    assert all(row.outcome in ("no test", "NOT MET", "partial", "not applicable") for row in report.rows)
