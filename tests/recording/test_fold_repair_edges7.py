"""Journals, fold and repair edges (the seventh review): each test is a bug found and fixed.

Crashes are REAL: the real CLI paused at a chosen call in its own process and killed with SIGKILL
(tests/store/pausing.py), and a real process holding the store's write lock (tests/store/lock_holder.py).
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from store.lock_holder import held_by_another_process
from store.pausing import bx, cli_env, kill_at, stored

import bitexact
from bitexact.recording.journal import journal_dir
from bitexact.sdk.stores import close_stores


pytestmark = pytest.mark.usefixtures("sdk_home")  # the SDK records as the CLI in cli_env folds


def _other_host_key(home: Path) -> Path:
    other = home.parent / "other.host.key"
    other.write_text(secrets.token_hex(32) + "\n")
    other.chmod(0o600)
    return other


def _repair_with_key(home: Path, run_id: str, key: Path) -> subprocess.CompletedProcess[str]:
    env = {**cli_env(home), "BITEXACT_HOST_KEY": str(key)}
    return subprocess.run([str(Path(sys.executable).with_name("bitexact")), "repair", run_id, "--by", "ops",
                           "--note", "wrong key"], env=env, capture_output=True, text=True, timeout=120, check=False)


def _notes(home: Path, run_id: str) -> list[str]:
    return [e["data"]["note"] for e in stored(home, run_id) if e["kind"] == "marker" and "gap" not in e["data"]]


def test_a_repair_under_another_host_key_never_forgets_which_step_a_killed_fold_wrote(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fold killed after writing an unwritten orphan (before renaming it .folded-) leaves it .folding-<step>;
    a repair under another host key could not open it and renamed it back to a plain orphan, so the next
    repair under the run's own key wrote the entry a second time (an unwritten record is never matched)."""
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run() as r:  # noqa: SIM117 - the store is let go before the run's exit
        with held_by_another_process(home / "bitexact.db.lock"):
            handle = r.marker("only")  # the store stays locked: journaled as unwritten, a declared gap
    assert handle.gap is not None and not r.sealed and r.run_id is not None
    close_stores()
    run_id = r.run_id
    kill_at(home, "bitexact.recording.fold:_mark_folded", "before",
            ["repair", run_id, "--by", "ops", "--note", "agent died"])
    assert _notes(home, run_id) == ["only"], "the killed fold wrote the entry"
    assert any(".folding-" in p.name for p in journal_dir(home, run_id).iterdir())
    wrong = _repair_with_key(home, run_id, _other_host_key(home))
    assert "Traceback" not in wrong.stderr, wrong.stderr
    right = bx(home, "repair", run_id, "--by", "ops", "--note", "with the host key")
    assert right.returncode == 0, right.stdout + right.stderr
    assert _notes(home, run_id) == ["only"], f"the call returned once; the chain holds {_notes(home, run_id)}"


def _nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def test_an_orphan_nested_past_the_strict_readers_limit_is_refused_and_removed_not_kept_forever(home: Path) -> None:
    """The SDK journals any JSON orjson writes (up to 254 levels), but the fold read a journal's data with the
    strict reader (128 levels): an entry nested 130 deep, refused by the write path, was named `unreadable`
    and kept by every repair, so the run's journals were never all folded and every redaction of it was
    refused for good (`bitexact repair` first, which could never remove it)."""
    with bitexact.run(journal_small=True) as r:
        deep = r.record("context", {"name": "deep", "content": _nested(130)})
        r.marker("after it")
    assert deep.gap is not None and not r.sealed and r.run_id is not None
    close_stores()
    run_id = r.run_id
    done = bx(home, "repair", run_id, "--by", "ops", "--note", "agent ended with a journal left")
    assert done.returncode == 0, done.stdout + done.stderr
    left = sorted(p.name for p in journal_dir(home, run_id).iterdir()) if journal_dir(home, run_id).exists() else []
    assert left == [], f"a repair keeps {left}, so the run can never be redacted"
    (repair,) = [e for e in stored(home, run_id) if e["kind"] == "repair" and "journals" in e["data"]]
    assert "refused" in repair["data"] and "unreadable" not in repair["data"], repair["data"]
    (after,) = [e["step"] for e in stored(home, run_id) if e["data"].get("note") == "after it"]
    redact = bx(home, "redact", run_id, "--field", f"{after}:note", "--by", "dpo", "--reason", "erasure")
    assert redact.returncode == 0, redact.stdout + redact.stderr


