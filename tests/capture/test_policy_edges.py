"""The capture policy's loading, rules and detectors: regression tests, each for a bug a review found.

Contract: capture-controls.md; project docs: docs/capture.md.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bitexact.capture import PolicyError, apply_policy, load_policy, scrub_text
from bitexact.capture.policy import parse_policy
from bitexact.cli import cli

VISA = "4111 1111 1111 1111"


# -- 1. a custom pattern the validator accepts but the regex engine refuses -------------


@pytest.mark.parametrize("pattern", [r"[\d-z]{4}", r"[A-Z\w-x]{3}"])
def test_a_custom_class_with_an_escape_before_a_hyphen_is_refused_as_a_policy_error(pattern: str) -> None:
    # docs/capture.md: "Raises PolicyError(field, reason) for anything unusable"; the contract:
    # "everything else refused at load with the reason". Before the fix: re.error escapes from re.compile.
    with pytest.raises(PolicyError) as refused:
        parse_policy({"detectors": {"custom": [{"name": "acct", "pattern": pattern}]}})
    assert refused.value.field == "detectors.custom[0].pattern"


def test_policy_check_names_the_pattern_instead_of_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"detectors": {"custom": [{"name": "acct", "pattern": r"[\d-z]{4}"}]}}))
    runner = CliRunner()
    result = runner.invoke(cli, ["capture", "policy", "check", str(bad), "--json"],
                           env={"BITEXACT_HOME": str(tmp_path / "home")})
    # A user error is a PolicyError: exit 1 and JSON naming the field, never an uncaught re.error.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1
    assert json.loads(result.stdout)["field"] == "detectors.custom[0].pattern"


# -- 2. a custom pattern reads the NUL the scanner joins values with ---------------------


def test_a_custom_pattern_finds_the_same_in_a_value_whatever_fields_stand_beside_it() -> None:
    # "code 123456" does not match \d{6}\D alone (nothing follows the digits), and is kept
    # when it is the only field. Beside another field, the NUL that joins them is read as the
    # \D, and the value is scrubbed: what is stored depends on unrelated fields, and a value
    # the pattern does not match is replaced ("It finds what has the shape ... Nothing else").
    policy = parse_policy({"detectors": {"custom": [{"name": "acct", "pattern": r"\d{6}\D"}]}})
    alone = apply_policy(policy, "tool_call", {"a": "code 123456"})
    assert alone.data == {"a": "code 123456"}
    beside = apply_policy(policy, "tool_call", {"a": "code 123456", "b": "x"})
    assert beside.data == {"a": "code 123456", "b": "x"}
    assert beside.block is None


# -- 3. a rule that can never match is accepted -------------------------------------------


@pytest.mark.parametrize("first_mode", ["scrub", "keep"])
def test_a_subkey_rule_under_an_earlier_star_name_rule_is_refused(first_mode: str) -> None:
    # "*.NAME covers every path whose last key is NAME ... a top-level NAME included, and what
    # is under it" (docs/capture.md). So `*.a` first decides a.x, and a later `a.x` rule can
    # never match: "A rule that could never match is refused when the policy is loaded".
    fields = [
        {"kind": "*", "path": "*.a", "mode": first_mode},
        {"kind": "*", "path": "a.x", "mode": "hash-only"},
    ]
    try:
        policy = parse_policy({"fields": fields})
    except PolicyError as refused:
        assert refused.field == "fields[1]"
        return
    # Accepted: the value the hash-only rule was written for is stored as captured.
    captured = apply_policy(policy, "tool_call", {"a": {"x": "Jane Doe, born 1970-01-01"}})
    pytest.fail(f"accepted a rule that never matches; stored {captured.data}")


# -- 4. `where` compares a str subclass as not equal to its own JSON value ------------------


class _Tool(enum.StrEnum):
    KYC = "kyc_lookup"


def test_a_where_clause_matches_a_str_subclass_by_its_json_value() -> None:
    # "where holds on the step's own top-level fields (JSON equality)"; a StrEnum member is
    # stored as the plain string it is ("A value of a subclass of str ... is read as the plain
    # value it is stored as"). Before the fix the hash-only rule is skipped and the result kept raw.
    policy = parse_policy({"fields": [
        {"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
        {"kind": "*", "path": "*", "mode": "scrub"},
    ]})
    captured = apply_policy(policy, "tool_call", {"tool": _Tool.KYC, "result": "Jane Doe, born 1970-01-01"})
    assert captured.data["result"] == "[hash-only]"
    assert captured.block is not None and captured.block["fields"]["result"]["rule"] == 0


# -- 5. us_ssn: a cue in the key it is stored under ------------------------------------


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"customer_ssn": "123-45-6789"}, "customer_ssn"),
        ({"note": "customer_ssn=123-45-6789"}, "note"),
    ],
)
def test_an_ssn_under_a_key_naming_ssn_is_scrubbed(data: dict, field: str) -> None:
    # docs/capture.md: us_ssn with require_context (default) needs "a cue (SSN, social security,
    # SS#...) within 48 characters before or in the key it is stored under". `customer_ssn`
    # holds the cue SSN; \bssn does not see it after an underscore.
    policy = parse_policy({"detectors": {"us_ssn": {"require_context": True}}})
    captured = apply_policy(policy, "tool_call", data)
    assert "123-45-6789" not in json.dumps(captured.data)
    assert captured.block is not None and captured.block["fields"][field]["found"] == {"us_ssn": 1}


# -- 6. pan: a card number after a decimal number is never read ------------------------


@pytest.mark.parametrize(
    "text",
    ["paid 12.50 4111 1111 1111 1111", "paid 12.50 4111111111111111", "total 9.99-4111-1111-1111-1111"],
)
def test_a_card_number_after_an_amount_is_scrubbed(text: str) -> None:
    # "card numbers ... are scrubbed everywhere" under the shipped default. Only the fraction
    # digits (the "50" of 12.50) are no card number; the run after it is skipped whole before the fix.
    policy = load_policy("default")
    scrubbed, found = scrub_text(policy, text)
    assert found == {"pan": 1}, scrubbed
    captured = apply_policy(policy, "tool_call", {"msg": text})
    assert "4111" not in captured.data["msg"].replace("[PAN ****1111]", "")


# -- 7. a custom detector finds a token again: applying the policy twice is not safe ----------


def test_applying_a_policy_with_a_pin_detector_twice_declares_nothing_new() -> None:
    # docs/capture.md: "Tokens hold nothing a detector finds again, so applying the policy
    # twice declares nothing new"; the contract: "applying it twice is safe: a field the
    # collector already declared, and that the recorder leaves as it arrived, is not declared
    # again". A PIN detector \b\d{4}\b finds the last four kept in [PAN ****1111].
    policy = parse_policy({"detectors": {"pan": {"keep_last4": True},
                                         "custom": [{"name": "pin", "pattern": r"\b\d{4}\b"}]}})
    collector = apply_policy(policy, "tool_call", {"msg": f"card {VISA}"}, applied_by="collector-a")
    assert collector.data == {"msg": "card [PAN ****1111]"}
    recorder = apply_policy(policy, "tool_call", collector.data, prior=collector.block)
    assert recorder.data == collector.data
    assert recorder.block is None
