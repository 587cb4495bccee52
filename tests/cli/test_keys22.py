"""Session 22: a key the store marks compromised never signs again, even once keys/ is restored from a backup
older than the mark; a damaged keys table does not stop `keys show` / `keys trust-file`; the compromise mark's
edges (its date kept, the message when the store is not written)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli.real_command import command_env, restore_keys, run_bitexact, run_json

_AGENT = r'''
import json, sys
import bitexact

out = {}
for strict in (False, True):
    try:
        with bitexact.run(name="after-restore", strict=strict) as r:
            r.marker("recorded after keys/ was restored")
        out[str(strict)] = {"run_id": r.run_id, "gaps": [[g.cause, g.detail] for g in r.failures.gaps]}
    except Exception as exc:
        out[str(strict)] = {"raised": type(exc).__name__, "message": str(exc)}
print(json.dumps(out))
'''


def _agent(home: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _AGENT], env=command_env(home), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _checkpoint_keys(home: Path, run_id: str, out: Path) -> list[str]:
    exported = run_bitexact(home, "export", run_id, "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    return [checkpoint["key_id"] for checkpoint in json.loads(out.read_text())["checkpoints"]]


def _leaked_current(tmp_path: Path) -> tuple[Path, str, str]:
    """A home where a run was recorded, `keys rotate --compromised` replaced its key, and keys/ was then restored
    from a backup older than that rotation: the leaked key is the current key file again. Returns the home, the
    leaked key's id and the id of a run it signed before the rotation."""
    home = tmp_path / "home"
    demo = run_json(home, "demo")
    leaked = run_json(home, "keys", "show")[0]["key_id"]
    shutil.copytree(home / "keys", tmp_path / "backup")
    assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0
    restore_keys(home, tmp_path / "backup")
    assert not (home / "keys" / "compromised.json").exists()  # the backup predates the mark
    return home, leaked, str(demo["run_id"])


def _refusal(home: Path | None, leaked: str) -> str:
    """The refusal of the leaked key, naming its file when ``home`` is given."""
    where = f" ({home / 'keys' / 'recorder.key'})" if home is not None else ""
    return (f"recorder key {leaked}{where} is recorded as compromised in the store, but"
            " the key files hold it as the current key (keys/ restored from a backup older than the mark, or copied"
            f" from elsewhere): nothing signs with it; run `bitexact keys rotate --compromised --expect-current"
            f" {leaked}` to replace it, then hand relying parties a new trust file (`bitexact keys trust-file`)")


def test_a_leaked_key_made_current_again_by_a_restore_signs_no_run(tmp_path: Path) -> None:
    """Before: both SDK runs were recorded and their checkpoints signed by the leaked key (health said so,
    critically, but recording went on). Now a non-strict run records nothing and declares the gap, a strict
    run raises, and the message names the key and the command that replaces it."""
    home, leaked, _ = _leaked_current(tmp_path)
    runs_before = len(run_json(home, "runs"))
    out = _agent(home)
    non_strict, strict = out["False"], out["True"]
    assert non_strict["run_id"] is None
    [[cause, detail]] = non_strict["gaps"]
    assert cause == "recording_error"
    assert detail == ("the run could not start, so nothing is recorded: CompromisedCurrentKeyError: "
                      + _refusal(home, leaked))
    assert strict["raised"] == "RecordingError"
    assert strict["message"] == f"the run could not start: CompromisedCurrentKeyError: {_refusal(home, leaked)}"
    assert len(run_json(home, "runs")) == runs_before  # neither run was created
    health = json.loads(run_bitexact(home, "health", "--json").stdout)
    [lost] = [f for f in health["findings"] if f["name"] == "recorder-key-compromise-lost"]
    assert (f"It is the current key again, and nothing signs with it (no run starts, SDK runs record nothing and"
            f" declare the gap, `export` refuses): `bitexact keys rotate --compromised --expect-current {leaked}`"
            " replaces it") in lost["message"]  # it said "so runs are signed with it"
    [retired] = [f for f in health["findings"] if f["name"] == "recorder-key-retired"]
    assert ("(or copied from elsewhere). The store marks that rotation's key compromised, so nothing signs with it"
            " (no run starts, and `export` refuses) until it is replaced. Restore keys/") in retired["message"]
    assert "Runs are signed with the replaced key again" not in retired["message"]

    # The fix the message names works: a new key, and runs are recorded and signed by it.
    rotated = run_json(home, "keys", "rotate", "--compromised", "--expect-current", leaked)
    assert rotated["retired"]["key_id"] == leaked
    out = _agent(home)
    for strict_flag in ("False", "True"):
        run_id = out[strict_flag]["run_id"]
        assert run_id and out[strict_flag]["gaps"] == []
        assert set(_checkpoint_keys(home, run_id, tmp_path / f"{strict_flag}.json")) == {rotated["current"]["key_id"]}


