"""A folded entry's ``ts`` is its journal's ``recorded_at``, written as the bundle format writes an instant."""

from __future__ import annotations

import pytest

from bitexact.recording.fold import recorded_ts
from bitexact.recording.journal import JournalRecord


def _record(recorded_at: str) -> JournalRecord:
    return JournalRecord(run_id="run-1", seq=1, kind="marker", data={"note": "x"}, recorded_at=recorded_at)


@pytest.mark.parametrize(("recorded_at", "ts"), [
    ("2026-01-01T00:00:00.123456+00:00", "2026-01-01T00:00:00.123456+00:00"),
    ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00"),  # never `Z` in a ts (bundle format, Instants)
    ("2026-01-01T02:00:00+02:00", "2026-01-01T00:00:00+00:00"),
])
def test_recorded_at_becomes_a_utc_ts(recorded_at: str, ts: str) -> None:
    assert recorded_ts(_record(recorded_at)) == ts


@pytest.mark.parametrize("recorded_at", ["", "yesterday", "2026-01-01 00:00:00+00:00", "2026-01-01T00:00:00"])
def test_no_instant_a_ts_can_be_leaves_the_folds_time(recorded_at: str) -> None:
    assert recorded_ts(_record(recorded_at)) is None
