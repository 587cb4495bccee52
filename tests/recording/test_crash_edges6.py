"""kill -9 edges of the one write path (the sixth review): journals, slots and repair after a real crash.

Every crash here is a REAL subprocess killed with SIGKILL at a chosen point: an agent that says each
time a record call has returned (and holds the store's write lock, so its entries stay in their
journals), or the real CLI paused at a chosen call (it prints ``PAUSED`` and blocks reading its
stdin, a pipe). No sleeps, no timing.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

from store.pausing import bx, cli_env, kill_at, stored

from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.journal import journal_dir
from bitexact.recording.journal_slots import read_slots, slot_files

# An agent recording small entries into journal slots while it holds the store's write lock (as a
# stopped writer would), so every entry whose call returned is only in its slot; killed with SIGKILL.
AGENT = r"""
import fcntl, os, sys, time
import bitexact
from bitexact import config

count = int(sys.argv[1])
with bitexact.run(name="killed", journal_small=True) as r:
    r.record("marker", {"note": "start"}).result(60)
    print(f"run {r.run_id}", flush=True)
    fd = os.open(config.home() / "bitexact.db.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    for n in range(count):
        r.record("marker", {"note": f"entry {n}", "n": n})
        print(f"returned {n}", flush=True)
    print("ready", flush=True)
    time.sleep(600)
"""


def _killed_agent(home: Path, count: int) -> tuple[str, list[int]]:
    """Run the agent until every one of ``count`` calls returned, SIGKILL it; its run id and the calls that returned."""
    script = home.parent / "slots_agent.py"
    script.write_text(AGENT)
    home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, str(script), str(count)], env=cli_env(home), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run_id, returned = "", []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("run "):
                run_id = line.split()[1]
            elif line.startswith("returned "):
                returned.append(int(line.split()[1]))
            elif line.strip() == "ready":
                break
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(60)
    assert run_id and returned == list(range(count)), proc.stderr.read() if proc.stderr else ""
    return run_id, returned


def _ns(home: Path, run_id: str) -> list[int]:
    return [e["data"]["n"] for e in stored(home, run_id) if e["kind"] == "marker" and "n" in e.get("data", {})]


def test_a_repair_under_another_host_key_never_deletes_the_slots_of_returned_calls(home: Path) -> None:
    """A slot that does not open under the host key in force was taken for a torn write ("its call never
    returned") and discarded with its slots file, though it was sealed whole under another host key (an
    operator's shell without the agent's BITEXACT_HOST_KEY): every entry whose call returned was then
    deleted for good, while a journal file in the same case is named unreadable and kept."""
    run_id, returned = _killed_agent(home, 4)
    assert slot_files(journal_dir(home, run_id)), "the entries wait in the run's slots file"
    other = home.parent / "other.host.key"
    other.write_text(secrets.token_hex(32) + "\n")
    other.chmod(0o600)
    env = {**cli_env(home), "BITEXACT_HOST_KEY": str(other)}
    wrong = subprocess.run([str(Path(sys.executable).with_name("bitexact")), "repair", run_id, "--by", "ops",
                            "--note", "agent died"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in wrong.stderr, wrong.stderr
    right = bx(home, "repair", run_id, "--by", "ops", "--note", "agent died, with the host key")
    assert right.returncode == 0, right.stdout + right.stderr
    assert _ns(home, run_id) == returned, (
        f"calls {returned} returned; after a repair under another host key, then one under the run's own,"
        f" the chain holds {_ns(home, run_id)}")


# An agent that forks a worker (which records nothing and outlives it), then records into its slots
# while holding the store's write lock; the test kills the agent with SIGKILL and leaves the worker.
FORKING_AGENT = r"""
import fcntl, os, sys, time
import bitexact
from bitexact import config

with bitexact.run(name="forking", journal_small=True) as r:
    r.record("marker", {"note": "start"}).result(60)
    print(f"run {r.run_id}", flush=True)
    worker = os.fork()
    if worker == 0:
        time.sleep(600)  # a pool worker, say: it records nothing and runs on after its parent dies
        os._exit(0)
    print(f"worker {worker}", flush=True)
    fd = os.open(config.home() / "bitexact.db.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    for n in range(3):
        r.record("marker", {"note": f"entry {n}", "n": n})
        print(f"returned {n}", flush=True)
    print("ready", flush=True)
    time.sleep(600)
"""


def test_a_worker_forked_by_a_killed_agent_does_not_keep_repair_refused(home: Path) -> None:
    """A child forked while the run was open inherited the descriptor of the run's live lock (flock), so
    after the agent was killed with SIGKILL the lock stayed held by a process that records nothing:
    `bitexact repair` refused ("still being recorded by a live process") for as long as the worker lived,
    and the entries whose calls had returned stayed out of the chain."""
    script = home.parent / "forking_agent.py"
    script.write_text(FORKING_AGENT)
    home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, str(script)], env=cli_env(home), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run_id, worker, returned = "", 0, []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("run "):
                run_id = line.split()[1]
            elif line.startswith("worker "):
                worker = int(line.split()[1])
            elif line.startswith("returned "):
                returned.append(int(line.split()[1]))
            elif line.strip() == "ready":
                break
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(60) == -signal.SIGKILL
        assert worker and returned == [0, 1, 2], proc.stderr.read() if proc.stderr else ""
        repaired = bx(home, "repair", run_id, "--by", "ops", "--note", "agent died")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
        if worker:
            os.kill(worker, signal.SIGKILL)  # our grandchild: not waitable here, reaped by init
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert _ns(home, run_id) == returned, f"calls {returned} returned; the chain holds {_ns(home, run_id)}"


def test_a_redaction_waits_for_the_journals_a_killed_repair_kept_so_no_copy_outlives_it(home: Path) -> None:
    """A `bitexact repair` killed after folding the slots of a killed agent (before its repair entry, which
    is when journals go) keeps the slots file. A `bitexact redact` of a folded entry's value then completed
    (claim, removal, exit 0), yet the slot still opened to the destroyed value (`bitexact capture journal
    FILE#N --show` printed it) until a later repair. A claim is now refused while the run has journals not
    folded into its chain, naming the repair; after the repair the redaction leaves no copy."""
    run_id, _ = _killed_agent(home, 2)
    kill_at(home, "bitexact.recording.fold:record_repair", "before",
            ["repair", run_id, "--by", "ops", "--note", "agent died"])
    (step,) = [e["step"] for e in stored(home, run_id) if e["kind"] == "marker" and e["data"].get("n") == 0]
    refused = bx(home, "redact", run_id, "--field", f"{step}:note", "--by", "dpo", "--reason", "erasure request")
    assert refused.returncode != 0 and "not folded into its chain" in refused.stderr, refused.stdout + refused.stderr
    assert "bitexact repair" in refused.stderr and "Traceback" not in refused.stderr
    assert not [e for e in stored(home, run_id) if e["kind"] == "redaction"]  # no claim landed
    assert bx(home, "repair", run_id, "--by", "ops", "--note", "agent died").returncode == 0
    done = bx(home, "redact", run_id, "--field", f"{step}:note", "--by", "dpo", "--reason", "erasure request")
    assert done.returncode == 0, done.stdout + done.stderr
    host_key = load_host_key(home, create=False)
    directory = journal_dir(home, run_id)
    copies = [slot.name for path in slot_files(directory) for slot in read_slots(path, host_key)
              if slot.record is not None and "entry 0" in json.dumps(slot.record.data)]
    assert not copies, f"step {step}:note was redacted, but {copies} still open to the destroyed value"
