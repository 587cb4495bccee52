"""Operator defects an audit found (round 15): keys, redaction approvals, journals, -o, folds, health words.

Each test runs the real command (or the real SDK in its own process) against a data directory of its own.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from cli.real_command import demo_run, run_bitexact


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _findings(home: Path, name: str) -> list[dict[str, object]]:
    health = run_bitexact(home, "health", "--json")
    return [f for f in json.loads(health.stdout)["findings"] if f["name"] == name]


# -- 1. rotating an exposed recorder key -------------------------------------------------------------------


def test_a_rotated_key_is_retired_owner_only_whatever_mode_it_had(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    os.chmod(home / "keys" / "recorder.key", 0o644)
    rotated = run_bitexact(home, "keys", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    [retired] = (home / "keys" / "retired").glob("*.key")
    assert _mode(retired) == 0o600
    assert _mode(home / "keys" / "recorder.key") == 0o600


def test_health_reports_a_retired_key_others_may_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    assert run_bitexact(home, "keys", "rotate").returncode == 0
    [retired] = (home / "keys" / "retired").glob("*.key")
    os.chmod(retired, 0o640)
    [finding] = _findings(home, "retired-key-loose")
    key_id = retired.name.removesuffix(".key")
    assert finding["level"] == "critical"
    assert finding["details"] == {"path": str(retired), "key_id": key_id, "mode": "0640"}
    message = str(finding["message"])
    assert f"chmod 600 {retired}" in message and f"bitexact keys mark-compromised {key_id}" in message
    os.chmod(retired, 0o600)
    assert _findings(home, "retired-key-loose") == []


def test_the_loose_current_key_hint_names_rotate_compromised(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    os.chmod(home / "keys" / "recorder.key", 0o644)
    [finding] = _findings(home, "recorder-key-unusable")
    assert "`bitexact keys rotate --compromised` replaces it and leaves it out of trust files" in str(finding["message"])


def _key_ids(home: Path) -> dict[str, dict[str, str]]:
    shown = run_bitexact(home, "keys", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    return {k["key_id"]: k for k in json.loads(shown.stdout)}


def test_rotate_compromised_destroys_the_old_key_and_trust_files_leave_it_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    bundle = tmp_path / "signed-by-old.json"
    assert run_bitexact(home, "export", run_id, "-o", str(bundle)).returncode == 0
    [old_id] = _key_ids(home)
    old_public = _key_ids(home)[old_id]["public_key"]

    rotated = run_bitexact(home, "keys", "rotate", "--compromised")
    assert rotated.returncode == 0, rotated.stderr
    assert f"{old_id} retired as compromised" in rotated.stdout
    # Its private half is gone: no file under keys/ holds it; its public half and the date are kept.
    assert not list((home / "keys" / "retired").glob("*.key"))
    record = home / "keys" / "compromised.json"
    assert _mode(record) == 0o600
    [entry] = json.loads(record.read_text())["compromised"]
    assert entry["key_id"] == old_id and entry["public_key"] == old_public
    keys = _key_ids(home)
    assert keys[old_id]["status"] == "compromised" and keys[old_id]["compromised_at"] == entry["compromised_at"]
    [new_id] = [k for k, v in keys.items() if v["status"] == "current"]
    assert new_id != old_id
    shown = run_bitexact(home, "keys", "show")
    assert f"compromised {old_id}  {old_public}  since {entry['compromised_at']}" in shown.stdout

    trust = tmp_path / "trust.json"
    written = run_bitexact(home, "keys", "trust-file", "-o", str(trust))
    assert written.returncode == 0, written.stderr
    listed = json.loads(trust.read_text())
    assert [k["key_id"] for k in listed["bundle_keys"]] == [new_id] == [k["key_id"] for k in listed["recorder_keys"]]
    assert (f"recorder key {old_id} was retired as compromised at {entry['compromised_at']} and is left out: runs"
            " signed only by it no longer verify against this trust file") in written.stderr
    # What the old key signed no longer verifies against the new trust file.
    verdict = run_bitexact(home, "verify", str(bundle), "--trust-file", str(trust), "--require-sealed")
    assert verdict.returncode == 1 and "not signed by a trusted recorder key" in verdict.stdout + verdict.stderr
    # Health says nothing of the destroyed key: it is neither loose nor missing.
    health = json.loads(run_bitexact(home, "health", "--json").stdout)
    assert not [f for f in health["findings"] if f["name"].startswith(("recorder-key", "retired-key"))]


def test_mark_compromised_retires_an_already_retired_key_as_compromised(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    assert run_bitexact(home, "keys", "rotate").returncode == 0
    [retired] = (home / "keys" / "retired").glob("*.key")
    old_id = retired.name.removesuffix(".key")
    [current_id] = [k for k, v in _key_ids(home).items() if v["status"] == "current"]

    assert run_bitexact(home, "keys", "mark-compromised", current_id).returncode == 1  # rotate --compromised does it
    assert run_bitexact(home, "keys", "mark-compromised", "0123456789abcdef").returncode == 2
    marked = run_bitexact(home, "keys", "mark-compromised", old_id)
    assert marked.returncode == 0, marked.stderr
    assert not retired.exists()
    assert _key_ids(home)[old_id]["status"] == "compromised"
    first = _key_ids(home)[old_id]["compromised_at"]
    assert run_bitexact(home, "keys", "mark-compromised", old_id).returncode == 0  # again: its first date stays
    assert _key_ids(home)[old_id]["compromised_at"] == first
    trust = tmp_path / "trust.json"
    assert run_bitexact(home, "keys", "trust-file", "-o", str(trust)).returncode == 0
    assert [k["key_id"] for k in json.loads(trust.read_text())["recorder_keys"]] == [current_id]


@pytest.mark.parametrize("key_id", ["../recorder", "ABSOLUTE", "0123456789ABCDEF", "0123456789abcde"])
def test_mark_compromised_refuses_what_is_not_a_key_id_and_removes_nothing(tmp_path: Path, key_id: str) -> None:
    """The id is joined into a path: ``../recorder`` reached the current key, an absolute path another data
    directory's; both were deleted with exit 0."""
    home, other = tmp_path / "home", tmp_path / "other"
    for each in (home, other):
        assert run_bitexact(each, "keys", "init").returncode == 0
    assert run_bitexact(home, "keys", "rotate").returncode == 0
    if key_id == "ABSOLUTE":
        key_id = str(other / "keys" / "recorder")
    before = sorted(p.name for p in (home / "keys").rglob("*"))
    refused = run_bitexact(home, "keys", "mark-compromised", key_id)
    assert refused.returncode == 2, refused.stderr
    assert "is not a recorder key id" in refused.stderr
    assert sorted(p.name for p in (home / "keys").rglob("*")) == before
    assert (other / "keys" / "recorder.key").is_file()


