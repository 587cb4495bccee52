"""Folding marks, the live lock and request marks: regression tests, one bug each (found in review).

Every crash here is a REAL subprocess paused on a pipe read at a chosen point and then SIGKILLed (or
resumed); no sleeps, no timing.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bitexact.store import open_store
from store.pausing import bx, cli_env, kill_at, pause_at, stored

@pytest.fixture
def env_off(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("BITEXACT_HOST_KEY", "BITEXACT_CONTEXT", "BITEXACT_DRAIN_TIMEOUT", "BITEXACT_CAPTURE_KEY",
                 "BITEXACT_QUEUE_MAX_BYTES", "BITEXACT_REQUIRE_DUAL_CONTROL", "BITEXACT_LOCK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    home.mkdir(parents=True, exist_ok=True)
    yield home


def _run_with_journaled(home: Path, records: list[tuple[str, dict[str, Any]]]) -> str:
    """An unsealed run (run_meta + one entry) whose recording process died with ``records`` still only in
    their journal files (seq 1, 2, ...), as a killed agent leaves entries queued after their call."""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.crypto.keystore import KeyStore
    from bitexact.evidence.timefmt import now_iso
    from bitexact.recording import Recorder
    from bitexact.recording.journal import JournalRecord, write_journal

    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="died")
        writer.append("marker", {"note": "start"})
        host_key = load_host_key(home)
        for seq, (kind, data) in enumerate(records, start=1):
            write_journal(home, host_key, JournalRecord(writer.run_id, seq, kind, data, steps_before=writer.steps,
                                                        recorded_at=now_iso()))
        return writer.run_id
    finally:
        store.close()


# -- 1. a fold cut short between two identical orphans loses the second ----------------------------


def test_fold_cut_short_between_two_identical_orphans_folds_both(env_off: Path) -> None:
    """docs/sdk.md: "each stored entry answers for one orphan at most [...] So the same tool result
    recorded twice and journaled twice is folded as two entries", and a fold stopped part-way "is
    followed by one that [...] names it as written, never writing it twice". A repair killed after
    folding the first of two identical journals (renamed `.folded-<k>`) and before the second: the
    next repair names the first as written at k from its mark, and ALSO lets the second claim step k
    by content (the marked steps are still in _Written). The second entry, whose call returned, is
    never written."""
    home = env_off
    same = {"tool": "lookup", "args": {"q": "x"}, "result": {"rows": 3}}
    run_id = _run_with_journaled(home, [("tool_call", same), ("tool_call", same)])
    kill_at(home, "bitexact.recording.fold:_mark_folding", "before",
            ["repair", run_id, "--by", "ops:alice", "--note", "agent host died"], match="000000000002-")
    again = bx(home, "repair", run_id, "--by", "ops:alice", "--note", "agent host died")
    assert again.returncode == 0, again.stdout + again.stderr
    calls = [e["step"] for e in stored(home, run_id) if e["kind"] == "tool_call"]
    assert len(calls) == 2, f"two journaled calls returned; the chain after repair holds them at steps {calls}"


# -- 2. a repair that passed the live-lock check folds the journal of a recording that journals after it


LIVE_AGENT = r"""
import sys, threading
import bitexact
with bitexact.run(name="live") as r:
    r.record("marker", {"note": "one"}).result(60)  # written in the call: no journal, no live lock yet
    print(f"run {r.run_id}", flush=True)
    sys.stdin.readline()  # the operator's `bitexact repair` starts meanwhile
    gate = threading.Event()
    real = r.writer.append_each
    def slow(items, **kw):  # the background write is slow: the entry is only in its journal for now
        gate.wait()
        return real(items, **kw)
    r.writer.append_each = slow
    r.record("tool_call", {"tool": "big", "result": "x" * 1_200_000})  # journaled (live lock taken), queued
    print("returned", flush=True)
    sys.stdin.readline()  # the repair finishes meanwhile
    gate.set()
