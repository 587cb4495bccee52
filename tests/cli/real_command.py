"""The real `bitexact` console script, run in its own process against a data directory of the test's."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BITEXACT = str(Path(sys.executable).parent / "bitexact")
_PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def record_kept_run(home: Path) -> str:
    """A sealed run ``kept`` of one tool call recorded in ``home`` through the SDK, its stores closed (so a command
    run next opens the store as a new process would); its id."""
    import bitexact
    from bitexact.sdk import close_stores

    with bitexact.run(home=home, run_id="kept") as r:
        r.record_tool_call("t", args=[1], result="ok")
    close_stores()
    assert r.sealed
    return "kept"


def command_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any BITEXACT_* setting or proxy, with ``home`` and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_") and k.lower() not in _PROXIES}
    env.update({"BITEXACT_HOME": str(home), "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"})
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def run_bitexact(home: Path, *args: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    """``bitexact ARGS`` against ``home`` (stdout and stderr are pipes, not terminals)."""
    return subprocess.run([BITEXACT, *args], check=False, env=command_env(home, **extra), capture_output=True,
                          text=True, encoding="utf-8", errors="replace", timeout=120, cwd=cwd)



def run_json(home: Path, *args: str, code: int = 0) -> Any:
    """``bitexact ARGS --json`` against ``home``, which must exit ``code``: its document."""
    done = run_bitexact(home, *args, "--json")
    assert done.returncode == code, (done.stdout, done.stderr)
    return json.loads(done.stdout)


def restore_keys(home: Path, backup: Path) -> None:
    """``keys/`` restored from a backup as an operator would: the directory replaced whole."""
    shutil.rmtree(home / "keys")
    shutil.copytree(backup, home / "keys")

_KILLED_AGENT = """
import sys, bitexact
with bitexact.run(name="killed", home=sys.argv[1]) as r:
    r.marker("working")
    print(r.run_id, flush=True)
    sys.stdin.readline()   # holds the run open until the parent kills it
"""


def killed_run(home: Path) -> str:
    """A real recording into ``home`` killed with SIGKILL before its seal (its frames left in the WAL): its
    run id."""
    child = subprocess.Popen([sys.executable, "-c", _KILLED_AGENT, str(home)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=command_env(home))
    assert child.stdout is not None
    run_id = child.stdout.readline().strip()
    child.kill()
    child.wait(10)
    assert run_id
    return run_id


def demo_run(home: Path) -> str:
    """``bitexact demo`` recorded into ``home`` (the real command): the id of the run it made."""
    import json

    demo = run_bitexact(home, "demo", "--json")
    assert demo.returncode == 0, demo.stderr
    return str(json.loads(demo.stdout)["run_id"])


def clear_bitexact_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No BITEXACT_* setting of the machine's reaches an in-process command."""
    for name in list(os.environ):
        if name.startswith("BITEXACT_"):
            monkeypatch.delenv(name, raising=False)


def run_on_terminal(home: Path, *args: str, stderr_too: bool = True, **extra: str) -> tuple[int, str, str]:
    """``bitexact ARGS`` with stdout (and stderr, unless ``stderr_too`` is false) on a pseudo-terminal: its
    exit code, what the terminal got, and stderr when that was a pipe."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([BITEXACT, *args], stdin=subprocess.DEVNULL, stdout=follower,
                                stderr=follower if stderr_too else subprocess.PIPE, env=command_env(home, **extra))
    finally:
        os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end and everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    err = ""
    if proc.stderr is not None:
        err = proc.stderr.read().decode("utf-8", "replace")
        proc.stderr.close()
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace"), err
