"""`bitexact capture policy show|check|digest`, `capture test` and `capture keygen`."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from bitexact.capture import load_policy, read_policy_file
from bitexact.crypto.keysources import load_key_file
from capture_verdict.support import CONTRACT_POLICY, IBAN, VISA, policy_file, write_key


def test_policy_show_prints_the_policy_in_force(bx: Any, tmp_path: Path) -> None:
    key = write_key(tmp_path / "k.key")
    path = policy_file(tmp_path, {
        "fields": [{"kind": "identity", "path": "principal", "mode": "hash-only", "linkable": True},
                   *CONTRACT_POLICY["fields"]],
        "hash_only_key": {"file": str(key)},
        "revoked_keys": {"3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6": "2026-10-01"},
    })
    policy = read_policy_file(path)
    result = bx("capture", "policy", "show", env={"BITEXACT_CAPTURE_POLICY": str(path)})
    assert result.exit_code == 0
    assert policy.digest in result.stdout and policy.key_id in result.stdout
    assert "identity principal -> hash-only (linkable" in result.stdout
    assert "3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6 from 2026-10-01" in result.stdout
    shown = json.loads(bx("capture", "policy", "show", "--json", env={"BITEXACT_CAPTURE_POLICY": str(path)}).stdout)
    assert shown["digest"] == policy.digest and shown["hash_only_key"] == {"key_id": policy.key_id}
    assert str(key) not in json.dumps(shown)  # a key is named by id, never by where it is kept


def test_policy_show_with_the_default_and_off(bx: Any) -> None:
    default = json.loads(bx("capture", "policy", "show", "--json").stdout)
    assert default["policy"] == "default" and default["digest"] == load_policy("default", env={}).digest
    off = bx("capture", "policy", "show", env={"BITEXACT_CAPTURE_POLICY": "off"})
    assert off.exit_code == 0 and "capture policy: off" in off.stdout


def test_an_unusable_policy_in_force_exits_1_naming_the_field(bx: Any, tmp_path: Path) -> None:
    path = policy_file(tmp_path, {"fields": [{"kind": "robot", "path": "*", "mode": "scrub"}]})
    result = bx("capture", "policy", "show", env={"BITEXACT_CAPTURE_POLICY": str(path)})
    assert result.exit_code == 1 and "fields[0].kind" in result.stderr


def test_policy_check_and_digest(bx: Any, tmp_path: Path) -> None:
    good = policy_file(tmp_path, CONTRACT_POLICY)
    checked = bx("capture", "policy", "check", str(good), "--json")
    assert checked.exit_code == 0
    assert json.loads(checked.stdout)["digest"] == read_policy_file(good).digest
    digest = bx("capture", "policy", "digest", str(good))
    assert digest.exit_code == 0 and digest.stdout == read_policy_file(good).digest + "\n"
    assert bx("capture", "policy", "digest", "pci").stdout.strip() == load_policy("pci", env={}).digest

    bad = policy_file(tmp_path, {"detectors": {"custom": [{"name": "acct", "pattern": "\\d{1,8}-\\d{1,8}"}]}},
                      name="bad.json")
    refused = bx("capture", "policy", "check", str(bad))
    assert refused.exit_code == 1 and "detectors.custom[0].pattern" in refused.stderr
    as_json = json.loads(bx("capture", "policy", "check", str(bad), "--json").stdout)
    assert as_json["ok"] is False and as_json["field"] == "detectors.custom[0].pattern"
    assert bx("capture", "policy", "digest", str(bad)).exit_code == 1
    assert bx("capture", "policy", "digest", "off").exit_code == 1
    assert bx("capture", "policy", "check", str(tmp_path / "missing.json")).exit_code == 1


def test_moving_the_key_file_keeps_the_digest_and_a_new_key_changes_it(bx: Any, tmp_path: Path) -> None:
    key = write_key(tmp_path / "k.key")
    first = policy_file(tmp_path, {"hash_only_key": {"file": str(key)}}, name="a.json")
    moved = tmp_path / "elsewhere.key"
    moved.write_bytes(key.read_bytes())
    moved.chmod(0o600)
    second = policy_file(tmp_path, {"hash_only_key": {"file": str(moved)}}, name="b.json")
    third = policy_file(tmp_path, {"hash_only_key": {"file": str(write_key(tmp_path / "new.key"))}}, name="c.json")
    digests = [bx("capture", "policy", "digest", str(p)).stdout for p in (first, second, third)]
    assert digests[0] == digests[1] != digests[2]


def test_capture_test_shows_what_the_policy_scrubs(bx: Any, tmp_path: Path) -> None:
    text = f"paid {VISA[:4]} {VISA[4:8]} {VISA[8:12]} {VISA[12:]} from {IBAN} with token=abc123def"
    result = bx("capture", "test", text)
    assert result.exit_code == 0
    assert result.stdout == "paid [PAN ****1111] from [IBAN] with token=[CREDENTIAL]\n"
    assert "3 found (credentials 1, iban 1, pan 1)" in result.stderr
    assert "-- tool_call result: scrubbed, 3 found (credentials 1, iban 1, pan 1); by rule 0 (* * -> scrub)" in result.stderr
    as_json = json.loads(bx("capture", "test", text, "--json").stdout)
    found = {"credentials": 1, "iban": 1, "pan": 1}
    assert as_json == {"policy": load_policy("default", env={}).digest, "kind": "tool_call", "path": "result",
                       "mode": "scrub", "text": "paid [PAN ****1111] from [IBAN] with token=[CREDENTIAL]",
                       "found": found, "rule": {"index": 0, "kind": "*", "path": "*", "mode": "scrub"},
                       "declared": {"result": {"mode": "scrub", "found": found, "rule": 0}}, "gaps": []}
    source = tmp_path / "log.txt"
    source.write_text("line one\ncard \u0664\u0661\u0661\u0661111111111111\n", encoding="utf-8")
    from_file = bx("capture", "test", "--file", str(source), "--json")
    assert json.loads(from_file.stdout)["text"] == "line one\ncard [PAN ****1111]\n"


def test_capture_test_input_errors(bx: Any, tmp_path: Path) -> None:
    assert bx("capture", "test").exit_code == 2
    assert bx("capture", "test", "x", "--file", str(tmp_path / "f")).exit_code == 2
    missing = bx("capture", "test", "--file", str(tmp_path / "nope.txt"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr
    binary = tmp_path / "bin"
    binary.write_bytes(b"\xff\xfe")
    assert bx("capture", "test", "--file", str(binary)).exit_code == 2


def test_capture_test_with_the_policy_off_keeps_the_text(bx: Any) -> None:
    result = bx("capture", "test", f"card {VISA}", env={"BITEXACT_CAPTURE_POLICY": "off"})
    assert result.exit_code == 0 and result.stdout == f"card {VISA}\n"


def test_keygen_makes_an_owner_only_key_and_never_overwrites(bx: Any, tmp_path: Path) -> None:
    target = tmp_path / "secrets" / "capture.key"
    made = bx("capture", "keygen", "-o", str(target), "--json")
    assert made.exit_code == 0
    key_id = json.loads(made.stdout)["key_id"]
    assert load_key_file(target).key_id == key_id
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    before = target.read_bytes()
    again = bx("capture", "keygen", "-o", str(target))
    assert again.exit_code == 1 and "refusing to overwrite" in again.stderr
    assert target.read_bytes() == before