def test_demo_and_export_refuse_the_leaked_key_and_verify_of_a_stored_run_goes_on_unsigned(tmp_path: Path) -> None:
    """Before: `bitexact demo` recorded, signed and exported with the leaked key (exit 0), and `bitexact export`
    signed a new bundle with it."""
    home, leaked, run_id = _leaked_current(tmp_path)
    demo = run_bitexact(home, "demo")
    assert demo.returncode == 1
    assert demo.stderr.strip() == f"error: {_refusal(home, leaked)}"  # session 25: the demo names the file too
    out = tmp_path / "bundle.json"
    exported = run_bitexact(home, "export", run_id, "-o", str(out))
    assert exported.returncode == 1
    assert exported.stderr.strip() == f"error: {_refusal(home, leaked)}"
    assert not out.exists()
    # The stored run still verifies (its checkpoints carry the signatures): unsigned, as on an auditor's copy.
    verified = run_json(home, "verify", run_id)
    assert verified["ok"] is True and verified["signed"] is False


def test_a_process_holding_the_key_across_the_rotation_and_the_restore_signs_nothing_more(tmp_path: Path) -> None:
    """A long-lived writer that read the key before `keys rotate --compromised` and reads the key files again
    only after keys/ was restored from before it: the files name the leaked key, not compromised; the store
    marks it. Before: its next checkpoint was signed by the leaked key.

    The backup is of hard links (as rsnapshot or `cp -al` make), and so is the restore: the key file is the very
    inode the writer read, with its size and mtime. The writer compared only those, so it did not read the key
    files again at all (a `cp -a` restore could do the same, by reusing the freed inode)."""
    import os

    from bitexact.crypto.keystore import KeyStore, RecorderKeyError
    from bitexact.recording import Recorder
    from bitexact.store import open_store

    home = tmp_path / "home"
    leaked = run_json(home, "keys", "init")["key_id"]
    backup = tmp_path / "backup"
    shutil.copytree(home / "keys", backup, copy_function=os.link)
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current(), keys=KeyStore(home))
        writer = recorder.start(name="held")
        assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0
        shutil.rmtree(home / "keys")
        shutil.copytree(backup, home / "keys", copy_function=os.link)
        try:
            writer.append("marker", {"note": "after the restore"}, force_checkpoint=True)
        except RecorderKeyError as exc:
            assert str(exc) == _refusal(home, leaked)
        else:
            raise AssertionError("the leaked key signed a checkpoint")
        assert store.run(writer.run_id).steps == 1  # the entry was not written
    finally:
        store.close()


