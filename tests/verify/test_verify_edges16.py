"""What an independent verifier's author found around our verifier (the sixteenth audit).

A verdict line that a bundle's own text split in two; ``verify_lines`` fed ``str.splitlines()``; a hash-only
field opened after a store redaction removed it; an export killed mid-write leaving its temporary for good.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bitexact.evidence.verify import Pins, verify_bundle, verify_lines
from bitexact.private_files import STALE_AFTER_S, sweep_stale_temporaries, write_whole
from cli.real_command import command_env, run_bitexact

from .conftest import sample_run
from .producer import to_jsonl

_FORGED = "2\nOK: run-1 - 6 steps (observed 2 / asserted 4 / synthetic 0), chain verified, sealed, signed"


def test_a_line_break_in_the_bundle_never_splits_the_verdict_line(tmp_path: Path) -> None:
    run = sample_run(None, seal=False)
    run.append("run_end", {"steps": _FORGED})
    verdict = verify_bundle(run.bundle(), Pins())
    escaped = _FORGED.replace("\n", "\\n")
    assert verdict.line == f"FAIL: step 5: run_end seal attests {escaped} steps but was sealed at 6"
    assert verdict.message == f"step 5: run_end seal attests {_FORGED} steps but was sealed at 6"  # unescaped

    path = tmp_path / "forged.json"
    path.write_text(json.dumps(run.bundle()), encoding="utf-8")
    done = run_bitexact(tmp_path / "home", "verify", str(path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [verdict.line]  # one line: `tail -1` and `grep ^OK:` are not fooled


def test_verify_lines_takes_a_whole_text_and_splits_it_at_line_feeds_only() -> None:
    run = sample_run(None, seal=False)
    # A value holding characters str.splitlines() splits at, which canonical JSON writes raw.
    run.append("marker", {"note": "one\u2028two\u2029three\x85four\x1cfive"})
    run.seal()
    text = to_jsonl(run.bundle()).decode("utf-8")
    assert "\u2028" in text  # canonical JSON writes it raw
    whole = verify_lines(text, Pins())
    assert whole.ok, whole.line
    assert verify_lines(text.encode("utf-8"), Pins()).line == whole.line
    assert verify_lines(text.split("\n"), Pins()).line == whole.line
    # What the docs now warn of: splitlines() cuts a canonical string in two.
    assert verify_lines(text.splitlines(), Pins()).line.startswith("FAIL: line ")


_HASH_ONLY_AGENT = r'''
import bitexact
@bitexact.record_tool(custody={"result.holder": "hash-only"})
def lookup(policy):
    return {"policy": policy, "holder": "Jane Roe"}
with bitexact.run(name="open") as r:
    lookup("HX-1")
print(r.run_id)
'''


def test_a_hash_only_field_redacted_from_the_store_is_not_opened(tmp_path: Path) -> None:
    home = tmp_path / "home"
    key = tmp_path / "capture.key"
    assert run_bitexact(home, "capture", "keygen", "-o", str(key)).returncode == 0
    env = command_env(home, BITEXACT_CAPTURE_KEY=str(key))
    made = subprocess.run([sys.executable, "-c", _HASH_ONLY_AGENT], env=env, capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    run_id = made.stdout.strip()
    candidate = tmp_path / "candidate.json"
    candidate.write_text('"Jane Roe"')
    opening = ("verify", run_id, "--open", "1:result.holder", "--candidate-file", str(candidate), "--by", "carol")
    assert run_bitexact(home, *opening, BITEXACT_CAPTURE_KEY=str(key)).returncode == 0  # a match, before

    redacted = run_bitexact(home, "redact", run_id, "--field", "1:result.holder", "--by", "dpo:alice",
                            "--reason", "erasure request 118", BITEXACT_CAPTURE_KEY=str(key))
    assert redacted.returncode == 0, redacted.stderr
    assert "note: 1:result.holder was hash-only: its keyed commitment stays in the chain" in redacted.stderr
    refused = run_bitexact(home, *opening, "--json", BITEXACT_CAPTURE_KEY=str(key))
    assert refused.returncode == 1
    error = json.loads(refused.stdout)["error"]
    assert error.startswith(f"step 1: result.holder was redacted from the store (`bitexact redaction status {run_id}`")
    assert "can still test guesses with other tools" in error


def _stale(directory: Path, pid: int) -> Path:
    left = directory / f".bx-{pid}-0123456789ab.tmp"
    left.write_bytes(b"half a bundle")
    old = time.time() - STALE_AFTER_S - 60
    os.utime(left, (old, old))
    return left


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)  # exited: nothing runs under it (unless reused at once, then kept: harmless)
    left = _stale(tmp_path, dead_pid)
    fresh = tmp_path / f".bx-{dead_pid}-ba9876543210.tmp"
    fresh.write_bytes(b"being written")  # touched just now: a writer in another pid namespace may own it
    mine = _stale(tmp_path, os.getpid())  # this process runs: its temporary is never taken
    other = tmp_path / ".bx-0123456789abcdef.tmp"  # the older name form, or anyone else's: not ours to judge
    other.write_bytes(b"x")
    os.utime(other, (0, 0))

    write_whole(tmp_path / "out.json", b"{}")
    assert not left.exists()
    assert fresh.exists() and mine.exists() and other.exists()
    assert (tmp_path / "out.json").read_bytes() == b"{}"
    assert sweep_stale_temporaries(tmp_path) == []  # nothing else is stale


def test_an_export_killed_mid_write_leaves_a_temporary_the_next_export_removes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = tmp_path / "exports"
    out.mkdir()
    demo = run_bitexact(home, "demo", "--json")
    assert demo.returncode == 0, demo.stderr
    run_id = json.loads(demo.stdout)["run_id"]
    # A killed export, as it is on disk: its process gone, its temporary untouched since.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child.kill()
    child.wait()
    left = _stale(out, child.pid)
    exported = run_bitexact(home, "export", run_id, "-o", str(out / "b.json"))
    assert exported.returncode == 0, exported.stderr
    assert sorted(p.name for p in out.iterdir()) == ["b.json"]
    assert not left.exists()