print("done", flush=True)
"""


def test_repair_racing_a_recording_that_journals_after_the_live_check_never_writes_an_entry_twice(
    env_off: Path,
) -> None:
    """docs/sdk.md: "A run being recorded holds a lock file in its journal directory (`.recording.lock`,
    flock) from its first journal to its end: `bitexact repair` of a run a live process is still
    recording is refused, since folding or removing its journals would write an entry twice".
    Before the fix, fold_orphans only probed the lock (opened, flocked and released it) and never held
    it: a recording that took the lock and journaled an entry right after the probe had that journal
    folded by the repair while its own background writer wrote it too (and the repair then unlinked the
    agent's live lock file). The entry landed twice. The repair now takes the lock and holds it for the
    whole fold, and is refused while the recording holds it."""
    home = env_off
    script = home.parent / "live_agent.py"
    script.write_text(LIVE_AGENT)
    agent = subprocess.Popen([sys.executable, str(script)], env=cli_env(home), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    repair: subprocess.Popen[str] | None = None
    try:
        assert agent.stdout is not None and agent.stdin is not None
        line = agent.stdout.readline()
        assert line.startswith("run "), f"the agent did not start: {line!r} {agent.stderr.read() if agent.stderr else ''}"
        run_id = line.split()[1]
        repair = pause_at(home, "bitexact.recording.fold:fold_orphans", "before",
                          ["repair", run_id, "--by", "ops:alice", "--note", "looked stuck"])
        agent.stdin.write("\n")
        agent.stdin.flush()
        assert agent.stdout.readline().strip() == "returned"
        assert repair.stdin is not None
        repair.stdin.write("\n")
        repair.stdin.flush()
        repair.communicate(timeout=120)  # refused or not: never a second copy of the entry
        agent.stdin.write("\n")
        agent.stdin.flush()
        out, err = agent.communicate(timeout=120)
        assert "done" in out, err[-3000:]
    finally:
        for proc in (agent, repair):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(60)
    bx(home, "repair", run_id, "--by", "ops:alice", "--note", "after the agent ended")  # folds any leftover
    bigs = [e["step"] for e in stored(home, run_id) if e["kind"] == "tool_call"]
    assert len(bigs) == 1, f"the large entry was recorded once; the chain holds it at steps {bigs}"


# -- 3. a redaction leaves the destroyed value in a `.folding-<step>` journal a killed repair kept ---


def test_a_redaction_leaves_no_copy_in_a_folding_journal_a_killed_repair_kept(env_off: Path) -> None:
    """docs/sdk.md: "A store redaction removes the kept copies (`.folded-<step>`) of the steps it destroys
    values in", so that a redacted value never comes back. A repair killed after the fold's append and
    before its `.folded-` rename leaves the journal as `<name>.folding-<step>`, holding the same entry
    at the same step. discard_folded removes only `.folded-` names: after the redaction completes (exit
    0), the `.folding-` journal still opens to the destroyed value."""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import JournalError, journal_dir, read_journal

    home = env_off
    secret = "acct-7731-SECRET-VALUE"
    run_id = _run_with_journaled(home, [("marker", {"note": secret})])
    kill_at(home, "bitexact.recording.fold:_mark_folded", "before",
            ["repair", run_id, "--by", "ops:alice", "--note", "agent host died"])
    (step,) = [e["step"] for e in stored(home, run_id) if e["kind"] == "marker" and e["data"].get("note") == secret]
    done = bx(home, "redact", run_id, "--field", f"{step}:note", "--by", "dpo", "--reason", "erasure request")
    assert done.returncode == 0, done.stdout + done.stderr
    assert all("note" not in e.get("data", {}) for e in stored(home, run_id) if e["step"] == step)
    host_key = load_host_key(home, create=False)
    leaks = []
    for path in sorted(journal_dir(home, run_id).iterdir()):
        try:
            record = read_journal(path, host_key)
        except JournalError:
            continue
        if secret in repr(record.data):
            leaks.append(path.name)
    assert not leaks, f"step {step}:note was redacted, but {leaks} still hold the destroyed value"


# -- 4. the same request object sent again is never recorded again ---------------------------------


@pytest.fixture
def sdk_off(env_off: Path) -> Iterator[Path]:
    from bitexact.sdk.stores import close_stores

    yield env_off
    close_stores()


def _http_calls(run_id: str | None) -> list[dict[str, Any]]:
    from bitexact.sdk.stores import recorder_for

    assert run_id is not None
    recorder, _ = recorder_for()
    return [e for e in recorder.store.entries(run_id) if e["kind"] == "http_call"]


def test_an_httpx_request_sent_twice_is_recorded_twice(sdk_off: Path) -> None:
    """docs/sdk.md: "inside a run each exchange is recorded once [...] the mark is on the request
    object". claim_request adds the request to a WeakSet and never takes it out when its exchange ends,
    so a second exchange of the same object (an agent's retry loop calling client.send(request) again)
    reaches the server and is not recorded at all: the mark meant "a layer is recording this exchange
    now" but outlives the exchange. Here the server sees two POSTs; the run holds one http_call."""
    import httpx
    from sdk.servers import serve

    import bitexact

    with serve() as server:
        with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
            request = client.build_request("POST", server.base_url + "/v1/chat", json={"model": "m", "n": 1})
            assert client.send(request).status_code == 200
            assert client.send(request).status_code == 200  # the agent's retry of the same request
        sent = len(server.requests)
    assert sent == 2
    assert len(_http_calls(r.run_id)) == 2, "two exchanges reached the server; each must be an http_call"


def test_a_requests_prepared_request_sent_in_a_second_run_is_recorded_there(sdk_off: Path) -> None:
    """Same fault through requests: a PreparedRequest sent in one run stays marked, so sending it again
    (session.send(prep)) inside a later run records nothing into that run."""
    import requests
    from sdk.servers import serve

    import bitexact

    with serve() as server, requests.Session() as session:
        bitexact.wrap(session)
        prep = session.prepare_request(requests.Request("GET", server.base_url + "/json"))
        with bitexact.run() as first:
            assert session.send(prep).status_code == 200
        with bitexact.run() as second:
            assert session.send(prep).status_code == 200
    assert len(_http_calls(first.run_id)) == 1
    assert len(_http_calls(second.run_id)) == 1, "the exchange in the second run reached the server unrecorded"
