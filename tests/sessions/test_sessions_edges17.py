"""Session import: regression tests for what the seventeenth session found left over.

The CLI tests run the real `bitexact` console script in its own process against a data directory of
their own, on real files.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from cli.real_command import BITEXACT, command_env, run_bitexact

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.sessions.evidence import import_session, read_session
from bitexact.store import open_store


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _long_log(path: Path, events: int) -> Path:
    """A Copilot-style log of ``events`` user messages."""
    lines = [json.dumps({"type": "user.message", "data": {"content": f"message {i}"}, "id": f"e{i}"})
             for i in range(events)]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- an import cut short by Ctrl-C names the run it left unsealed and the next step --------------------------


def test_an_interrupted_import_raises_keyboardinterrupt_naming_the_run_and_the_next_step(tmp_path: Path) -> None:
    """A Ctrl-C'd import said only "interrupted": the operator had to find the unsealed run themselves."""
    home, log = tmp_path / "home", _long_log(tmp_path / "log.jsonl", 600)
    keys = KeyStore(home)
    store = open_store(home)
    try:
        recorder = Recorder(store, keys.current_or_init(), keys=keys)

        def progress(done: int) -> None:
            raise KeyboardInterrupt  # as Ctrl-C between two chunks

        with pytest.raises(KeyboardInterrupt) as caught:
            import_session(recorder, read_session(log), progress=progress)
        [run] = store.runs()
        assert not run.sealed and run.steps == 257  # run_meta and the first chunk of 256
    finally:
        store.close()
    assert caught.value.__notes__ == [
        f"import of log.jsonl interrupted: run {run.run_id} was left unsealed after 257 entries; accept its"
        f" truncated history with `bitexact repair {run.run_id} --by NAME --note \"import interrupted\"` (refused"
        f" while one runs), then import again: the new run names {run.run_id} as the one it supersedes"]


def _runs_written_in(database: Path) -> int:
    """The runs with at least one entry: a run's row lands before its first entry, and a Ctrl-C between the two
    is the other case the import names ("before anything was recorded")."""
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=0.1)
        try:
            return int(connection.execute("SELECT count(*) FROM runs WHERE steps > 0").fetchone()[0])
        finally:
            connection.close()
    except sqlite3.Error:  # not created yet, or its schema not yet written
        return 0


def test_ctrl_c_during_import_exits_130_naming_the_unsealed_run(tmp_path: Path) -> None:
    home, log = tmp_path / "home", _long_log(tmp_path / "log.jsonl", 20_000)
    # As a shell starts it: SIGINT at its default disposition.
    proc = subprocess.Popen([BITEXACT, "import", "session", str(log)], env=command_env(home), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not _runs_written_in(home / "bitexact.db") and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)  # the run has entries: recording its 20,000 events takes seconds
        _out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    listed = run_bitexact(home, "runs", "--json")
    [run] = json.loads(listed.stdout)
    assert run["sealed"] is False
    said = _one_line(err)
    assert said.startswith(f"error: interrupted; import of log.jsonl interrupted: run {run['run_id']} was left"
                           " unsealed after ")
    assert f"`bitexact repair {run['run_id']} --by NAME --note \"import interrupted\"`" in said


# -- sanitize and -o leave the capture policy file in force alone -------------------------------------------


def test_sanitize_refuses_a_directory_holding_the_capture_policy_file_in_force(tmp_path: Path) -> None:
    """Only the keys were refused: a mask matching a word of the policy (a field path, a detector's name)
    rewrote it as ***, and every later recording ran under a policy that no longer loads, or keeps more."""
    tree = tmp_path / "tree"
    tree.mkdir()
    policy = tree / "policy.json"
    policy.write_text(json.dumps({"fields": {"tool_call": {"args.account": "hash-only"}}}))
    before = policy.read_bytes()
    result = run_bitexact(tmp_path / "home", "sessions", "sanitize", str(tree), "--mask", "account",
                          BITEXACT_CAPTURE_POLICY=str(policy))
    assert result.returncode == 2
    assert f"DIR: {tree} holds the capture policy file in force, {policy}" in _one_line(result.stderr)
    assert policy.read_bytes() == before


def test_o_refuses_the_capture_policy_file_in_force(tmp_path: Path) -> None:
    home = tmp_path / "home"
    policy = tmp_path / "policy.json"
    policy.write_text("{}")
    assert run_bitexact(home, "keys", "init").returncode == 0
    result = run_bitexact(home, "keys", "trust-file", "-o", str(policy), BITEXACT_CAPTURE_POLICY=str(policy))
    assert result.returncode == 2
    assert "or a capture key or the capture policy file in force; write somewhere else" in _one_line(result.stderr)
    assert policy.read_text() == "{}"


@pytest.mark.parametrize("preset", ["default", "pci", "off"])
def test_a_shipped_policy_name_is_no_file_sanitize_refuses(tmp_path: Path, preset: str) -> None:
    """A tree holding a file named like a shipped policy is sanitized: the setting names the preset."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / preset).write_text("token ghp_" + "a" * 36 + "\n")
    result = run_bitexact(tmp_path / "home", "sessions", "sanitize", str(tree), cwd=tree,
                          BITEXACT_CAPTURE_POLICY=preset)
    assert result.returncode == 0, result.stderr
