"""`keys mark-compromised` / `keys rotate --compromised`, session 21: the mark is kept in the store too, so
restoring keys/ from a backup older than it no longer makes the leaked key trusted again with no word."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from cli.real_command import restore_keys, run_bitexact, run_json
from store.pages import overwrite_page, root_page

LOST = "recorder-key-compromise-lost"


def _findings(home: Path) -> dict[str, list[dict[str, Any]]]:
    report = json.loads(run_bitexact(home, "health", "--json").stdout)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for finding in report["findings"]:
        by_name.setdefault(finding["name"], []).append(finding)
    return by_name


def _retired_then_restored(tmp_path: Path) -> tuple[Path, str, str]:
    """A home whose retired key `old` was marked compromised, then keys/ restored from before the mark."""
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    rotated = run_json(home, "keys", "rotate")
    old, new = rotated["retired"]["key_id"], rotated["current"]["key_id"]
    shutil.copytree(home / "keys", tmp_path / "backup")
    assert run_json(home, "keys", "mark-compromised", old)["status"] == "compromised"
    restore_keys(home, tmp_path / "backup")
    assert not (home / "keys" / "compromised.json").exists()  # the backup predates the mark
    assert (home / "keys" / "retired" / f"{old}.key").exists()  # the leaked private half is back too
    return home, old, new


def test_keys_restored_from_before_a_mark_list_the_key_as_compromised_and_trust_it_not(tmp_path: Path) -> None:
    """Before: `keys show` listed the leaked key as retired, `keys trust-file` put it in the trust file (so a
    copy of it signs runs that verify), and `health` said healthy."""
    home, old, new = _retired_then_restored(tmp_path)
    shown = {k["key_id"]: k for k in run_json(home, "keys", "show")}
    assert shown[old]["status"] == "compromised" and shown[new]["status"] == "current"
    trust = tmp_path / "trust.json"
    written = run_bitexact(home, "keys", "trust-file", "-o", str(trust), "--json")
    assert written.returncode == 0, written.stderr
    assert [k["key_id"] for k in json.loads(written.stdout)["left_out"]] == [old]
    document = json.loads(trust.read_text())
    assert [k["key_id"] for k in document["recorder_keys"]] == [k["key_id"] for k in document["bundle_keys"]] == [new]
    assert (f"note: recorder key {old} was retired as compromised (the store records it;"
            f" {home / 'keys' / 'compromised.json'} does not: restore the mark with"
            f" `bitexact keys mark-compromised {old}`)") in written.stderr


def test_health_names_the_lost_mark_and_mark_compromised_restores_it(tmp_path: Path) -> None:
    home, old, _new = _retired_then_restored(tmp_path)
    health = run_bitexact(home, "health")
    assert health.returncode == 2  # critical
    lost = _findings(home)[LOST]
    assert len(lost) == 1 and lost[0]["level"] == "critical"
    assert lost[0]["details"] == {"key_id": old, "current": False, "path": str(home / "keys" / "compromised.json")}
    assert f"recorder key {old} is recorded as compromised in the store but not in" in lost[0]["message"]
    assert f"`bitexact keys mark-compromised {old}` restores the mark" in lost[0]["message"]
    # The fix health names works: the file's mark is back, the private half gone again, health quiet.
    again = run_bitexact(home, "keys", "mark-compromised", old)
    assert again.returncode == 0 and "store was not marked" not in again.stderr, again.stderr
    assert old in (home / "keys" / "compromised.json").read_text()
    assert not (home / "keys" / "retired" / f"{old}.key").exists()
    assert run_bitexact(home, "health").returncode == 0


def test_a_compromised_rotation_rolled_back_names_the_current_key_and_a_plain_rotation_keeps_the_mark(
        tmp_path: Path) -> None:
    """keys/ restored from before `keys rotate --compromised`: the leaked key is the current key again. Health
    said only recorder-key-retired (which says "if that rotation was --compromised"); now it says it was. A
    plain `keys rotate` then (the file has no mark to refuse it) must not clear the store's mark."""
    home = tmp_path / "home"
    leaked = run_json(home, "keys", "init")["key_id"]
    shutil.copytree(home / "keys", tmp_path / "backup")
    assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0
    restore_keys(home, tmp_path / "backup")
    lost = _findings(home)[LOST]
    assert lost[0]["details"]["key_id"] == leaked and lost[0]["details"]["current"] is True
    assert f"`bitexact keys rotate --compromised --expect-current {leaked}`" in lost[0]["message"]
    assert {k["key_id"]: k["status"] for k in run_json(home, "keys", "show")}[leaked] == "compromised"

    rotated = run_json(home, "keys", "rotate")
    assert rotated["retired"]["key_id"] == leaked
    shown = {k["key_id"]: k["status"] for k in run_json(home, "keys", "show")}
    assert shown[leaked] == "compromised"  # the store's mark outlived the plain rotation
    assert [f["details"]["key_id"] for f in _findings(home)[LOST]] == [leaked]
    assert run_bitexact(home, "keys", "mark-compromised", leaked).returncode == 0
    assert LOST not in _findings(home)


def test_mark_compromised_on_a_damaged_store_marks_the_file_and_says_the_store_was_not(tmp_path: Path) -> None:
    """ops20 let the mark go through beside a damaged store (the key files are what trust files read); the
    store write is best-effort then, and the command says so rather than a silent half."""
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    leaked = run_json(home, "keys", "rotate")["retired"]["key_id"]
    overwrite_page(home / "bitexact.db", *root_page(home / "bitexact.db", "keys"))
    marked = run_bitexact(home, "keys", "mark-compromised", leaked, "--json")
    assert marked.returncode == 0, marked.stderr
    assert json.loads(marked.stdout)["status"] == "compromised"
    assert leaked in (home / "keys" / "compromised.json").read_text()
    assert marked.stderr.startswith(f"note: the store was not marked (the store at {home / 'bitexact.db'} is damaged")
    assert f"Once the store is restored, run `bitexact keys mark-compromised {leaked}` again" in marked.stderr
