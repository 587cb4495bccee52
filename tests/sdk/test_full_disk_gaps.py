"""A disk that fills mid-run and frees again: every call it cost is a gap declared in the failures record and in
the chain, before the run seals.

An audit filled a real disk for ten seconds under a non-strict run: hundreds of calls went unrecorded (as they must:
nothing can be written), but their gaps were written nowhere that lasts either (the record's lines and the chain's
markers failed on the same full disk and were dropped), and the run then sealed, so `verify --require-sealed` and
`bitexact health` both called it complete. Now what could not be written when declared is written as soon as the
disk takes writes again, at the latest before the seal; a run whose gaps still cannot be written is left unsealed.

The disk is a real tmpfs of 24 MiB (the `small_disk` fixture), mounted for the test (the suite runs as root, as CI does).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli.real_command import run_bitexact
from disks import fill_disk

import bitexact
from bitexact.sdk import close_stores
from bitexact.sdk.failures import read_failures
from bitexact.store import open_store

RESULT = "p" * 20_000


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")
def test_calls_lost_to_a_full_disk_are_declared_in_the_record_and_the_chain_before_the_seal(small_disk: Path) -> None:
    home = small_disk / "home"
    calls = 0
    with bitexact.run(home=home, run_id="full-disk") as r:
        for _ in range(10):
            r.record_tool_call("t", args=[calls], result=RESULT)
            calls += 1
        filler = fill_disk(small_disk)
        while not r.failures.gaps and calls < 3000:  # until the store's WAL must grow on the full disk
            r.record_tool_call("t", args=[calls], result=RESULT)
            calls += 1
        for _ in range(20):
            r.record_tool_call("t", args=[calls], result=RESULT)
            calls += 1
        assert r.failures.gaps, "the disk never refused a write: the test did not fill it"
        assert r.failures.pending > 0, "nothing could be written while the disk was full"
        filler.unlink()
        for _ in range(10):
            r.record_tool_call("t", args=[calls], result=RESULT)
            calls += 1
    close_stores()
    gaps = r.failures.gaps
    assert r.sealed and r.failures.pending == 0
    store = open_store(home)
    try:
        chain = list(store.entries("full-disk"))
    finally:
        store.close()
    recorded = [e["data"]["args"][0] for e in chain if e["kind"] == "tool_call"]
    markers = [e["data"]["gap"] for e in chain if e["kind"] == "marker" and "gap" in e["data"]]
    record = read_failures(home, "full-disk")
    missing = calls - len(recorded)
    assert missing == len(gaps) > 0
    assert len(record) == len(markers) == len(gaps)  # every gap in both, none twice
    assert sorted(g["seq"] for g in markers) == sorted(g.seq for g in gaps)
    assert {g["cause"] for g in record} == {"storage_unavailable"}
    verified = run_bitexact(home, "verify", "full-disk", "--require-sealed", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert json.loads(verified.stdout)["ok"] is True


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")
def test_a_run_whose_gaps_the_disk_never_takes_is_left_unsealed(small_disk: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    home = small_disk / "home"
    with bitexact.run(home=home, run_id="still-full") as r:
        r.record_tool_call("t", args=[0], result=RESULT)
        fill_disk(small_disk)
        calls = 1
        while not r.failures.gaps and calls < 3000:
            r.record_tool_call("t", args=[calls], result=RESULT)
            calls += 1
        assert r.failures.gaps, "the disk never refused a write: the test did not fill it"
    assert not r.sealed and r.failures.pending > 0
    assert any("left unsealed" in record.getMessage() for record in caplog.records)
