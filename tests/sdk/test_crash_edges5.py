"""kill -9 edges (the fifth review): an operator's crash recovery that did not finish, fixed.

Every crash here is a REAL subprocess paused at a chosen call (it prints ``PAUSED <n>`` and blocks
reading its stdin, a pipe) and then SIGKILLed or resumed. No sleeps, no timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from store.pausing import bx, cli_env, kill_at, stored

from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.journal import JournalError, journal_dir, read_journal

# A child that installs one or more pauses (each fires once, at the first call whose arguments' repr
# holds its ``match``), then runs either the real CLI or an agent script.
CHILD = r'''
import importlib, json, sys
pauses, mode, rest = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3:]

def install(number, target, when, match):
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
            sys.stdout.write(f"PAUSED {number}\n"); sys.stdout.flush(); sys.stdin.readline()
        out = real(*a, **k)
        if hit and when == "after":
            sys.stdout.write(f"PAUSED {number}\n"); sys.stdout.flush(); sys.stdin.readline()
        return out

    setattr(owner, attr, paused)

for number, pause in enumerate(pauses):
    install(number, pause["target"], pause["when"], pause.get("match", ""))
if mode == "cli":
    from bitexact.cli import cli
    cli.main(args=rest, prog_name="bitexact")
else:
    with open(rest[0]) as source:
        exec(compile(source.read(), rest[0], "exec"), {"__name__": "__main__"})
'''


def _start(home: Path, pauses: list[dict[str, str]], mode: str, *rest: str) -> subprocess.Popen[str]:
    script = home.parent / "review5_child.py"
    script.write_text(CHILD)
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, str(script), json.dumps(pauses), mode, *rest], env=cli_env(home),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _repair_paused_in_its_fold(home: Path, run_id: str) -> subprocess.Popen[str]:
    """A `bitexact repair` child that pauses (PAUSED 0) once it renamed a journal ``.folding-<step>``, and
    again (PAUSED 1) after the append, before the ``.folded-`` rename."""
    return _start(home, [{"target": "bitexact.recording.fold:_mark_folding", "when": "after"},
                         {"target": "bitexact.recording.fold:_mark_folded", "when": "before"}],
                  "cli", "repair", run_id, "--by", "ops:alice", "--note", "agent host died")


def _until(proc: subprocess.Popen[str], prefix: str) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(prefix):
            return line.strip()
    proc.kill()
    _, err = proc.communicate(timeout=60)
    pytest.fail(f"the child ended before {prefix!r}: {err[-3000:]}")


def _resume(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(60)


def _copies_of(home: Path, run_id: str, value: str) -> list[str]:
    """Files in the run's journal directory that still open to ``value``."""
    host_key = load_host_key(home, create=False)
    directory = journal_dir(home, run_id)
    found = []
    for path in sorted(directory.iterdir()) if directory.is_dir() else []:
        try:
            record = read_journal(path, host_key)
        except JournalError:
            continue
        if value in json.dumps(record.data):
            found.append(path.name)
    return found


def _run_with_journaled(home: Path, records: list[dict[str, Any]]) -> str:
    """An unsealed run (run_meta + a marker) whose recording process died with ``records`` (markers) only in
    their journal files, as a killed agent leaves entries queued after their calls returned."""
    from bitexact.crypto.keystore import KeyStore
    from bitexact.evidence.timefmt import now_iso
    from bitexact.recording import Recorder
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.store import open_store

    home.mkdir(parents=True, exist_ok=True)
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="died")
        writer.append("marker", {"note": "start"})
        host_key = load_host_key(home)
        for seq, data in enumerate(records, start=1):
            write_journal(home, host_key, JournalRecord(writer.run_id, seq, "marker", data,
                                                        steps_before=writer.steps, recorded_at=now_iso()))
        return writer.run_id
    finally:
        store.close()


# -- 1. `redact --resume` after a redaction killed once its values were removed leaves the kept copies ------


