"""Sessions as evidence (`bitexact import session`, `bitexact sessions conformance`): regression tests,
each for a bug the seventh review found."""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.sessions.conformance import conformance_report

# --------------------------------------------------------------------------- conformance report (T-UAS-051)


@pytest.mark.uas("T-UAS-051")
def test_conformance_report_of_a_missing_test_directory_is_an_error_not_an_empty_pass(tmp_path: Path) -> None:
    """docs/sessions-readers.md: "a suite that cannot run at all is one error line and exit 2". With no
    tests/sessions to run (an installed package, run outside a checkout), pytest stopped on the missing
    path, the plugin still wrote an empty result, and the report said ok: "generated from 0 tests",
    every requirement "no test", exit 0."""
    with pytest.raises(RuntimeError, match="missing"):
        conformance_report(tmp_path / "missing")
