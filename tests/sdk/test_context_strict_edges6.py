"""Run lifecycle, causal context and failure modes of the Python SDK (the sixth review).

Every test here failed on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bitexact
from bitexact.sdk import RecordingError, SdkArgumentError

# -- 1. a run id given by the user names files under the data directory ----------------------------------


@pytest.mark.parametrize("run_id", ["../escaped", "../../escaped", "a/b", "a\\b", "..", "."])
def test_a_run_id_that_cannot_name_a_file_is_refused_and_writes_nothing_outside_the_data_directory(
    tmp_path: Path, run_id: str,
) -> None:
    """A run id holding a path separator or `..` started a run whose failures record
    (`failures/<run_id>.jsonl`) was written outside `failures/`, even outside the data directory."""
    home = tmp_path / "outer" / "data"
    with pytest.raises(SdkArgumentError) as refused:
        with bitexact.run(run_id=run_id, home=home, strict=True):
            pass
    assert refused.value.field == "run_id"
    with bitexact.run(run_id=run_id, home=home) as r:  # non-strict: declared, and the agent runs on
        r.record("tool_call", {"tool": "t"}, custody={"x": "not a hint"})
    assert r.run_id is None and [g.cause for g in r.failures.gaps] == ["invalid_argument"]
    assert list(r.failures.gaps[0].fields or {}) == ["run_id"]
    outside = [p for p in (tmp_path / "outer").rglob("*") if p != home and home not in p.parents]
    assert outside == []
    assert not (home / "failures").exists()
