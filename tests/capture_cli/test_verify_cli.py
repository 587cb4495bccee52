"""`bitexact verify`: the capture clause and scope line, and `--open` / `--open-withheld` with their exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture_verdict import fixtures as _contract_fixtures

from bitexact.canon import canonicalize
from bitexact.crypto import SigningKey
from bitexact.evidence.verify import verify_cli
from bitexact.store import Store
from capture_verdict.support import (
    CONTRACT,
    CONTRACT_POLICY,
    policy_file,
    policy_with,
    recorder,
    write_key,
)

# The contract's fixtures, taken into this module, where pytest finds them.
keyed_env = _contract_fixtures.keyed_env
contract = _contract_fixtures.contract


@pytest.mark.parametrize("fmt", ["json", "jsonl", "dsse"])
def test_the_clause_and_scope_line_in_every_bundle_form(
    bx: Any, contract: str, tmp_path: Path, fmt: str, keyed_env: dict[str, str]
) -> None:
    bundle = tmp_path / f"run.{fmt}"
    assert bx("export", contract, "-o", str(bundle), "--format", fmt).exit_code == 0
    plain = verify_cli(str(bundle)).line  # the verifier with no clause: what any conforming verifier prints
    result = bx("verify", str(bundle), env=keyed_env)
    assert result.exit_code == 0
    # Bundle spec §12.3: exactly one line on stdout; the contract's scope line goes to stderr.
    assert result.stdout == plain + CONTRACT["example_clause"] + "\n"
    assert result.stderr == CONTRACT["scope_line"] + "\n"
    as_json = json.loads(bx("verify", str(bundle), "--json").stdout)
    assert as_json["scope_lines"] == [CONTRACT["scope_line"]]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "dsse"])
def test_a_bundle_with_no_capture_blocks_prints_exactly_what_it_printed_before(
    bx: Any, store: Store, recorder_key: SigningKey, tmp_path: Path, fmt: str
) -> None:
    writer = recorder(store, recorder_key, "default").start()
    writer.append("tool_call", {"tool": "lookup", "args": ["HX-20931"], "result": {"ok": True}})
    writer.seal()
    bundle = tmp_path / f"run.{fmt}"
    assert bx("export", writer.run_id, "-o", str(bundle), "--format", fmt).exit_code == 0
    result = bx("verify", str(bundle))
    assert result.exit_code == 0 and result.stdout == verify_cli(str(bundle)).line + "\n"
    stored = bx("verify", writer.run_id)
    assert stored.stdout.count("\n") == 1 and stored.stdout.startswith("OK: ")


def test_a_failing_bundle_prints_no_scope_line(bx: Any, contract: str, tmp_path: Path) -> None:
    bundle = tmp_path / "run.json"
    bx("export", contract, "-o", str(bundle))
    doc = json.loads(bundle.read_text())
    doc["entries"][1]["capture"]["fields"]["args"]["found"]["pan"] = 1
    bundle.write_text(json.dumps(doc))
    result = bx("verify", str(bundle))
    assert result.exit_code == 1 and result.stdout.startswith("FAIL: ") and result.stdout.count("\n") == 1


def test_a_revoked_key_in_the_policy_in_force_names_the_fields(
    bx: Any, contract: str, tmp_path: Path
) -> None:
    key_id = CONTRACT["test_key_3a9f"]["key_id"]
    doc = {**CONTRACT_POLICY, "hash_only_key": {"file": str(tmp_path / "key-3a9f.key")},
           "revoked_keys": {key_id: "2026-10-01"}}
    env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, doc, name="revoked.json"))}
    result = bx("verify", contract, env=env)
    first = result.stdout.splitlines()[0]
    assert first.endswith(", 1 field committed under revoked key 3a9f.. (guessable by its holder from 2026-10-01:"
                          " 2:on_behalf_of)")


def test_open_exits_0_on_a_match_and_2_on_none_and_records_each_test(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path, store: Store
) -> None:
    good = tmp_path / "candidate.json"
    good.write_text('"user:7f3a9c"\n')
    bad = tmp_path / "guess.json"
    bad.write_text('"user:000000"\n')
    matched = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(good), "--by", "alice",
                 env=keyed_env)
    assert matched.exit_code == 0, matched.stderr
    lines = matched.stdout.splitlines()
    assert lines[0].startswith("OK: ") and matched.stderr.splitlines()[0] == CONTRACT["scope_line"]
    assert lines[1].startswith("MATCH: the candidate is step 2 on_behalf_of")
    missed = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(bad), "--by", "bob",
                env=keyed_env)
    assert missed.exit_code == 2 and missed.stdout.splitlines()[-1].startswith("NO MATCH: ")
    records = store.custody(contract)
    assert [(r["principal"], r["role"], r["step"], r["path"]) for r in records] == [
        ("alice", "verify", 2, "on_behalf_of"), ("bob", "verify", 2, "on_behalf_of")]
    assert all(r["key_id"] == CONTRACT["test_key_3a9f"]["key_id"] for r in records)
    as_json = json.loads(bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(good),
                            "--by", "carol", "--json", env=keyed_env).stdout)
    assert as_json["ok"] and as_json["opening"]["matched"] is True and as_json["opening"]["custody_seq"] == 2


def test_open_refusals_exit_1_and_record_nothing(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path, store: Store
) -> None:
    candidate = tmp_path / "c.json"
    candidate.write_text('"x"')
    not_json = tmp_path / "raw.txt"
    not_json.write_text("user:7f3a9c")
    cases = [
        ("--open", "1:args", "--candidate-file", str(candidate), "--by", "alice"),           # a scrub, not hash-only
        ("--open", "2:on_behalf_of", "--candidate-file", str(candidate)),                   # no --by
        ("--open", "2:on_behalf_of", "--by", "alice"),                                      # no candidate
        ("--open", "2:on_behalf_of", "--candidate-file", str(not_json), "--by", "alice"),   # not JSON
        ("--open", "2:on_behalf_of", "--candidate-file", str(tmp_path / "none"), "--by", "a"),  # unreadable
        ("--open", "two:x", "--candidate-file", str(candidate), "--by", "alice"),
        ("--open", "2:on_behalf_of", "--open-withheld", "3", "--candidate-file", str(candidate), "--by", "a"),
        ("--open-withheld", "two", "--candidate-file", str(candidate), "--by", "alice"),
        ("--open-withheld", "-1", "--candidate-file", str(candidate), "--by", "alice"),
    ]
    for args in cases:
        result = bx("verify", contract, *args, env=keyed_env)
        assert result.exit_code == 1, (args, result.stdout, result.stderr)
    other = {**CONTRACT_POLICY, "hash_only_key": {"file": str(write_key(tmp_path / "other.key"))}}
    other_env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, other, name="other.json"))}
    no_key = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(candidate), "--by", "a",
                env=other_env)
    assert no_key.exit_code == 1 and "which the policy in force does not hold" in no_key.stderr
    assert store.custody(contract) == []


def test_open_needs_a_run_in_the_store_that_verifies(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path, store: Store
) -> None:
    candidate = tmp_path / "c.json"
    candidate.write_text('"user:7f3a9c"')
    bundle = tmp_path / "run.json"
    bx("export", contract, "-o", str(bundle))
    from_file = bx("verify", str(bundle), "--open", "2:on_behalf_of", "--candidate-file", str(candidate),
                   "--by", "a", env=keyed_env)
    assert from_file.exit_code == 1 and "a run in the store" in from_file.stderr
    failing = bx("verify", contract, "--require-sealed", "--expect-key", "00" * 32, "--open", "2:on_behalf_of",
                 "--candidate-file", str(candidate), "--by", "a", env=keyed_env)
    assert failing.exit_code == 1 and failing.stdout.startswith("FAIL: ")
    assert store.custody(contract) == []


def test_a_field_committed_with_no_key_can_never_be_opened(
    bx: Any, store: Store, recorder_key: SigningKey, keyed_env: dict[str, str], tmp_path: Path
) -> None:
    writer = recorder(store, recorder_key, policy_with(CONTRACT_POLICY)).start()
    writer.append("identity", {"principal": "svc", "on_behalf_of": "user:1"})
    candidate = tmp_path / "c.json"
    candidate.write_text('"user:1"')
    result = bx("verify", writer.run_id, "--open", "1:on_behalf_of", "--candidate-file", str(candidate),
                "--by", "alice", env=keyed_env)
    assert result.exit_code == 1 and "it can never be opened" in result.stderr
    assert "1 field hash-only (never held; 1 can never be opened)" in result.stdout
    assert store.custody(writer.run_id) == []


def test_open_withheld_tests_the_files_exact_bytes(
    bx: Any, home: Path, keyed_env: dict[str, str], tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bitexact
    from bitexact.sdk import close_stores

    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", keyed_env["BITEXACT_CAPTURE_POLICY"])
    with bitexact.run(name="gap", home=home) as r:
        r.identity(principal="svc:x", on_behalf_of_type="human")  # refused: no on_behalf_of; withheld in a gap
        run_id = r.run_id
    close_stores()
    exact = tmp_path / "exact.json"
    exact.write_bytes(canonicalize({"on_behalf_of_type": "human"}))
    spaced = tmp_path / "spaced.json"
    spaced.write_bytes(b'{"on_behalf_of_type": "human"}')
    matched = bx("verify", run_id, "--open-withheld", "2", "--candidate-file", str(exact), "--by", "alice",
                 env=keyed_env)
    assert matched.exit_code == 0, matched.stderr
    assert "MATCH: the candidate is the content the gap at step 2 withheld" in matched.stdout
    missed = bx("verify", run_id, "--open-withheld", "2", "--candidate-file", str(spaced), "--by", "alice",
                env=keyed_env)
    assert missed.exit_code == 2
    assert [r["event"] for r in store.custody(run_id)] == ["open-withheld", "open-withheld"]
    not_a_gap = bx("verify", run_id, "--open-withheld", "1", "--candidate-file", str(exact), "--by", "alice",
                   env=keyed_env)
    assert not_a_gap.exit_code == 1


def test_open_verifies_the_stored_run_even_when_a_file_shares_its_name(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--open tests a stored run's field: a file named like the run in the working directory (here one
    that is not a bundle at all) used to be what was verified."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / contract).write_text("not a bundle\n")
    candidate = tmp_path / "candidate.json"
    candidate.write_text('"user:7f3a9c"\n')
    result = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(candidate), "--by", "alice",
                env=keyed_env)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].startswith("OK: ")