def test_a_redaction_removes_the_folding_copy_of_an_entry_a_claim_moved_past_its_marked_step(home: Path) -> None:
    """A redaction claim landing while a repair folds moves the orphan's append one step past its
    `.folding-<step>` name; the repair killed before the `.folded-` rename kept that copy. A redaction of the
    entry (at the later step) removed only copies named for the steps it destroyed, so the `.folding-` copy
    still opened to the destroyed value (docs/sdk.md: no kept copy outlives a redaction)."""
    from sdk.test_crash_edges5 import _copies_of, _kill, _repair_paused_in_its_fold, _resume, _run_with_journaled, _until

    secret = "acct-7731-SECRET-VALUE"
    run_id = _run_with_journaled(home, [{"note": secret}])
    repair = _repair_paused_in_its_fold(home, run_id)
    try:
        assert _until(repair, "PAUSED") == "PAUSED 0"  # renamed .folding-<step>, about to append
        claim = bx(home, "redact", run_id, "--field", "1:note", "--by", "dpo", "--reason", "erasure request 1")
        assert claim.returncode == 0, claim.stdout + claim.stderr
        _resume(repair)
        assert _until(repair, "PAUSED") == "PAUSED 1"  # appended past the claim; killed before .folded-
    finally:
        _kill(repair)
    (step,) = [e["step"] for e in stored(home, run_id) if e["kind"] == "marker" and e["data"].get("note") == secret]
    done = bx(home, "redact", run_id, "--field", f"{step}:note", "--by", "dpo", "--reason", "erasure request 2")
    assert done.returncode == 0, done.stdout + done.stderr
    leaks = _copies_of(home, run_id, secret)
    assert not leaks, f"step {step}:note was redacted, but {leaks} still open to the destroyed value"


