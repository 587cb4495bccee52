"""A process that outlives a `bitexact keys rotate` in another process signs with the new key.

An agent's SDK keeps one write path per data directory for its whole life. It used to keep the recorder key
it first read too: after `keys rotate --compromised` it went on signing every run's checkpoints with the
destroyed key, runs it started afterwards included, and those runs failed against the new trust file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cli.real_command import BITEXACT, command_env, run_bitexact

_ROTATING_AGENT = r'''
import json, subprocess, sys
import bitexact

def rotate(*flags):
    done = subprocess.run([sys.argv[1], "keys", "rotate", *flags], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

with bitexact.run(name="before") as before:
    before.marker("signed by the key about to be retired as compromised")
rotate("--compromised")
with bitexact.run(name="after") as after:
    after.marker("started after the rotation")
with bitexact.run(name="across") as across:
    across.marker("before a plain rotation")
    rotate()
    across.marker("after it")
print(json.dumps({"before": before.run_id, "after": after.run_id, "across": across.run_id}))
'''

_CUT_SHORT_AGENT = r'''
import json, os, sys
from pathlib import Path
import bitexact

with bitexact.run(name="before") as before:
    before.marker("the key is still trusted")
live = bitexact.run(name="live", strict=True)
run = live.__enter__()
run.marker("recorded before the key is marked")
# `keys rotate --compromised` killed after recording the key as compromised, before replacing its file.
record = Path(os.environ["BITEXACT_HOME"]) / "keys" / "compromised.json"
record.write_text(json.dumps({"compromised": [json.loads(sys.argv[1])]}))
os.chmod(record, 0o600)
for name, step in (("start", lambda: bitexact.run(name="refused", strict=True).__enter__()),
                   ("seal", lambda: live.__exit__(None, None, None))):
    try:
        step()
        print(name, "passed")
    except Exception as exc:
        print(name, type(exc).__name__, exc)
print("live", run.run_id)
'''


def _agent(home: Path, source: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", source, *args], env=command_env(home), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _checkpoint_keys(home: Path, run_id: str, out: Path) -> list[str]:
    assert run_bitexact(home, "export", run_id, "-o", str(out)).returncode == 0
    return [checkpoint["key_id"] for checkpoint in json.loads(out.read_text())["checkpoints"]]


def _current_key(home: Path) -> dict[str, str]:
    shown = run_bitexact(home, "keys", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    [current] = [key for key in json.loads(shown.stdout) if key["status"] == "current"]
    return current


def test_runs_after_a_rotation_are_signed_by_the_new_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    first = _current_key(home)["key_id"]
    runs = json.loads(_agent(home, _ROTATING_AGENT, BITEXACT).strip().splitlines()[-1])
    keys = {key["key_id"]: key["status"] for key in json.loads(run_bitexact(home, "keys", "show", "--json").stdout)}
    assert keys[first] == "compromised"
    newest = _current_key(home)["key_id"]
    [middle] = [key_id for key_id, status in keys.items() if status == "retired"]

    assert _checkpoint_keys(home, runs["before"], tmp_path / "before.json") == [first]
    assert _checkpoint_keys(home, runs["after"], tmp_path / "after.json") == [middle]
    assert _checkpoint_keys(home, runs["across"], tmp_path / "across.json") == [newest]  # its seal's, after
    trust = tmp_path / "trust.json"
    assert run_bitexact(home, "keys", "trust-file", "-o", str(trust)).returncode == 0
    for name in ("after", "across"):
        verified = run_bitexact(home, "verify", runs[name], "--trust-file", str(trust))
        assert verified.returncode == 0, verified.stdout
    refused = run_bitexact(home, "verify", runs["before"], "--trust-file", str(trust))
    assert refused.returncode == 1
    assert refused.stdout.strip() == "FAIL: checkpoint 0: not signed by a trusted recorder key"


def test_a_key_marked_compromised_while_a_process_holds_it_signs_nothing_more(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    key = _current_key(home)
    marked = json.dumps({"key_id": key["key_id"], "public_key": key["public_key"],
                         "compromised_at": "2026-01-02T03:04:05+00:00"})
    lines = dict(line.split(" ", 1) for line in _agent(home, _CUT_SHORT_AGENT, marked).strip().splitlines())
    for name in ("start", "seal"):
        assert lines[name].startswith("RecordingError "), lines[name]
        assert (f"recorder key {key['key_id']} is recorded as compromised in {home / 'keys' / 'compromised.json'}"
                in lines[name])
        assert "run `bitexact keys rotate --compromised` to finish replacing it" in lines[name]
    live = lines["live"]
    assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0  # finished: export signs again
    assert _checkpoint_keys(home, live, tmp_path / "live.json") == []  # the seal's checkpoint was never signed
    runs = json.loads(run_bitexact(home, "runs", "--json").stdout)
    assert {run["run_id"]: run["sealed"] for run in runs}[live] is False
    assert len(runs) == 2  # the refused run was never created
    assert os.path.exists(home / "keys" / "recorder.key")
