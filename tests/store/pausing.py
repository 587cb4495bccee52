"""Real `bitexact` processes paused at a chosen call, for crash tests: no sleeps, no timing.

The child runs the real CLI with one callable wrapped so that, the first time it is called with
arguments whose repr holds ``match``, it prints ``PAUSED`` and blocks reading its stdin (a pipe)
before or after its real work. The parent then resumes it (a line on stdin) or kills it (SIGKILL).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bitexact.store import open_store

# A child that runs the bitexact CLI with one callable wrapped to pause (print PAUSED, block on stdin)
# before or after its real work, the first time it is called with arguments whose repr contains MATCH.
CHILD = r'''
import importlib, sys
target, when, match = sys.argv[1], sys.argv[2], sys.argv[3]
args = sys.argv[4:]
module_name, _, attr_path = target.partition(":")
owner = importlib.import_module(module_name)
*parents, attr = attr_path.split(".")
for name in parents:
    owner = getattr(owner, name)
real = getattr(owner, attr)
fired = []

def paused(*a, **k):
    hit = not fired and match in repr((a, k))
    if hit:
        fired.append(1)
    if hit and when == "before":
        sys.stdout.write("PAUSED\n"); sys.stdout.flush(); sys.stdin.readline()
    out = real(*a, **k)
    if hit and when == "after":
        sys.stdout.write("PAUSED\n"); sys.stdout.flush(); sys.stdin.readline()
    return out

setattr(owner, attr, paused)
from bitexact.cli import cli
cli.main(args=args, prog_name="bitexact")
'''


def cli_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": "off", "PYTHONUNBUFFERED": "1"}
    for name in ("BITEXACT_LOCK_TIMEOUT", "BITEXACT_HOST_KEY", "BITEXACT_REQUIRE_DUAL_CONTROL",
                 "BITEXACT_CONTEXT", "BITEXACT_DRAIN_TIMEOUT", "BITEXACT_CAPTURE_KEY", "BITEXACT_QUEUE_MAX_BYTES"):
        env.pop(name, None)
    return env


def pause_at(home: Path, target: str, when: str, args: list[str], match: str = "",
             env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``bitexact ARGS`` in a real process (``env``, else :func:`cli_env`) and return it once it is
    paused at ``target``."""
    script = home.parent / "pausing_child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), target, when, match, *args],
                            env=env if env is not None else cli_env(home),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "PAUSED":
        proc.kill()
        _, err = proc.communicate(timeout=60)
        pytest.fail(f"the child never reached {target} ({when}): {line!r} {err[-3000:]}")
    return proc


def resume_while_locked(home: Path, proc: subprocess.Popen[str]) -> str:
    """Let a paused ``proc`` go on while another process holds the store's write lock; its stdout and
    stderr once it ends (killed if it has not within a minute)."""
    from store.lock_holder import held_by_another_process

    try:
        with held_by_another_process(home / "bitexact.db.lock"):
            out, err = proc.communicate("\n", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    return out + err


def kill_at(home: Path, target: str, when: str, args: list[str], match: str = "") -> None:
    proc = pause_at(home, target, when, args, match)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL


def bx(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `bitexact` CLI in its own process."""
    return subprocess.run([str(Path(sys.executable).with_name("bitexact")), *args],
                          env=cli_env(home), capture_output=True, text=True, timeout=120, check=False)


def stored(home: Path, run_id: str) -> list[dict[str, Any]]:
    store = open_store(home)
    try:
        return list(store.entries(run_id))
    finally:
        store.close()