def _kill_cli_at(home: Path, env: dict[str, str], target: str, when: str, args: list[str]) -> None:
    """The real CLI under ``env``, paused at ``target`` (store/pausing.py's child), then SIGKILLed."""
    from store.pausing import CHILD

    script = home.parent / "pausing_child7.py"
    script.write_text(CHILD)
    proc = subprocess.Popen([sys.executable, str(script), target, when, "", *args], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "PAUSED", f"the child never reached {target}: {line!r}"
    finally:
        proc.kill()
        proc.communicate(timeout=60)


def test_a_repair_refused_for_another_policy_never_forgets_which_step_a_killed_fold_wrote(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repair under another capture policy than the run's is refused, but it first settled the `.folding-`
    journal a killed fold left, comparing it under the wrong policy: the entry the run's policy had scrubbed
    did not match, the journal went back to a plain orphan, and the next repair (under the run's policy, as
    the refusal asks) wrote the unwritten entry a second time."""
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY")  # the shipped default: it scrubs the card number below
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    with bitexact.run() as r:  # noqa: SIM117 - the store is let go before the run's exit
        with held_by_another_process(home / "bitexact.db.lock"):
            handle = r.marker("paid with 4111 1111 1111 1111")  # journaled as unwritten, a declared gap
    assert handle.gap is not None and not r.sealed and r.run_id is not None
    close_stores()
    run_id = r.run_id
    default = {k: v for k, v in cli_env(home).items() if k != "BITEXACT_CAPTURE_POLICY"}
    args = ["repair", run_id, "--by", "ops", "--note", "agent died"]
    _kill_cli_at(home, default, "bitexact.recording.fold:_mark_folded", "before", args)
    off = bx(home, *args)  # cli_env: BITEXACT_CAPTURE_POLICY=off, not the run's policy
    assert off.returncode != 0 and "capture policy" in off.stdout + off.stderr, off.stdout + off.stderr
    right = subprocess.run([str(Path(sys.executable).with_name("bitexact")), *args], env=default,
                           capture_output=True, text=True, timeout=120, check=False)
    assert right.returncode == 0, right.stdout + right.stderr
    paid = [e["step"] for e in stored(home, run_id) if e["kind"] == "marker" and "paid" in e["data"].get("note", "")]
    assert len(paid) == 1, f"the call returned once; the chain holds it at steps {paid}"


def test_an_orphan_too_deep_to_canonicalize_does_not_stop_the_fold_of_the_others(home: Path) -> None:
    """An orphan the SDK journaled (its JSON as orjson wrote it) nesting past canonical JSON's 128 levels,
    whose write the killed agent never attempted: looking for it in the chain canonicalized it, which raised,
    and `bitexact repair` failed every time, so the orphans after it (calls that returned) never reached the
    chain."""
    import orjson

    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.sdk.stores import recorder_for

    recorder, _ = recorder_for(home)
    writer = recorder.start(name="died")
    key = load_host_key(home)
    deep = {"name": "deep", "content": _nested(140)}
    write_journal(home, key, JournalRecord(writer.run_id, 1, "context", {}, steps_before=writer.steps),
                  data_json=orjson.dumps(deep))
    write_journal(home, key, JournalRecord(writer.run_id, 2, "marker", {}, steps_before=writer.steps),
                  data_json=orjson.dumps({"note": "after it"}))
    close_stores()
    done = bx(home, "repair", writer.run_id, "--by", "ops", "--note", "agent died")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _notes(home, writer.run_id) == ["after it"]
    (repair,) = [e for e in stored(home, writer.run_id) if e["kind"] == "repair" and "journals" in e["data"]]
    assert [name.split("-")[0] for name in repair["data"]["refused"]] == ["000000000001"], repair["data"]


def test_repair_tells_the_operator_which_journals_it_could_not_fold(home: Path) -> None:
    """A repair under another host key cannot open the run's journals: it kept them and named them only inside
    its repair entry, printing nothing but "repair recorded" (exit 0), so the operator took the run for
    repaired while entries whose calls returned were still outside its chain."""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.sdk.stores import recorder_for

    recorder, _ = recorder_for(home)
    writer = recorder.start(name="died")
    kept = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "marker", {"note": "returned"},
                                                                  steps_before=writer.steps))
    close_stores()
    wrong = _repair_with_key(home, writer.run_id, _other_host_key(home))
    assert "Traceback" not in wrong.stderr, wrong.stderr
    assert kept.name in wrong.stdout + wrong.stderr, f"the kept journal is not named: {wrong.stdout + wrong.stderr!r}"


def test_a_second_concurrent_repair_is_not_told_the_run_is_being_recorded(home: Path) -> None:
    """A repair refused because another repair holds the run's live lock (folding it) said the run "is still
    being recorded by a live process": the operator was told of a recording that had ended long before."""
    from sdk.test_crash_edges5 import _kill, _run_with_journaled, _start, _until

    run_id = _run_with_journaled(home, [{"note": "returned"}])
    first = _start(home, [{"target": "bitexact.recording.fold:_fold_held", "when": "before"}],
                   "cli", "repair", run_id, "--by", "ops:alice", "--note", "agent host died")
    try:
        assert _until(first, "PAUSED") == "PAUSED 0"  # holding the run's live lock, about to fold
        second = bx(home, "repair", run_id, "--by", "ops:bob", "--note", "agent host died")
    finally:
        _kill(first)
    assert second.returncode != 0, second.stdout
    assert "another repair" in second.stderr, second.stderr


def test_a_repair_on_a_host_with_no_host_key_records_the_acceptance_and_keeps_the_journals(home: Path) -> None:
    """A store restored on another host has no host key beside it: `bitexact repair` exited 2 ("no such
    file") before doing anything, so the operator could never record that the history ends where it does.
    Now each journal is kept and named unreadable for the missing key, and the repair is recorded."""
    from bitexact.crypto.hostkey import host_key_path, load_host_key
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.sdk.stores import recorder_for

    recorder, _ = recorder_for(home)
    writer = recorder.start(name="restored")
    kept = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "marker", {"note": "returned"},
                                                                  steps_before=writer.steps))
    close_stores()
    key = host_key_path(home)
    key.unlink()
    repaired = bx(home, "repair", writer.run_id, "--by", "ops:alice", "--note", "restored without its host key")
    assert repaired.returncode == 0, repaired.stderr
    assert kept.name in repaired.stdout, repaired.stdout  # named among the journals kept
    [repair] = [e for e in stored(home, writer.run_id) if e["kind"] == "repair"][:1]
    assert repair["data"]["unreadable"] == {kept.name: f"not opened: no host key at {key} on this host"}
    assert kept.exists() and not key.exists()  # kept for a repair with the key; no key made meanwhile


def test_a_host_key_others_can_read_still_stops_the_repair(home: Path) -> None:
    """Only a missing key is taken as no key: one that is there but loose is refused, as everywhere."""
    from bitexact.crypto.hostkey import host_key_path, load_host_key
    from bitexact.recording.journal import JournalRecord, write_journal
    from bitexact.sdk.stores import recorder_for

    recorder, _ = recorder_for(home)
    writer = recorder.start(name="loose")
    write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "marker", {"note": "n"},
                                                           steps_before=writer.steps))
    close_stores()
    host_key_path(home).chmod(0o644)
    refused = bx(home, "repair", writer.run_id, "--by", "ops:alice", "--note", "loose key")
    assert refused.returncode == 1  # a key that cannot be used: the operation fails, as in every command
    assert "let others read or write it" in refused.stderr