def test_redact_resume_after_a_kill_before_the_kept_copies_went_removes_them(home: Path) -> None:
    """docs/sdk.md: "A store redaction removes the kept copies (`.folded-` and `.folding-<step>`) of the steps
    it destroys values in", and docs/store.md: a redaction killed part-way is finished by
    `bitexact redact --resume RUN`. A repair killed after folding a journal keeps it as
    `<name>.folded-<step>` (until a repair entry names it). `bitexact redact` of that step is then killed
    after the value was removed from the store and before apply_pending reached discard_folded. The resume
    finds no claim pending (`nothing pending`, exit 0) and so never calls discard_folded: the kept journal
    still opens to the destroyed value (`bitexact capture journal FILE --show` prints it)."""
    secret = "acct-7731-SECRET-VALUE"
    run_id = _run_with_journaled(home, [{"note": secret}])
    kill_at(home, "bitexact.recording.fold:_mark_folded", "after",
            ["repair", run_id, "--by", "ops:alice", "--note", "agent host died"])
    (step,) = [e["step"] for e in stored(home, run_id) if e["kind"] == "marker" and e["data"].get("note") == secret]
    assert _copies_of(home, run_id, secret), "the killed repair kept the folded journal"
    kill_at(home, "bitexact.recording.audit:discard_folded", "before",
            ["redact", run_id, "--field", f"{step}:note", "--by", "dpo", "--reason", "erasure request"])
    assert all("note" not in e.get("data", {}) for e in stored(home, run_id) if e["step"] == step), \
        "the value was removed from the store before the kill"
    resumed = bx(home, "redact", run_id, "--resume")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    leaks = _copies_of(home, run_id, secret)
    assert not leaks, (f"after `redact --resume` ({resumed.stdout.strip()!r}), step {step}:note is redacted in the"
                       f" store but {leaks} still open to the destroyed value")


# -- 2. a fold whose append lands past the step it marked writes an unwritten journal twice after a kill ----

def _run_with_an_unwritten_journal(home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An SDK run: a marker written in the call, then the marker 'first' recorded while another process held
    the store, so journaled `unwritten` for `bitexact repair` (run.py:_write_failed); left unsealed."""
    from store.lock_holder import held_by_another_process

    import bitexact
    from bitexact.sdk.stores import close_stores

    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run(name="busy") as r:
        r.record("marker", {"note": "start", "account": "ACCT-1"}).result(60)
        with held_by_another_process(home / "bitexact.db.lock"):
            handle = r.marker("first")
        assert handle.gap is not None and handle.gap.journal, "the marker must be a journaled gap"
    assert not r.sealed and r.run_id is not None
    close_stores()
    monkeypatch.delenv("BITEXACT_LOCK_TIMEOUT")
    return r.run_id


def test_a_repair_killed_after_an_append_that_a_redaction_moved_never_writes_an_unwritten_journal_twice(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/sdk.md: "Before a fold writes a journal file's entry it renames the file
    `<name>.folding-<step>` (the step the entry is about to take) [...] a fold stopped part-way, by the store
    or by kill -9 between the two, is followed by one that reads which it was (the entry at that step,
    compared by content) and names it as written, never writing it twice."

    The fold names the step from its writer's head read when it attached. An operator's `bitexact redact`
    of another field (a claim is an entry at the head) lands between the rename and the fold's append:
    RunWriter._write meets a moved head, rebuilds, and the orphan lands one step later than its
    `.folding-<step>` name says. A kill before the `.folded-` rename leaves the wrong step on disk; the next
    repair finds the redaction claim at that step, calls the journal unwritten, and (since an `unwritten`
    journal is never looked up in the chain) writes the same entry a second time."""
    run_id = _run_with_an_unwritten_journal(home, monkeypatch)
    repair = _repair_paused_in_its_fold(home, run_id)
    try:
        assert _until(repair, "PAUSED") == "PAUSED 0"  # renamed .folding-<step>, about to append
        redacted = bx(home, "redact", run_id, "--field", "1:account", "--by", "dpo", "--reason", "erasure request")
        assert redacted.returncode == 0, redacted.stdout + redacted.stderr
        _resume(repair)
        assert _until(repair, "PAUSED") == "PAUSED 1"  # appended; killed before the .folded- rename
    finally:
        _kill(repair)
    again = bx(home, "repair", run_id, "--by", "ops:alice", "--note", "agent host died")
    assert again.returncode == 0, again.stdout + again.stderr
    firsts = [e["step"] for e in stored(home, run_id) if e["kind"] == "marker" and e["data"].get("note") == "first"]
    assert len(firsts) == 1, f"the marker 'first' was recorded once; after the repairs the chain holds it at {firsts}"
