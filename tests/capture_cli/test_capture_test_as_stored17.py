"""`capture test` prints what a real recording stores of the field (audit17 F3), and `policy show` says when
no rule scrubs.

Each case records the same text with the Python SDK in a real subprocess under the same policy, reads the
entry back from the store, and compares it with what `capture test` printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from bitexact.store import open_store
from capture_verdict.support import VISA, policy_file, write_key

CARD = f"paid with {VISA[:4]} {VISA[4:8]} {VISA[8:12]} {VISA[12:]}"

RECORD = textwrap.dedent("""
    import json, sys, bitexact
    kind, path, text, where = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    key, _, sub = path.partition(".")
    with bitexact.run(name="as-stored") as r:
        r.record(kind, {**where, key: {sub: text} if sub else text})
        print(r.run_id)
""")


def recorded(home: Path, policy: Path, kind: str, path: str, text: str, where: dict[str, Any]) -> tuple[Any, dict]:
    """The value a real SDK run stores at ``path``, and the entry's capture block's declaration of it."""
    env = {**os.environ, "BITEXACT_HOME": str(home), "BITEXACT_CAPTURE_POLICY": str(policy),
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", RECORD, kind, path, text, json.dumps(where)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip().splitlines()[-1]
    store = open_store(home)
    try:
        (entry,) = [e for e in store.entries(run_id) if e["kind"] == kind]
    finally:
        store.close()
    value: Any = entry["data"]
    for segment in path.split("."):
        value = value[segment]
    return value, (entry.get("capture") or {}).get("fields", {}).get(path, {})


@pytest.mark.parametrize(
    ("fields", "where", "mode", "stored", "rule"),
    [
        # A scrub rule: the card number is replaced, as a run replaces it.
        ([{"kind": "*", "path": "*", "mode": "scrub"}], {}, "scrub", "paid with [PAN ****1111]", 0),
        # No rules: every field kept. The detectors alone would scrub it; a run stores it whole (the audit's case).
        ([], {}, "keep", CARD, None),
        # A keep rule before a scrub rule decides the field.
        ([{"kind": "tool_call", "path": "result", "mode": "keep"}, {"kind": "*", "path": "*", "mode": "scrub"}],
         {}, "keep", CARD, 0),
        # A hash-only rule for one tool: the entry stores the placeholder and commits the value.
        ([{"kind": "tool_call", "where": {"tool": "kyc"}, "path": "result", "mode": "hash-only"},
          {"kind": "*", "path": "*", "mode": "scrub"}], {"tool": "kyc"}, "hash-only", "[hash-only]", 0),
    ],
    ids=["scrub-rule", "no-rules", "keep-rule", "hash-only-rule"],
)
def test_capture_test_prints_what_a_recording_stores(
    bx: Any, tmp_path: Path, home: Path, fields: list[dict[str, Any]], where: dict[str, Any], mode: str,
    stored: str, rule: int | None,
) -> None:
    key = write_key(tmp_path / "capture.key")
    policy = policy_file(tmp_path, {"fields": fields, "hash_only_key": {"file": str(key)}})
    env = {"BITEXACT_CAPTURE_POLICY": str(policy)}
    options = [f"--where={name}={value}" for name, value in where.items()]
    shown = bx("capture", "test", "--kind", "tool_call", "--path", "result", *options, CARD, env=env)
    assert shown.exit_code == 0, shown.stderr
    value, declared = recorded(home, policy, "tool_call", "result", CARD, where)
    assert value == stored
    assert shown.stdout == f"{value}\n"
    as_json = json.loads(bx("capture", "test", *options, CARD, "--json", env=env).stdout)  # the defaults
    assert (as_json["kind"], as_json["path"], as_json["mode"], as_json["text"]) == ("tool_call", "result", mode, value)
    assert as_json["rule"] == (None if rule is None else {"index": rule, **fields[rule]})
    # What the entry declares of the field is what capture test declares (a commitment and its nonce are fresh each time).
    assert {k: v for k, v in as_json["declared"].get("result", {}).items() if k not in ("commitment", "nonce")} == {
        k: v for k, v in declared.items() if k not in ("commitment", "nonce")}
    if rule is None:
        assert "kept as captured; no rule names it" in shown.stderr
    else:
        assert f"by rule {rule} ({fields[rule]['kind']} {fields[rule]['path']} -> {fields[rule]['mode']}" in shown.stderr


def test_a_subkey_path_and_another_kind(bx: Any, tmp_path: Path, home: Path) -> None:
    policy = policy_file(tmp_path, {"fields": [{"kind": "model", "path": "response.text", "mode": "scrub"}]})
    env = {"BITEXACT_CAPTURE_POLICY": str(policy)}
    shown = bx("capture", "test", "--kind", "model", "--path", "response.text", CARD, env=env)
    value, _ = recorded(home, policy, "model", "response.text", CARD, {})
    assert shown.stdout == f"{value}\n" == "paid with [PAN ****1111]\n"
    # The same text elsewhere in the step is no rule's: kept.
    other = bx("capture", "test", "--kind", "model", "--path", "response.other", CARD, env=env)
    assert other.stdout == f"{CARD}\n" and "no rule names it" in other.stderr


def test_a_field_a_recording_would_withhold_exits_1(bx: Any, tmp_path: Path) -> None:
    policy = policy_file(tmp_path, {"budget_ms": 1})
    source = tmp_path / "big.txt"
    source.write_text(f"{VISA} " * 400_000, encoding="utf-8")  # 6.8 MB of card numbers: past 1 ms a MiB
    shown = bx("capture", "test", "--file", str(source), "--json", env={"BITEXACT_CAPTURE_POLICY": str(policy)})
    assert shown.exit_code == 1
    as_json = json.loads(shown.stdout)
    assert as_json["mode"] == "withheld" and VISA not in shown.stdout
    assert as_json["gaps"][0]["cause"] == "scrub_failed"


def test_paths_and_where_that_name_no_field_are_usage_errors(bx: Any) -> None:
    for path in ("a.b.c", "*", "*.x", ""):
        refused = bx("capture", "test", "--path", path, "x")
        assert refused.exit_code == 2 and "--path" in refused.stderr, path
    assert bx("capture", "test", "--where", "tool", "x").exit_code == 2
    assert bx("capture", "test", "--where", "result=1", "x").exit_code == 2  # the field under test itself
    assert bx("capture", "test", "--kind", "run_meta", "x").exit_code == 2


def test_policy_show_says_when_no_rule_scrubs(bx: Any, tmp_path: Path) -> None:
    keep_all = policy_file(tmp_path, {"fields": []}, "keep.json")
    shown = bx("capture", "policy", "show", env={"BITEXACT_CAPTURE_POLICY": str(keep_all)})
    assert "no rule scrubs: every field is kept as captured" in shown.stdout
    as_json = json.loads(bx("capture", "policy", "show", "--json", env={"BITEXACT_CAPTURE_POLICY": str(keep_all)}).stdout)
    assert as_json["scrubbing_rules"] == []
    hashed = policy_file(tmp_path, {"fields": [{"kind": "identity", "path": "on_behalf_of", "mode": "hash-only"}]},
                         "hashed.json")
    shown = bx("capture", "policy", "show", env={"BITEXACT_CAPTURE_POLICY": str(hashed)})
    assert "no rule scrubs: every field no hash-only rule names is kept as captured" in shown.stdout
    default = bx("capture", "policy", "show")
    assert "no rule scrubs" not in default.stdout
    assert json.loads(bx("capture", "policy", "show", "--json").stdout)["scrubbing_rules"] == [0]