def test_mark_compromised_refuses_a_retired_file_renamed_by_hand(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    assert run_bitexact(home, "keys", "rotate").returncode == 0
    [retired] = (home / "keys" / "retired").glob("*.key")
    renamed = retired.with_name("0123456789abcdef.key")
    retired.rename(renamed)
    refused = run_bitexact(home, "keys", "mark-compromised", "0123456789abcdef")
    assert refused.returncode == 1, refused.stderr
    assert f"holds recorder key {retired.stem}, not 0123456789abcdef" in refused.stderr
    assert renamed.is_file()
    assert not (home / "keys" / "compromised.json").exists()


def test_a_compromised_rotation_cut_short_signs_nothing_until_it_is_finished(tmp_path: Path) -> None:
    """Killed after recording the key as compromised, before the new key replaced it: the current key file
    is still there, and must not sign; the same command finishes it and keeps the first date."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    [old_id] = _key_ids(home)
    public = _key_ids(home)[old_id]["public_key"]
    at = "2026-01-02T03:04:05+00:00"
    record = home / "keys" / "compromised.json"
    record.write_text(json.dumps({"compromised": [{"key_id": old_id, "public_key": public, "compromised_at": at}]}))
    os.chmod(record, 0o600)

    exported = run_bitexact(home, "export", run_id, "-o", str(tmp_path / "b.json"))
    assert exported.returncode == 1 and "recorded as compromised" in exported.stderr
    assert "bitexact keys rotate --compromised" in exported.stderr
    assert run_bitexact(home, "keys", "rotate").returncode == 1  # a plain rotation would retire it as trusted
    finished = run_bitexact(home, "keys", "rotate", "--compromised")
    assert finished.returncode == 0, finished.stderr
    keys = _key_ids(home)
    assert keys[old_id] == {"key_id": old_id, "public_key": public, "status": "compromised", "compromised_at": at}
    assert run_bitexact(home, "export", run_id, "-o", str(tmp_path / "b.json")).returncode == 0


# -- 2. a dual-control approval killed after it is recorded, before its claim -----------------------------


def _run_with_request(home: Path, secret: str) -> str:
    """A sealed run holding ``secret`` at 1:result.account, with alice's pending request to redact it."""
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.recording.requests import file_request
    from bitexact.store import open_store

    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="cards")
        writer.append("tool_call", {"tool": "lookup", "result": {"account": secret}})
        writer.seal()
        file_request(store, writer.run_id, ["1:result.account"], by="alice", reason="erasure request 7")
        return writer.run_id
    finally:
        store.close()


