"""A store locked by another process: the agent's call returns within BITEXACT_LOCK_TIMEOUT, unchanged.

A recording agent shares the data directory's store with every other
recording process on the host. One of them stopped while it holds the write
lock (Ctrl-Z on an import) must cost the agent a bounded wait and a declared
gap, never a hang and never the entry: it stays journaled for `bitexact repair`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bitexact
from bitexact.recording.fold import fold_orphans
from bitexact.sdk import RecordingError
from bitexact.sdk.failures import read_failures
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries, journaled
from store.lock_holder import held_by_another_process


@pytest.fixture(autouse=True)
def _short_lock_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # Short enough to wait out in a test. The call made after the holder had exited once failed in a full run
    # (at 0.3 s, as here): it joined the wait left queued by CLM-2, whose bound had run out, before the store's
    # waiter thread had run to give back the lock the kernel gave it, and failed without asking the kernel. It
    # now takes the lock first when its own waiter has it or it is free (tests/store/test_lock_waiter28.py), so
    # no bound, however short, can run out for it: only another process's hold makes a caller wait.
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")


def test_a_call_under_a_held_lock_returns_its_value_and_the_entry_is_kept_for_repair(home: Path) -> None:
    @bitexact.record_tool
    def lookup(claim: str) -> dict[str, int]:
        return {"estimate": 3840}

    with bitexact.run() as r:
        assert lookup("CLM-1") == {"estimate": 3840}  # recorded: the store is free
        with held_by_another_process(home / "bitexact.db.lock") as (pid, _):
            assert lookup("CLM-2") == {"estimate": 3840}  # waits out the bound
            assert lookup("CLM-3") == {"estimate": 3840}  # the same holder: fails at once
        assert lookup("CLM-4") == {"estimate": 3840}  # free again: recorded in the call
    gaps = r.failures.gaps
    assert [(g.cause, g.kind) for g in gaps] == [("storage_unavailable", "tool_call")] * 2
    assert all(f"locked by process {pid}" in g.detail for g in gaps)
    assert [g["cause"] for g in read_failures(home, r.run_id)] == ["storage_unavailable"] * 2  # type: ignore[arg-type]
    assert journaled(home, r.run_id) == [g.journal for g in gaps]
    assert not r.sealed, "a run with entries left in their journals is not sealed"
    recorder, _ = recorder_for()
    fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    claims = [e["data"]["args"][0] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert sorted(claims) == ["CLM-1", "CLM-2", "CLM-3", "CLM-4"]


def test_strict_mode_raises_when_the_lock_is_held_past_the_timeout(home: Path) -> None:
    @bitexact.record_tool
    def lookup(claim: str) -> str:
        return "ok"

    with pytest.raises(RecordingError) as caught:
        with bitexact.run(strict=True):
            with held_by_another_process(home / "bitexact.db.lock"):
                lookup("CLM-1")
    assert caught.value.cause == "storage_unavailable"
    assert "BITEXACT_LOCK_TIMEOUT" in str(caught.value)
