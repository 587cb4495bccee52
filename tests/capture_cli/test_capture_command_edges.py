"""Edges of the capture commands, found in review: each test pins one behaviour that used to break."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import pytest
from capture_verdict.support import VISA

from bitexact.crypto.hostkey import HostKey, load_host_key
from bitexact.recording.journal import JournalRecord


@pytest.fixture(autouse=True)
def _no_host_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BITEXACT_HOST_KEY", raising=False)


def _other_key(path: Path) -> HostKey:
    secret = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secret.hex() + "\n")
    return HostKey(secret, path)


def _slots(home: Path, key: HostKey) -> tuple[Path, int]:
    from bitexact.recording.journal_slots import JournalSlots

    slots = JournalSlots(home, key, "run-slots", count=4)
    first = slots.write(JournalRecord("run-slots", 1, "tool_call", {}), json.dumps({"card": VISA}).encode())
    slots.close(remove=False)
    assert first is not None
    return slots.path, first


# -- capture keygen -----------------------------------------------------------------


def test_keygen_under_a_path_whose_parent_is_a_file_fails_cleanly(bx: Any, tmp_path: Path) -> None:
    parent = tmp_path / "not-a-dir"
    parent.write_text("x")
    try:
        result = bx("capture", "keygen", "-o", str(parent / "capture.key"))
    except OSError as exc:  # the CLI let FileExistsError escape as a traceback
        pytest.fail(f"traceback instead of an error message: {exc!r}")
    assert result.exit_code in (1, 2)
    assert "not-a-dir" in result.stderr
    assert parent.read_text() == "x"


# -- capture policy check --------------------------------------------------------------


def test_policy_check_of_a_missing_file_names_the_file_not_the_environment_variable(
    bx: Any, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.json"
    result = bx("capture", "policy", "check", str(missing), "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False
    # The user named FILE; BITEXACT_CAPTURE_POLICY is not set and is not what failed.
    assert "BITEXACT_CAPTURE_POLICY" not in document["field"]
    assert "BITEXACT_CAPTURE_POLICY" not in document["error"]


# -- capture journal -------------------------------------------------------------------


def test_journal_json_on_a_slots_file_with_no_host_key_prints_json(bx: Any, home: Path, tmp_path: Path) -> None:
    key = _other_key(tmp_path / "other.key")
    path, _ = _slots(home, key)
    assert not Path(f"{home}.host.key").exists()
    result = bx("capture", "journal", str(path), "--json")
    assert result.exit_code == 2
    document = json.loads(result.stdout)  # docs/capture.md: --json prints {"opened": false, "error": ...}
    assert document["opened"] is False and document["error"] == "no_host_key"


def test_journal_slot_output_never_replaces_its_own_slots_file(bx: Any, home: Path) -> None:
    key = load_host_key(home)
    path, first = _slots(home, key)
    before = path.read_bytes()
    result = bx("capture", "journal", f"{path}#{first}", "-o", str(path), "--force")
    assert path.read_bytes() == before, "the sealed slots file was replaced by a journal's plaintext"
    assert result.exit_code == 2 and "the journal itself" in result.stderr



@pytest.mark.parametrize(("slot", "error", "said"), [
    ("7", "no_such_slot", "has 4 slots (#0 to #3): there is no slot 7"),
    ("4", "no_such_slot", "has 4 slots (#0 to #3): there is no slot 4"),
    ("abc", "no_such_slot", "'abc' is not a slot number"),
    ("-1", "no_such_slot", "'-1' is not a slot number"),
    ("3", "empty_slot", "slot 3 of"),
])
def test_journal_names_a_slot_past_the_file_or_not_a_number_as_such(bx: Any, home: Path, slot: str, error: str,
                                                                     said: str) -> None:
    """A 4-slot file asked for `#7` said slot 7 "holds no journal (it is free)", a slot it does not have, and
    `#abc` or `#-1` said "cannot read: No such file or directory" of a path ending `.bxs#abc`."""
    path, _ = _slots(home, load_host_key(home))
    result = bx("capture", "journal", f"{path}#{slot}", "--json")
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert document["opened"] is False and document["error"] == error, document
    assert said in document["message"], document