def test_an_approval_killed_before_its_claim_is_reported_and_finished_by_redact_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed at the claim (after the approval's custody record): the value stayed stored while `status`
    said approved, verify passed, health said nothing and `redact --resume` said "nothing pending"."""
    from store.pausing import kill_at, stored

    home = tmp_path / "home"
    secret = "ZQX-SECRET-5150"
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    run_id = _run_with_request(home, secret)
    kill_at(home, "bitexact.recording.requests:record_claim", "before",
            ["redaction", "approve", run_id, "--by", "bob"])

    def stored_secret() -> bool:
        return secret in json.dumps(stored(home, run_id))

    assert stored_secret()
    status = run_bitexact(home, "redaction", "status", run_id)
    assert status.returncode == 0
    assert "approved, not carried out" in status.stdout
    assert f"`bitexact redact --resume {run_id}` carries it out under this approval" in status.stdout
    doc = json.loads(run_bitexact(home, "redaction", "status", run_id, "--json").stdout)
    [request] = doc["requests"]
    assert doc["unfinished"] == request["request"] and doc["finish"] == f"bitexact redact --resume {run_id}"
    assert request["status"] == "approved" and request["carried_out"] is False
    [finding] = _findings(home, "redaction-pending")
    assert finding["run_id"] == run_id and finding["details"] == {
        "fields": ["1:result.account"], "request": request["request"], "approved_by": "bob"}
    assert f"`bitexact redact --resume {run_id}` carries it out" in str(finding["message"])

    resumed = run_bitexact(home, "redact", run_id, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert (f"finished the approval of request {request['request']} (by alice, approved by bob): 1 field(s)"
            f" redacted on {run_id}") in resumed.stdout
    assert not stored_secret()
    assert run_bitexact(home, "verify", run_id).returncode == 0
    assert _findings(home, "redaction-pending") == []
    after = json.loads(run_bitexact(home, "redaction", "status", run_id, "--json").stdout)
    assert after["unfinished"] is None and after["requests"][0]["carried_out"] is True
    # The claim names the approver who approved, and the requester.
    [claim] = [e for e in stored(home, run_id) if e["kind"] == "redaction"]
    assert claim["data"]["by"] == "bob" and claim["data"]["requested_by"] == "alice"
    assert run_bitexact(home, "redact", run_id, "--resume").stdout.strip() == f"nothing pending on {run_id}"


# -- 3. `capture journal FILE` reads nothing it cannot bound ----------------------------------------------


def _journal_command(home: Path, file: Path | str, *extra: str) -> tuple[int, str]:
    """`bitexact capture journal FILE` in a process capped at 1.5 GB of address space: a command that reads
    without bound fails there (MemoryError), never starving the host."""
    import resource
    import subprocess

    from cli.real_command import BITEXACT, command_env

    from bitexact.crypto.hostkey import load_host_key

    load_host_key(home)  # this host's key exists: only the file is in question

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    done = subprocess.run([BITEXACT, "capture", "journal", str(file), *extra], env=command_env(home),
                          capture_output=True, text=True, timeout=60, preexec_fn=cap, check=False)
    return done.returncode, done.stdout + done.stderr


def _sparse(path: Path, size: int, head: bytes = b"") -> Path:
    with path.open("wb") as out:
        out.write(head)
        out.truncate(size)  # sparse: nothing is written to the disk past the head
    return path


def test_capture_journal_refuses_a_device_and_a_pipe_before_reading(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, said = _journal_command(home, "/dev/zero")
    assert code == 2 and "/dev/zero is a device, not a file" in said and "nothing was read from it" in said
    fifo = tmp_path / "journal.bxj"
    os.mkfifo(fifo)
    code, said = _journal_command(home, fifo, "--json")
    assert code == 2, said
    assert json.loads(said)["error"] == "unreadable" and "is a named pipe (FIFO), not a file" in said
    code, said = _journal_command(home, tmp_path)
    assert code == 2 and f"{tmp_path} is a directory, not a file" in said


def test_capture_journal_checks_the_magic_before_reading_the_rest(tmp_path: Path) -> None:
    """A 2 GB file that is not sealed is refused on its first bytes; before, it was read whole first."""
    big = _sparse(tmp_path / "not-a-journal.bin", 2 << 30)
    code, said = _journal_command(tmp_path / "home", big)
    assert code == 2 and "does not start with the sealed-envelope magic" in said, said


def test_capture_journal_caps_what_it_reads_at_one_gib(tmp_path: Path) -> None:
    from bitexact.crypto.sealed import MAGIC

    huge = _sparse(tmp_path / "huge.bxj", (1 << 30) + 1, MAGIC)
    code, said = _journal_command(tmp_path / "home", huge, "--json")
    assert code == 2, said
    doc = json.loads(said)
    assert doc["error"] == "too_large" and "over the 1,073,741,824 bytes (1 GiB) this command reads" in doc["message"]


# -- 4. -o never replaces the data directory's failures records ---------------------------------------------


def test_o_into_the_failures_record_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    record = home / "failures" / f"{run_id}.jsonl"
    record.parent.mkdir(mode=0o700, exist_ok=True)
    declared = b'{"at":"2026-12-01T09:00:00+00:00","cause":"storage_unavailable","detail":"x","where":"sdk"}\n'
    record.write_bytes(declared)
    for args in (["export", run_id, "-o", str(record)], ["keys", "trust-file", "-o", str(record)],
                 ["export", run_id, "-o", str(home / "failures" / "other-run.jsonl")]):
        refused = run_bitexact(home, *args)
        assert refused.returncode == 2, (args, refused.stdout)
        assert "one of BitExact's own files" in refused.stderr and "a failures record" in refused.stderr
    assert record.read_bytes() == declared
    assert not (home / "failures" / "other-run.jsonl").exists()


def test_o_where_the_failures_directory_goes_is_refused(tmp_path: Path) -> None:
    """No failures record yet: a file named `failures` would keep the SDK from ever writing one."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    assert not (home / "failures").exists()
    refused = run_bitexact(home, "export", run_id, "-o", str(home / "failures"))
    assert refused.returncode == 2 and not (home / "failures").exists()
    # exports/ and other names in the data directory stay writable.
    assert run_bitexact(home, "export", run_id, "-o", str(home / "exports" / "again.json")).returncode == 0


# -- 5. a folded entry keeps the instant it was recorded ----------------------------------------------------

_AGENT = r'''
import os, subprocess, sys
import bitexact
with bitexact.run(name="fold-ts") as r:
    r.marker("started"); r.drain()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1],'a');"
                               " fcntl.flock(f, fcntl.LOCK_EX); print(1, flush=True); time.sleep(600)",
                               os.environ["BITEXACT_HOME"] + "/bitexact.db.lock"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    holder.stdout.readline()  # the store is locked from here: the entry below is journaled, never written
    r.record_tool_call("pay", kwargs={"q": "B" * (2 << 20)}, result={"ok": True})
    r.drain(3)
    print(r.run_id, holder.pid, flush=True)
    os.kill(os.getpid(), 9)
'''


def test_a_folded_entry_gets_its_journals_recorded_at_as_ts(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    from cli.real_command import command_env
    from store.pausing import stored

    home = tmp_path / "home"
    agent = subprocess.run([sys.executable, "-c", _AGENT], env=command_env(home, BITEXACT_LOCK_TIMEOUT="1"),
                           capture_output=True, text=True, timeout=120, check=False)
    run_id, holder = agent.stdout.split()
    os.kill(int(holder), signal.SIGKILL)  # the store's lock goes with it; repair waits for it to let go
    [journal] = (home / "journals" / run_id).glob("*.bxj")
    opened = run_bitexact(home, "capture", "journal", str(journal), "--json")
    recorded_at = json.loads(opened.stdout)["sdk_entry"]["recorded_at"]

    repaired = run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "agent killed",
                            BITEXACT_LOCK_TIMEOUT="30")
    assert repaired.returncode == 0, repaired.stderr
    entries = stored(home, run_id)
    [folded] = [e for e in entries if e["kind"] == "tool_call"]
    assert folded["ts"] == recorded_at
    [fold_repair] = [e for e in entries if e["kind"] == "repair" and "journals" in e["data"]]
    assert fold_repair["data"]["recorded_at"] == {journal.name: recorded_at}
    assert fold_repair["data"]["steps"] == {journal.name: folded["step"]}
    assert fold_repair["ts"] > recorded_at  # the fold's own entry keeps the fold's time


# -- 6. health says what is true ------------------------------------------------------------------------------


def test_recording_gaps_says_where_the_gaps_are_and_that_a_repair_folded_their_entries(tmp_path: Path) -> None:
    """The store stayed locked: the gaps reached only the failures record, their entries only journals.
    Before, the message sent the operator to "the gap markers in `bitexact show RUN`" (there were none) and
    said entries "wait in its journals" even after a repair had folded them all."""
    import signal
    import subprocess
    import sys

    from cli.real_command import command_env

    home = tmp_path / "home"
    agent = subprocess.run([sys.executable, "-c", _AGENT], env=command_env(home, BITEXACT_LOCK_TIMEOUT="1"),
                           capture_output=True, text=True, timeout=120, check=False)
    run_id, holder = agent.stdout.split()
    os.kill(int(holder), signal.SIGKILL)
    for journal in (home / "journals" / run_id).iterdir():
        os.utime(journal, (0, 0))  # left long ago: no recording in progress
    record = home / "failures" / f"{run_id}.jsonl"

    [before] = _findings(home, "recording-gaps")
    said = str(before["message"])
    assert (f"None reached the chain (the store refused every write meanwhile): they are declared in {record}"
            f" only, and `bitexact show {run_id}` shows no marker for them.") in said, said
    assert f"1 entry waits in its journals: once no process records the run, `bitexact repair {run_id}" in said
    assert "gap markers in" not in said

    assert run_bitexact(home, "repair", run_id, "--by", "ops", "--note", "x", BITEXACT_LOCK_TIMEOUT="30").returncode == 0
    [after] = _findings(home, "recording-gaps")
    said = str(after["message"])
    assert "1 entry they journaled was folded into the run since, by the repair at step 3." in said, said
    assert "waits in its journals" not in said and "declared in" in said


def test_recording_gaps_names_the_markers_when_the_chain_holds_them(tmp_path: Path) -> None:
    """A gap the chain marked (the store took the marker once it let go) is named as such."""
    from bitexact.canon import canonicalize
    from bitexact.crypto.keystore import KeyStore
    from bitexact.evidence.timefmt import now_iso
    from bitexact.recording import Recorder
    from bitexact.store import open_store

    home = tmp_path / "home"
    gap = {"at": now_iso(), "cause": "storage_unavailable", "detail": "StoreBusyError: locked", "kind": "tool_call",
           "seq": 9, "where": "sdk"}
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="gaps")
        writer.append_own("marker", {"note": "recording gap: storage_unavailable", "gap": gap})  # as the SDK does
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()
    (home / "failures").mkdir(mode=0o700)
    (home / "failures" / f"{run_id}.jsonl").write_bytes(canonicalize(gap) + b"\n")
    [finding] = _findings(home, "recording-gaps")
    said = str(finding["message"])
    assert f"Each is marked in the chain: the gap markers in `bitexact show {run_id}`." in said, said
    assert "1 gap declares an entry no journal holds now" in said


def test_store_unreadable_for_a_file_that_is_no_database_says_move_it_aside(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "bitexact.db").write_bytes(os.urandom(8192))
    [finding] = _findings(home, "store-unreadable")
    said = str(finding["message"])
    assert "file is not a database" in said
    assert f"`mv {home / 'bitexact.db'} {home / 'bitexact.db'}.unreadable`" in said
    assert "never delete it" in said and "restore the store from a backup" in said


def test_capture_policy_off_says_how_to_turn_the_policy_back_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    health = run_bitexact(home, "health", "--json", BITEXACT_CAPTURE_POLICY="off")
    [finding] = [f for f in json.loads(health.stdout)["findings"] if f["name"] == "capture-policy-off"]
    said = finding["message"]
    assert "Unset BITEXACT_CAPTURE_POLICY (the shipped default policy), or set it to `pci` or a policy file" in said
    assert "`bitexact capture backfill --run RUN --by NAME`" in said