def test_keys_show_and_trust_file_work_from_the_key_files_when_the_stores_keys_do_not_read(tmp_path: Path) -> None:
    """Before: both exited 1 ("the store ... is damaged") with a damaged keys page, so no trust file could be
    written from the key files that sign; now they list the key files' keys, and one stderr line names the
    store's problem and what is not listed."""
    from store.pages import overwrite_page, root_page

    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    rotated = run_json(home, "keys", "rotate")
    old, new = rotated["retired"]["key_id"], rotated["current"]["key_id"]
    overwrite_page(home / "bitexact.db", *root_page(home / "bitexact.db", "keys"))
    warning = (f"warning: the store's list of keys could not be read (the store at {home / 'bitexact.db'} is damaged"
               " (database disk image is malformed); the file was changed outside BitExact, or its disk failed;"
               f" restore bitexact.db from a backup): listed from the key files in {home / 'keys'} alone, so a key"
               " only the store remembers (its file gone, or a compromise mark that keys/ lost) is not listed;"
               " `bitexact health` says what else is wrong\n")
    shown = run_bitexact(home, "keys", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert [(k["key_id"], k["status"]) for k in json.loads(shown.stdout)] == [(new, "current"), (old, "retired")]
    assert shown.stderr == warning
    plain = run_bitexact(home, "keys", "show")
    assert plain.returncode == 0 and plain.stderr == warning
    assert plain.stdout.split()[:2] == ["current", new]

    trust = tmp_path / "trust.json"
    written = run_bitexact(home, "keys", "trust-file", "-o", str(trust), "--json")
    assert written.returncode == 0, written.stderr
    assert written.stderr == warning
    assert set(json.loads(written.stdout)) == {"path", "keys", "left_out"}
    assert [k["key_id"] for k in json.loads(trust.read_text())["recorder_keys"]] == [new, old]


def _store_roles(home: Path) -> dict[str, str]:
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        return dict(connection.execute("SELECT key_id, role FROM keys").fetchall())
    finally:
        connection.close()


def test_a_compromised_rotation_the_store_does_not_record_says_the_mark_is_missing_and_what_records_it(
        tmp_path: Path) -> None:
    """Before: "Only the store's list of keys missed it: the first recording signed with the key adds it
    there", which no recording does for a compromise mark. Now it says the mark is missing from the store and
    names `keys mark-compromised OLD`, which records it there."""
    home = tmp_path / "home"
    leaked = run_json(home, "keys", "init")["key_id"]
    holder = sqlite3.connect(home / "bitexact.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another program's write transaction: the store's write waits 1 s
        rotated = run_bitexact(home, "keys", "rotate", "--compromised", BITEXACT_LOCK_TIMEOUT="1")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rotated.returncode == 1
    assert "first recording signed with the key adds it there" not in rotated.stderr
    assert (f"The key files hold the rotation, and the first recording signed with the new key adds it to the store;"
            f" but the store does not hold {leaked}'s compromise mark, so keys/ restored from a backup older than now"
            f" would trust {leaked} again with no word from `bitexact health`. Once the store takes writes, run"
            f" `bitexact keys mark-compromised {leaked}`, which records the mark there (do not rotate again).\n"
            ) in rotated.stderr
    assert _store_roles(home)[leaked] == "recorder"
    marked = run_bitexact(home, "keys", "mark-compromised", leaked)
    assert marked.returncode == 0 and marked.stderr == "", marked.stderr
    assert _store_roles(home)[leaked] == "recorder-compromised"


def _compromised_at(home: Path, key_id: str) -> str:
    return str(next(k for k in run_json(home, "keys", "show") if k["key_id"] == key_id)["compromised_at"])


def test_marking_a_key_again_after_a_restore_keeps_the_first_date(tmp_path: Path) -> None:
    """Before: `keys mark-compromised` and `keys rotate --compromised` run again after keys/ was restored from a
    backup older than the mark wrote the date of the second run into keys/compromised.json."""
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    retired = run_json(home, "keys", "rotate")["retired"]["key_id"]
    current = run_json(home, "keys", "show")[0]["key_id"]
    shutil.copytree(home / "keys", tmp_path / "backup")
    first = run_json(home, "keys", "mark-compromised", retired)["compromised_at"]
    rotated = run_json(home, "keys", "rotate", "--compromised")
    first_current = _compromised_at(home, current)
    assert first_current == rotated["at"]
    restore_keys(home, tmp_path / "backup")

    again = run_json(home, "keys", "mark-compromised", retired)
    assert again["compromised_at"] == first
    rotated_again = run_json(home, "keys", "rotate", "--compromised", "--expect-current", current)
    assert rotated_again["at"] != first_current  # the rotation's own instant; the key keeps its mark's date
    assert _compromised_at(home, retired) == first and _compromised_at(home, current) == first_current
    document = json.loads((home / "keys" / "compromised.json").read_text())
    assert {item["key_id"]: item["compromised_at"] for item in document["compromised"]} == {
        retired: first, current: first_current}
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        assert dict(connection.execute("SELECT key_id, compromised_at FROM keys WHERE role = 'recorder-compromised'")
                    .fetchall()) == {retired: first, current: first_current}
    finally:
        connection.close()


def test_a_process_holding_the_new_key_keeps_it_when_the_restore_brings_the_leaked_one_back(tmp_path: Path) -> None:
    """A long-lived writer that holds the key made by `keys rotate --compromised` when keys/ is restored from
    before that rotation: the key files name the leaked key again, which the store marks; the writer keeps
    signing with the key in hand, as when a key cannot be read again. Before: it switched to the leaked key."""
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.store import open_store

    home = tmp_path / "home"
    leaked = run_json(home, "keys", "init")["key_id"]
    shutil.copytree(home / "keys", tmp_path / "backup")
    new = run_json(home, "keys", "rotate", "--compromised")["current"]["key_id"]
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current(), keys=KeyStore(home))
        writer = recorder.start(name="held")
        restore_keys(home, tmp_path / "backup")
        writer.append("marker", {"note": "after the restore"}, force_checkpoint=True)
        assert store.checkpoints(writer.run_id)[-1]["key_id"] == new != leaked
    finally:
        store.close()


def test_export_on_a_store_whose_keys_do_not_read_signs_with_the_key_file_and_says_so(tmp_path: Path) -> None:
    """Export now asks the store whether the current key is marked compromised; a damaged keys page must not
    stop a bundle of a run that reads well (it did not before that question): one warning line instead."""
    from store.pages import overwrite_page, root_page

    home = tmp_path / "home"
    run_id = str(run_json(home, "demo")["run_id"])
    key_id = run_json(home, "keys", "show")[0]["key_id"]
    overwrite_page(home / "bitexact.db", *root_page(home / "bitexact.db", "keys"))
    out = tmp_path / "bundle.json"
    exported = run_bitexact(home, "export", run_id, "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    assert exported.stderr == (
        f"warning: the store's list of keys could not be read (the store at {home / 'bitexact.db'} is damaged"
        " (database disk image is malformed); the file was changed outside BitExact, or its disk failed; restore"
        f" bitexact.db from a backup): the bundle is signed with {home / 'keys' / 'recorder.key'} unchecked against"
        " the store's compromise marks; `bitexact health` says what else is wrong\n")
    assert json.loads(out.read_text())["signature"]["key_id"] == key_id
    verified = run_json(home, "verify", run_id)
    assert verified["ok"] is True and verified["signed"] is False  # the stored run: unsigned, as on an auditor's copy
