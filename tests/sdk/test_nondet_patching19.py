"""The nondeterminism patching (``capture_nondeterminism=True``) beside a fork and beside other patchers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

_AGENT = textwrap.dedent("""
    import json, os, threading, time
    import bitexact
    from bitexact.sdk import nondet

    inside, leave = threading.Event(), threading.Event()

    def starting_a_run():  # a thread of the parent's inside install() when the fork happens
        with nondet._lock:
            inside.set()
            leave.wait()

    threading.Thread(target=starting_a_run).start()
    inside.wait()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        with bitexact.run(name="child", capture_nondeterminism=True) as r:
            now = time.time()
        os.write(write, json.dumps({"sealed": r.sealed, "nondet": r.steps > 2}).encode())
        os._exit(0)
    os.close(write)
    leave.set()
    print(os.read(read, 4096).decode())
    os.waitpid(pid, 0)
""")


def test_a_child_forked_mid_patching_records_a_capturing_run(tmp_path: Path) -> None:
    """A child forked while another thread of its parent was inside the patching (a run starting or ending
    with capture_nondeterminism) inherited the patching's lock held, by a thread it does not have: its own
    capturing run then hung at its start, for good."""
    done = subprocess.run([sys.executable, "-c", _AGENT], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "BITEXACT_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"sealed": True, "nondet": True}


def test_a_clock_patched_and_restored_during_a_capturing_run_stays_restored(tmp_path: Path) -> None:
    """A fake clock set before a capturing run and taken back inside it (freezegun's `freeze_time` stopped
    inside the run, a test's monkeypatch undone) came back after the run: the run's exit put back what was
    there when it started, the fake, over the real clock the other patcher had restored."""
    import random
    import time

    import bitexact

    real_time, real_random = time.time, random.random
    time.time, random.random = (lambda: 0.0), (lambda: 0.5)  # the fakes, set before the run
    try:
        with bitexact.run(capture_nondeterminism=True, home=tmp_path / "home") as r:
            time.time, random.random = real_time, real_random  # the other patcher restores the real ones
            time.time()
        assert time.time is real_time and random.random is real_random
        assert r.sealed
    finally:
        time.time, random.random = real_time, real_random


def test_a_clock_patched_during_a_capturing_run_is_left_to_its_patcher(tmp_path: Path) -> None:
    """A fake clock set inside the run (freezegun started there and still running) is the other patcher's
    to undo: the run's exit no longer puts the real clock back under it."""
    import time

    import bitexact

    real_time = time.time

    def fake() -> float:
        return 0.0

    try:
        with bitexact.run(capture_nondeterminism=True, home=tmp_path / "home"):
            time.time = fake
        assert time.time is fake
    finally:
        time.time = real_time
