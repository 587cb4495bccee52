"""Conformance claims and coverage (UAS 2, 9.1; T-UAS-001/002/051/052)."""

from __future__ import annotations

import re

import pytest

from bitexact.sessions import ENGINES
from bitexact.sessions import conformance_claims as claims
from uas_parser_helpers import matrices, parser_fixtures


@pytest.mark.uas("T-UAS-001")
def test_claims_name_class_engines_and_gaps() -> None:
    assert claims.CONFORMANCE_CLASS == "P"
    assert claims.ENGINES == ENGINES
    assert set(claims.CLAIMS["claimed"]) | set(claims.PARTIAL) | set(claims.NOT_MET) == set(claims.APPLICABLE)
    assert not set(claims.CLAIMS["claimed"]) & (set(claims.PARTIAL) | set(claims.NOT_MET))
    for reason in [*claims.PARTIAL.values(), *claims.NOT_MET.values(), *claims.UNSUPPORTED_MAPPINGS.values()]:
        assert isinstance(reason, str) and len(reason) > 20


@pytest.mark.uas("T-UAS-002")
def test_applicable_requirements_match_the_copied_spec_matrix() -> None:
    data = matrices()
    assert data["applicable_to_parsers"] == list(claims.APPLICABLE)
    listed = {i for row in data["requirement_matrix"] for i in row["ids"]}
    assert set(claims.APPLICABLE) - listed <= {"T-UAS-069"}  # 069 is tested through 4.3, not a 9.2 row


@pytest.mark.uas("T-UAS-051", "T-UAS-052")
def test_every_applicable_requirement_has_a_marked_test(request: pytest.FixtureRequest) -> None:
    covered: set[str] = set()
    unmarked: list[str] = []
    for item in request.session.items:
        if "sessions/parsers" not in str(item.fspath).replace("\\", "/"):
            continue
        marks = list(item.iter_markers("uas"))
        if not marks:
            unmarked.append(item.nodeid)
        for mark in marks:
            for rid in mark.args:
                assert re.fullmatch(r"T-UAS-\d{3}", rid), rid
                covered.add(rid)
    assert unmarked == []
    if len({i.nodeid for i in request.session.items}) > 5:  # full-suite run, not a -k selection
        assert set(claims.APPLICABLE) <= covered, sorted(set(claims.APPLICABLE) - covered)


@pytest.mark.uas("T-UAS-051")
def test_every_engine_of_the_fixture_matrix_has_fixtures() -> None:
    targets = {row["target"].lower() for row in matrices()["engine_fixture_matrix"]}
    have = {engine for engine, _ in parser_fixtures()}
    assert {"claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose"} <= targets
    assert set(ENGINES) <= have
