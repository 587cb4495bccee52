"""The capture verification side (clause, opening, backfill): regression tests, each for a bug a review found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.capture.backfill import plan_backfill
from bitexact.crypto import SigningKey
from bitexact.sdk.records import context_data
from bitexact.store import Store
from capture_verdict.support import (
    VISA,
    contract_key,
    policy_with,
    recorder,
)


# -- backfill ---------------------------------------------------------------------------------------


def test_backfill_of_a_context_names_only_what_the_policy_removes(store: Store, recorder_key: SigningKey) -> None:
    # A context recorded with the policy off, as the SDK builds it (name, content, content_hash, source).
    writer = recorder(store, recorder_key, "off").start()
    writer.append("context", context_data("invoice", f"card {VISA}", "upload", "blake2b-256"))
    writer.seal()
    plan = plan_backfill(store, writer.run_id, policy_with({}))  # the shipped default's rules
    assert "1:content.text" in plan.tokens
    # "name" and "source" hold nothing any detector finds: a request naming them destroys them on approval.
    assert "1:name" not in plan.tokens, plan.fields
    assert "1:source" not in plan.tokens, plan.fields


# -- verify --open / --open-withheld ---------------------------------------------------------------


def test_open_with_a_directory_as_candidate_file_exits_1_not_the_no_match_code(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path, store: Store
) -> None:
    folder = tmp_path / "candidates"
    folder.mkdir()
    result = bx("verify", contract, "--open", "2:on_behalf_of", "--candidate-file", str(folder), "--by", "alice",
                env=keyed_env)
    # Exit 2 means "tested, no match"; a candidate file that cannot be read is exit 1.
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    assert store.custody(contract) == []


@pytest.mark.parametrize("option", [("--open", "99999999999999999999:on_behalf_of"),
                                    ("--open-withheld", "99999999999999999999")])
def test_open_with_a_step_too_large_for_the_store_is_a_clear_error(
    home: Path, contract: str, keyed_env: dict[str, str], tmp_path: Path, option: tuple[str, str]
) -> None:
    from click.testing import CliRunner

    from capture_verdict.support import full_cli

    candidate = tmp_path / "c.json"
    candidate.write_text('"user:7f3a9c"')
    result = CliRunner().invoke(full_cli(), ["verify", contract, *option, "--candidate-file", str(candidate),
                                             "--by", "alice"], env={"BITEXACT_HOME": str(home), **keyed_env})
    # A user's typo is an error naming the step (exit 1), never a traceback.
    assert not (result.exception and not isinstance(result.exception, SystemExit)), repr(result.exception)
    assert result.exit_code == 1


def test_open_json_prints_json_when_the_test_cannot_be_made(
    bx: Any, contract: str, keyed_env: dict[str, str], tmp_path: Path
) -> None:
    candidate = tmp_path / "c.json"
    candidate.write_text('"x"')
    result = bx("verify", contract, "--open", "1:args", "--candidate-file", str(candidate), "--by", "alice",
                "--json", env=keyed_env)
    assert result.exit_code == 1
    answer = json.loads(result.stdout)  # the run verified: its verdict is still the output, as JSON
    assert answer["ok"] is True and answer["opening"] is None


# -- the verdict clause ----------------------------------------------------------------------------


def test_content_withheld_under_a_revoked_key_is_named_in_the_verdict(
    store: Store, recorder_key: SigningKey, tmp_path: Path
) -> None:
    from capture_verdict.support import verify_stored

    # budget_ms=1 and a MiB of digits: the scan runs out, the step's fields are withheld, and the gap keeps a
    # digest of them keyed under the capture key - which `verify --open-withheld` tests guesses against.
    policy = policy_with({"budget_ms": 1, "hash_only_key": {"file": str(contract_key(tmp_path))}})
    writer = recorder(store, recorder_key, policy).start()
    writer.append("tool_call", {"tool": "dump", "args": ["1234 " * 220_000]})
    writer.seal()
    gap = store.entry(writer.run_id, 2)["data"]["gap"]
    assert gap["cause"] == "scrub_failed" and gap["withheld"]["key_id"] == policy.key_id
    verdict = verify_stored(store, recorder_key, writer.run_id, revoked={policy.key_id: "2026-10-01"})
    assert verdict.ok
    # "A verdict names the fields committed under a revoked key: whoever holds that key can test guesses at them."
    assert "revoked key 3a9f.." in verdict.line, verdict.line
