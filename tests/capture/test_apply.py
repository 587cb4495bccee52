"""apply_policy: field rules, hash-only custody, hints, the budget, the capture block."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.capture import (
    CaptureKeyMismatchError,
    FieldNotOpenableError,
    apply_policy,
    load_policy,
    open_field,
    open_withheld,
    parse_policy,
)
from bitexact.capture.budget import MIB, Deadline
from bitexact.capture.detectors import build
from bitexact.capture.scan import Scanner
from bitexact.crypto.keysources import KeyUnavailableError, load_key_file

from .support import StepClock, assert_block_matches_data

VISA = "4111111111111111"
MASTERCARD = "5555555555554444"
IBAN = "DE89370400440532013000"


def policy_with(key_file: Path | None = None, **document: Any):
    if key_file is not None:
        document["hash_only_key"] = {"file": str(key_file)}
    return parse_policy(document)


# -- field rules -------------------------------------------------------------


def test_a_clean_step_is_stored_as_captured_with_nothing_declared() -> None:
    data = {"tool": "search", "args": ["weather in Oslo"], "result": {"temp": 21, "ok": True}}
    captured = apply_policy(load_policy(), "tool_call", data)
    assert captured.data == data and captured.block is None and captured.gaps == () and not captured.withheld


def test_the_callers_data_is_never_changed() -> None:
    data = {"args": [VISA, {"password": "x", VISA: 1}], "result": {"a": {"b": [IBAN]}}}
    before = copy.deepcopy(data)
    captured = apply_policy(load_policy(), "tool_call", data)
    assert data == before
    assert captured.data == {
        "args": ["[PAN ****1111]", {"password": "[CREDENTIAL]", "[PAN ****1111]": 1}],
        "result": {"a": {"b": ["[IBAN]"]}},
    }


def test_the_block_counts_what_each_field_held() -> None:
    data = {"args": [f"{VISA} and {MASTERCARD}"], "kwargs": {"account": IBAN}}
    block = apply_policy(load_policy(), "tool_call", data).block
    assert block["v"] == 1 and block["applied_by"] == "recorder" and block["policy"] == load_policy().digest
    assert block["fields"] == {
        "args": {"mode": "scrub", "found": {"pan": 2}, "rule": 0},
        "kwargs.account": {"mode": "scrub", "found": {"iban": 1}, "rule": 0},
    }


def test_a_card_number_as_a_json_number_is_stored_as_its_token() -> None:
    captured = apply_policy(load_policy(), "tool_call", {"result": {"n": int(VISA), "small": 42, "f": 0.4111111111111111}})
    assert captured.data["result"] == {"n": "[PAN ****1111]", "small": 42, "f": 0.4111111111111111}


def test_a_key_holding_a_card_number_is_renamed_never_merged() -> None:
    data = {"result": {VISA: 1, "4111 1111 1111 1111": 2, "[PAN ****1111]": 3}}
    stored = apply_policy(load_policy(), "tool_call", data).data["result"]
    assert list(stored.items()) == [("[PAN ****1111] (2)", 1), ("[PAN ****1111] (3)", 2), ("[PAN ****1111]", 3)]  # noqa: E501


def test_headers_as_name_value_pairs() -> None:
    data = {"request": {"headers": [["X-Api-Key", "k1"], ["Accept", "text/plain"]]}}
    stored = apply_policy(load_policy(), "http_call", data).data
    assert stored["request"]["headers"] == [["X-Api-Key", "[CREDENTIAL]"], ["Accept", "text/plain"]]


def test_first_matching_rule_wins_and_a_path_no_rule_names_is_kept() -> None:
    policy = policy_with(
        fields=[
            {"kind": "tool_call", "path": "result.keep_me", "mode": "keep"},
            {"kind": "tool_call", "path": "result", "mode": "scrub"},
        ]
    )
    data = {"args": [VISA], "result": {"keep_me": VISA, "other": VISA}}
    stored = apply_policy(policy, "tool_call", data).data
    assert stored == {"args": [VISA], "result": {"keep_me": VISA, "other": "[PAN ****1111]"}}
    assert apply_policy(policy, "http_call", data).data == data  # no rule for this kind


def test_where_matches_the_steps_own_fields() -> None:
    policy = policy_with(
        fields=[
            {"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
            {"kind": "*", "path": "*", "mode": "scrub"},
        ]
    )
    kyc = apply_policy(policy, "tool_call", {"tool": "kyc_lookup", "result": "match"})
    other = apply_policy(policy, "tool_call", {"tool": "search", "result": "match"})
    assert kyc.data["result"] == "[hash-only]" and kyc.block["fields"]["result"]["rule"] == 0
    assert other.data["result"] == "match"


def test_a_name_rule_covers_that_key_at_any_depth_and_what_is_under_it() -> None:
    policy = policy_with(fields=[{"kind": "*", "path": "*.notes", "mode": "scrub"}])
    data = {"a": {"b": [{"notes": {"x": VISA}}, {"open": VISA}]}, "notes": VISA}
    stored = apply_policy(policy, "tool_call", data).data
    assert stored == {"a": {"b": [{"notes": {"x": "[PAN ****1111]"}}, {"open": VISA}]}, "notes": "[PAN ****1111]"}


def test_the_kinds_the_policy_does_not_govern_pass_through() -> None:
    data = {"note": VISA}
    assert apply_policy(load_policy(), "run_meta", data).data == data


# -- hash-only ---------------------------------------------------------------


@pytest.fixture
def keyed(key_file: Path):
    return policy_with(
        key_file,
        fields=[
            {"kind": "identity", "path": "on_behalf_of", "mode": "hash-only"},
            {"kind": "identity", "path": "delegation_from", "mode": "hash-only", "linkable": True},
            {"kind": "identity", "path": "principal", "mode": "hash-only", "linkable": True},
            {"kind": "*", "path": "*", "mode": "scrub"},
        ],
    )


def test_a_hash_only_field_opens_with_the_key_and_only_for_its_value(keyed, key_file: Path) -> None:
    captured = apply_policy(keyed, "identity", {"on_behalf_of": "user:7f3a9c", "agent_id": "a1"})
    assert captured.data == {"on_behalf_of": "[hash-only]", "agent_id": "a1"}
    field = captured.block["fields"]["on_behalf_of"]
    assert field["mode"] == "hash-only" and field["rule"] == 0 and field["alg"] == "blake2b-256"
    assert field["key_id"] == keyed.key_id and len(field["nonce"]) == 32 and "linkable" not in field
    key = load_key_file(key_file)
    assert open_field(field, "on_behalf_of", "user:7f3a9c", key)
    assert not open_field(field, "on_behalf_of", "user:7f3a9d", key)
    assert not open_field(field, "agent_id", "user:7f3a9c", key)  # the salt is bound to the path


def test_equal_values_never_give_equal_commitments_unless_linkable(keyed) -> None:
    data = {"on_behalf_of": "ann", "delegation_from": "ann", "principal": "ann"}
    first = apply_policy(keyed, "identity", data).block["fields"]
    second = apply_policy(keyed, "identity", data).block["fields"]
    assert first["on_behalf_of"]["commitment"] != second["on_behalf_of"]["commitment"]
    # Linkable: the key's salt alone, so equal values link across fields and steps.
    assert first["delegation_from"]["commitment"] == first["principal"]["commitment"]
    assert first["principal"]["commitment"] == second["principal"]["commitment"]
    assert first["principal"]["linkable"] is True and "nonce" not in first["principal"]


def test_the_sha256_alg_commits_with_hmac(keyed, key_file: Path) -> None:
    field = apply_policy(keyed, "identity", {"on_behalf_of": {"n": 1}}, alg="sha256").block["fields"]["on_behalf_of"]
    assert field["alg"] == "sha256"
    assert open_field(field, "on_behalf_of", {"n": 1}, load_key_file(key_file))


def test_opening_under_another_key_or_without_one_is_refused(keyed, other_key_file: Path) -> None:
    field = apply_policy(keyed, "identity", {"on_behalf_of": "ann"}).block["fields"]["on_behalf_of"]
    with pytest.raises(CaptureKeyMismatchError):
        open_field(field, "on_behalf_of", "ann", load_key_file(other_key_file))
    with pytest.raises(FieldNotOpenableError):
        open_field({"mode": "scrub"}, "on_behalf_of", "ann", load_key_file(other_key_file))


def test_with_no_key_a_hash_only_field_is_committed_never_openable_and_declared() -> None:
    policy = policy_with(fields=[{"kind": "identity", "path": "on_behalf_of", "mode": "hash-only", "linkable": True}])
    captured = apply_policy(policy, "identity", {"on_behalf_of": "ann"})
    field = captured.block["fields"]["on_behalf_of"]
    assert field["unopenable"] == "capture_key_unavailable" and "key_id" not in field and "linkable" not in field
    assert captured.gaps == ({"cause": "capture_key_unavailable", "paths": ["on_behalf_of"]},)
    with pytest.raises(FieldNotOpenableError):
        open_field(field, "on_behalf_of", "ann", object())


class UnansweringKey:
    """Stands in for a KMS key or token that loaded, then stopped answering."""

    key_id = "0" * 32

    def hmac_sha256(self, message: bytes) -> bytes:
        raise KeyUnavailableError("test token", None, "no answer")


def test_a_key_that_stops_answering_never_stops_the_call(keyed) -> None:
    policy = dataclasses.replace(keyed, key=UnansweringKey())
    captured = apply_policy(policy, "identity", {"on_behalf_of": "ann"})
    assert captured.data == {"on_behalf_of": "[hash-only]"}
    assert captured.block["fields"]["on_behalf_of"]["unopenable"] == "capture_key_unavailable"
    assert captured.gaps[0]["cause"] == "capture_key_unavailable"


def test_a_retired_key_still_opens_what_it_committed(key_file: Path, other_key_file: Path) -> None:
    rule = [{"kind": "*", "path": "result", "mode": "hash-only"}]
    before = policy_with(key_file, fields=rule)
    field = apply_policy(before, "tool_call", {"result": "r"}).block["fields"]["result"]
    rotated = parse_policy(
        {"fields": rule, "hash_only_key": {"file": str(other_key_file)}, "retired_keys": [{"file": str(key_file)}]}
    )
    assert open_field(field, "result", "r", rotated.key_for(field["key_id"]))
    after = apply_policy(rotated, "tool_call", {"result": "r"}).block["fields"]["result"]
    assert after["key_id"] == rotated.key_id != field["key_id"]


def test_pci_keeps_base64_hash_only_at_any_depth(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(key_file))
    pci = load_policy("pci")
    data = {"name": "doc", "content": {"b64": "NDExMQ==", "files": [{"b64": "QUJD", "name": "a"}]}}
    captured = apply_policy(pci, "context", data)
    assert captured.data == {"name": "doc", "content": {"b64": "[hash-only]", "files": [{"b64": "[hash-only]", "name": "a"}]}}
    fields = captured.block["fields"]
    assert set(fields) == {"content.b64", "content.files.0.b64"}
    key = load_key_file(key_file)
    assert open_field(fields["content.files.0.b64"], "content.files.0.b64", "QUJD", key)


def test_the_default_keeps_base64_and_declares_it_unscanned() -> None:
    captured = apply_policy(load_policy(), "context", {"content": {"b64": "NDExMQ=="}})
    assert captured.data == {"content": {"b64": "NDExMQ=="}}
    assert captured.block["fields"] == {"content.b64": {"mode": "unscanned"}}


# -- hints -------------------------------------------------------------------


def test_a_hint_is_stricter_never_looser(key_file: Path) -> None:
    policy = policy_with(
        key_file,
        fields=[
            {"kind": "tool_call", "path": "result", "mode": "hash-only"},
            {"kind": "tool_call", "path": "args", "mode": "keep"},
        ],
    )
    data = {"args": [VISA], "result": VISA, "kwargs": {"x": VISA}}
    captured = apply_policy(policy, "tool_call", data, hints={"result": "scrub", "args": "scrub", "kwargs.x": "hash-only"})
    assert captured.data == {"args": ["[PAN ****1111]"], "result": "[hash-only]", "kwargs": {"x": "[hash-only]"}}
    fields = captured.block["fields"]
    assert fields["result"]["rule"] == 0  # the policy's hash-only stands
    assert fields["args"] == {"mode": "scrub", "found": {"pan": 1}, "hint": True}
    assert fields["kwargs.x"]["hint"] is True


def test_scrubbed_upstream_is_a_claim_declared_beside_what_the_policy_did() -> None:
    captured = apply_policy(
        load_policy(), "tool_call", {"args": [VISA], "result": "ok"},
        hints={"args": "scrubbed-upstream:presidio", "result": "scrubbed-upstream"},
    )
    fields = captured.block["fields"]
    assert fields["args"] == {"mode": "scrub", "found": {"pan": 1}, "rule": 0, "claim": "scrubbed-upstream", "by": "presidio"}
    assert fields["result"] == {"mode": "scrubbed-upstream"}


def test_with_the_policy_off_hints_still_make_a_field_stricter() -> None:
    off = load_policy("off")
    data = {"args": [VISA], "result": VISA, "kwargs": {"secret": "s"}}
    captured = apply_policy(off, "tool_call", data, hints={"result": "scrub", "kwargs": "hash-only"})
    assert captured.data == {"args": [VISA], "result": "[PAN ****1111]", "kwargs": "[hash-only]"}
    fields = captured.block["fields"]
    assert captured.block["policy"] == "off"
    assert fields["result"] == {"mode": "scrub", "found": {"pan": 1}, "hint": True}
    assert fields["kwargs"]["unopenable"] == "capture_key_unavailable"
    assert captured.gaps == ({"cause": "capture_key_unavailable", "paths": ["kwargs"]},)
    assert apply_policy(off, "tool_call", data).data == data  # no hint: kept as captured


def test_with_the_policy_off_a_failed_scrub_is_committed_never_withheld_or_kept() -> None:
    off = dataclasses.replace(load_policy("off"), scanner=Scanner((Exploding(),)))
    captured = apply_policy(off, "tool_call", {"result": "boom " + VISA}, hints={"result": "scrub"})
    assert captured.data == {"result": "[hash-only]"}
    assert captured.block["fields"]["result"]["unopenable"] == "capture_key_unavailable"


def test_a_hint_naming_a_subkey_of_something_not_an_object_withholds_the_entry() -> None:
    captured = apply_policy(load_policy(), "tool_call", {"args": [VISA]}, hints={"args.0": "hash-only"})
    assert captured.withheld and captured.gaps[0]["field"] == "custody.args.0"


def test_a_hint_for_a_field_that_is_not_there_changes_nothing() -> None:
    captured = apply_policy(load_policy(), "tool_call", {"tool": "t"}, hints={"result": "hash-only"})
    assert captured.data == {"tool": "t"} and captured.block is None


# -- the budget --------------------------------------------------------------




def test_the_deadline_is_budget_ms_per_mib_and_at_least_one_mibs_worth() -> None:
    still = lambda: 100.0  # noqa: E731
    assert Deadline.for_size(1000, 10, still).at == pytest.approx(101.0)
    assert Deadline.for_size(1000, 5 * MIB, still).at == pytest.approx(105.0)
    assert Deadline.for_size(250, 2 * MIB, still).at == pytest.approx(100.5)


def test_fields_the_scan_runs_out_of_time_on_are_withheld_and_declared(
    key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bitexact.capture import apply, walk

    monkeypatch.setattr(walk, "BATCH_CHARS", 1)  # one field per batch, to see where the scan stops
    # The walk's own deadline, read by its clock readings. The clean-step shortcut would
    # read part of the budget first (test_clean.py covers a budget it spends).
    monkeypatch.setattr(apply, "clean", lambda *args: False)
    policy = policy_with(key_file, budget_ms=1000)
    many = " ".join(["4111 1111 1111 1111"] * 40)
    data = {f"f{i}": many for i in range(1, 7)} | {"tail": {"x": VISA, "y": "card " + VISA}}
    # A dry run counts how often the scan reads its clock; the real run's clock
    # then advances so that the one-second budget runs out half way through.
    counting = StepClock(0.0)
    apply_policy(policy, "tool_call", data, clock=counting)
    reads = counting.reads
    captured = apply_policy(policy, "tool_call", data, clock=StepClock(2.0 / reads))
    stored = canonicalize(captured.data).decode()
    assert "4111 1111" not in stored and VISA not in stored  # never written raw
    assert "tail" not in captured.data  # its key, unread, is not kept either
    assert_block_matches_data(captured.data, captured.block)
    fields = captured.block["fields"]
    scrubbed = [path for path, f in fields.items() if f["mode"] == "scrub"]
    withheld = [path for path, f in fields.items() if f["mode"] == "withheld"]
    assert scrubbed and withheld, fields  # stopped part way: some fields done, the rest withheld
    assert scrubbed == [f"f{i}" for i in range(1, len(scrubbed) + 1)]  # in order, up to the deadline
    for path in withheld:
        assert fields[path] == {"mode": "withheld", "cause": "scrub_failed", "reason": "budget"}
    # A field after the deadline had its key unread too: stored as [withheld key].
    assert "[withheld key]" in captured.data and captured.data["[withheld key]"] == "[withheld]"
    assert captured.data["f1"].startswith("[PAN ****1111]")
    gap = captured.gaps[0]
    assert gap["cause"] == "scrub_failed" and set(gap["fields"]) == set(withheld)
    assert set(gap["fields"].values()) == {"budget"}
    assert gap["withheld"]["key_id"] == policy.key_id and len(gap["withheld"]["keyed"]) == 64


def test_the_withheld_digest_opens_for_the_exact_content(key_file: Path) -> None:
    policy = policy_with(key_file, budget_ms=1)
    data = {"result": "card " + VISA}
    captured = apply_policy(policy, "tool_call", data, clock=StepClock(1.0))
    assert captured.data == {"[withheld key]": "[withheld]"}
    digest = captured.gaps[0]["withheld"]
    key = load_key_file(key_file)
    assert open_withheld(digest, canonicalize({"result": data["result"]}), key)
    assert not open_withheld(digest, canonicalize({"result": "card 4111"}), key)


def test_with_no_key_the_withheld_digest_is_dropped_and_said_so() -> None:
    captured = apply_policy(parse_policy({"budget_ms": 1}), "tool_call", {"result": VISA}, clock=StepClock(1.0))
    assert captured.gaps[0]["withheld"] == {"bytes": len(canonicalize({"result": VISA})), "digest": "dropped: no capture key"}


class Exploding:
    name = "exploding"
    context_free = True

    def find(self, text, deadline, *, context=None, prefilter=False):  # noqa: ANN001, ANN201
        if "boom" in text:
            raise ZeroDivisionError("a detector bug")
        return []


def test_a_detector_that_raises_withholds_its_field_only() -> None:
    policy = dataclasses.replace(load_policy(), scanner=Scanner((*build({"pan": {"keep_last4": True}}), Exploding())))
    data = {"a": "card " + VISA, "b": "boom " + VISA, "c": {"boom": 1, "d": VISA}}
    captured = apply_policy(policy, "tool_call", data)
    assert captured.data == {
        "a": "card [PAN ****1111]",
        "b": "[withheld]",  # the value failed; its key read fine and is kept
        "c": {"[withheld key]": "[withheld]", "d": "[PAN ****1111]"},  # the key itself failed
    }
    fields = captured.block["fields"]
    assert fields["b"] == {"mode": "withheld", "cause": "scrub_failed", "reason": "detector_error"}
    assert fields["c.[withheld key]"]["reason"] == "detector_error"


# -- applying twice ------------------------------------------------------------


def test_a_collectors_declarations_are_not_declared_again(key_file: Path) -> None:
    policy = policy_with(key_file, fields=[{"kind": "*", "path": "result", "mode": "hash-only"}, {"kind": "*", "path": "*", "mode": "scrub"}])
    collector = apply_policy(policy, "tool_call", {"result": "r", "args": [VISA]}, applied_by="collector-a")
    assert collector.block["applied_by"] == "collector-a"
    again = apply_policy(policy, "tool_call", collector.data, prior=collector.block)
    assert again.data == collector.data
    assert again.block is None


def test_the_block_is_canonical_json() -> None:
    captured = apply_policy(load_policy(), "tool_call", {"args": [VISA]}, hints={"result": "hash-only"})
    assert json.loads(canonicalize(captured.block)) == captured.block


def test_a_withheld_object_stays_withheld_when_a_key_inside_it_was_renamed() -> None:
    policy = dataclasses.replace(load_policy(), scanner=Scanner((*build({"pan": {"keep_last4": True}}), Exploding())))
    captured = apply_policy(policy, "tool_call", {"boom": {VISA: 1, "x": "y"}, "ok": "fine"})
    assert captured.data == {"[withheld key]": "[withheld]", "ok": "fine"}
    assert VISA not in canonicalize(captured.data).decode()
    assert_block_matches_data(captured.data, captured.block)


def test_policy_detectors_beyond_the_default(tmp_path: Path) -> None:
    policy = parse_policy(
        {
            "detectors": {"us_ssn": {}, "email": {}, "custom": [{"name": "account", "pattern": "ACCT-\\d{8}"}]},
        }
    )
    data = {"ssn": "123-45-6789", "note": "mail ann@example.com about ACCT-12345678", "card": VISA, "n": 1234}
    captured = apply_policy(policy, "tool_call", data)
    assert captured.data == {"ssn": "[SSN]", "note": "mail [EMAIL] about [ACCOUNT]", "card": VISA, "n": 1234}
    assert captured.block["fields"]["note"]["found"] == {"account": 1, "email": 1}


def test_short_numbers_are_read_when_a_custom_pattern_could_match_them() -> None:
    policy = parse_policy({"detectors": {"custom": [{"name": "pin", "pattern": "\\b\\d{4}\\b"}]}})
    assert apply_policy(policy, "tool_call", {"pin": 4821}).data == {"pin": "[PIN]"}


def test_what_is_not_a_steps_data_is_a_typed_error() -> None:
    from bitexact.capture import CaptureInputError

    with pytest.raises(CaptureInputError):
        apply_policy(load_policy(), "tool_call", ["not", "an", "object"])  # type: ignore[arg-type]
    deep: Any = VISA
    for _ in range(200):
        deep = [deep]
    with pytest.raises(CaptureInputError):
        apply_policy(load_policy(), "tool_call", {"deep": deep})
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(CaptureInputError):
        apply_policy(load_policy(), "tool_call", {"loop": loop})


def test_hint_paths_use_the_committed_path_spelling() -> None:
    data = {"a.b": {"c~d": VISA, "e": "x"}}
    captured = apply_policy(load_policy(), "tool_call", data, hints={"a~1b.c~0d": "hash-only"})
    assert captured.data == {"a.b": {"c~d": "[hash-only]", "e": "x"}}
    assert list(captured.block["fields"]) == ["a~1b.c~0d"]
