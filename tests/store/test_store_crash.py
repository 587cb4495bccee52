"""kill -9 at random instants never loses an acknowledged write nor leaves a half-written one.

Real writer processes (several threads each, several processes, racing on
the same runs) append entries, append-with-checkpoint, add checkpoints and
custody records, pipeline entries through ``submit``, and log each write only
AFTER the store call (for a submitted entry, its ``result()``) returned. The
test kills them with SIGKILL at random moments, reopens the store and checks
every run: steps 0..n-1 contiguous, every prev links, every hash and
commitment matches its entry (no torn entry), every checkpoint covers a
stored entry, and every logged write is present and byte-identical.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from store_chain import check_chain, digest

from bitexact.store import EntryNotFoundError, open_store

HELPER = Path(__file__).with_name("store_writer_proc.py")
RUNS = ["crash-a", "crash-b", "crash-c"]
ROUNDS = 12
PROCESSES = 3
THREADS = 3


def _spawn(home: Path, acks: Path, seed: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HELPER), "crash", str(home), str(acks), str(THREADS), str(seed), *RUNS],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=HELPER.parent,
    )


def _wait_ready(proc: subprocess.Popen[str], deadline: float) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "ready" once its first write was acknowledged
    if line.strip() != "ready":
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"writer did not start: {line!r} {err[-2000:]}")
    assert time.monotonic() < deadline


def _acknowledged(acks: Path) -> dict[str, dict[tuple[str, int], set[str]]]:
    """What the writers were told was durable: kind -> (run, seq) -> digests."""
    seen: dict[str, dict[tuple[str, int], set[str]]] = defaultdict(lambda: defaultdict(set))
    for line in acks.read_text().splitlines():
        kind, run, seq, fingerprint, *how = line.split()
        seen[kind][(run, int(seq))].add(fingerprint)
        if how:
            seen[f"{kind} {how[0]}"][(run, int(seq))].add(fingerprint)
    return seen


def _check_store(home: Path, acks: Path) -> int:
    acknowledged = _acknowledged(acks)
    store = open_store(home)
    try:
        total = 0
        for run in RUNS:
            entries = list(store.entries(run))
            check_chain(entries)
            steps, head = store.head(run)
            assert steps == len(entries)
            assert head == (entries[-1]["hash"] if entries else "0" * 64)
            with pytest.raises(EntryNotFoundError):
                store.entry(run, steps)  # nothing stored past the head
            assert sum(store.run(run).kinds.values()) == steps
            checkpoints = store.checkpoints(run)
            for seq, checkpoint in enumerate(checkpoints):
                assert checkpoint["seq"] == seq
                assert 0 <= checkpoint["steps"] <= steps
                if checkpoint["steps"]:
                    assert checkpoint["head_hash"] == entries[checkpoint["steps"] - 1]["hash"], (
                        f"{run} checkpoint {seq} covers no stored entry"
                    )
            custody = store.custody(run)
            for what, stored in (("entry", entries), ("checkpoint", checkpoints), ("custody", custody)):
                for (acked_run, seq), fingerprints in acknowledged[what].items():
                    if acked_run != run:
                        continue
                    assert seq < len(stored), f"acknowledged {what} {run}:{seq} is lost"
                    # Two writers can only both be told "durable" for one slot if
                    # they wrote the same bytes; anything else would be a fork.
                    assert fingerprints == {digest(stored[seq])}, f"acknowledged {what} {run}:{seq} differs"
            total += steps
        return total
    finally:
        store.close()


@pytest.mark.slow
def test_sigkill_at_random_instants_loses_no_acknowledged_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    acks = tmp_path / "acks.log"
    acks.touch()
    store = open_store(home)
    for run in RUNS:
        store.create_run(run)
    store.close()
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    kills = 0
    before = 0
    for round_ in range(ROUNDS):
        procs = [_spawn(home, acks, round_ * PROCESSES + p) for p in range(PROCESSES)]
        deadline = time.monotonic() + 30
        for proc in procs:
            _wait_ready(proc, deadline)
        # Kill each writer at its own random instant while all are appending.
        for proc in procs:
            time.sleep(rng.uniform(0.0, 0.12))
            proc.send_signal(signal.SIGKILL)
        for proc in procs:
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == -signal.SIGKILL, f"a writer died on its own: {err[-2000:]}"
            assert "Traceback" not in err, f"a writer thread failed: {err[-2000:]}"
            kills += 1
        total = _check_store(home, acks)
        assert total > before, "no progress in a round: the writers were not writing when killed"
        before = total
    assert kills >= 30
    assert len(_acknowledged(acks)["checkpoint"]) > 0
    assert len(_acknowledged(acks)["custody"]) > 0
    assert len(_acknowledged(acks)["entry pipelined"]) > 0, "the pipelining writer never got an entry acknowledged"
