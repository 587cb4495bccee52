"""The verdict's capture clause and scope line, word for word from capture-controls.md."""

from __future__ import annotations

import copy
from pathlib import Path

from bitexact.capture.clause import CaptureClause, capture_clause
from bitexact.crypto import SigningKey
from bitexact.evidence.export import RunSource, bundle_document
from bitexact.evidence.verify import Pins, verify_bundle
from bitexact.store import Store
from capture_verdict.support import (
    CONTRACT,
    CONTRACT_POLICY,
    IBAN,
    VISA,
    contract_key,
    contract_run,
    policy_with,
    recorder,
    verify_plain,
    verify_stored,
    write_key,
)


def test_the_contract_example_clause_and_scope_line(store: Store, recorder_key: SigningKey, tmp_path: Path) -> None:
    policy = policy_with({**CONTRACT_POLICY, "hash_only_key": {"file": str(contract_key(tmp_path))}})
    writer = recorder(store, recorder_key, policy).start()
    contract_run(writer)
    verdict = verify_stored(store, recorder_key, writer.run_id)
    plain = verify_plain(store, recorder_key, writer.run_id)
    assert verdict.ok
    assert verdict.line == plain.line + CONTRACT["example_clause"]
    assert verdict.scope_lines == (CONTRACT["scope_line"],)


def test_a_bundle_with_no_capture_blocks_reads_as_before(store: Store, recorder_key: SigningKey) -> None:
    writer = recorder(store, recorder_key, "default").start()
    writer.append("tool_call", {"tool": "lookup", "args": ["HX-20931"], "result": {"ok": True}})
    writer.seal()
    with_clause = verify_stored(store, recorder_key, writer.run_id)
    assert with_clause.line == verify_plain(store, recorder_key, writer.run_id).line
    assert with_clause.scope_lines == ()
    assert "capture" not in with_clause.line


def test_a_run_recorded_with_the_policy_off_says_so_first(store: Store, recorder_key: SigningKey) -> None:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "pay", "args": [VISA]})
    writer.seal()
    verdict = verify_stored(store, recorder_key, writer.run_id)
    assert verdict.line == verify_plain(store, recorder_key, writer.run_id).line + CONTRACT["off_clause"]
    assert verdict.scope_lines == (CONTRACT["off_scope_line"],)


def test_off_with_hinted_fields_states_both_sentences_off_first(store: Store, recorder_key: SigningKey) -> None:
    writer = recorder(store, recorder_key, "off").start()
    writer.append("tool_call", {"tool": "pay", "args": [VISA]}, hints={"args": "scrub"})
    writer.append("tool_call", {"tool": "kyc", "result": "user:1"}, hints={"result": "hash-only"})
    writer.seal()
    verdict = verify_stored(store, recorder_key, writer.run_id)
    tail = verdict.line.split(", signed (signing key not pinned")[1]
    assert tail.split("), ", 1)[1] == (
        "no capture policy was in force, 1 field scrubbed before capture (pan 1),"
        " 1 field hash-only (never held; 1 can never be opened)"
    )
    assert verdict.scope_lines == (CONTRACT["off_scope_line"] + " " + CONTRACT["scope_line"],)


def _entries(store: Store, key: SigningKey, run_id: str) -> list[dict]:
    return bundle_document(RunSource.from_store(store, run_id), key)["entries"]


def test_a_pack_counts_its_runs_recorded_with_the_policy_off(store: Store, recorder_key: SigningKey) -> None:
    runs = []
    for policy in ("off", "off", "default"):
        writer = recorder(store, recorder_key, policy).start()
        writer.append("tool_call", {"tool": "pay", "args": ["nothing to see"]})
        writer.seal()
        runs.append(writer.run_id)
    provider = capture_clause()()
    for run_id in runs:
        for entry in _entries(store, recorder_key, run_id):
            provider.observe(entry["step"], entry)
    assert ", " + provider.clause() == CONTRACT["pack_sentence"]
    assert provider.scope_lines() == (CONTRACT["off_scope_line"],)

    single = capture_clause()()
    for run_id in runs[1:]:
        for entry in _entries(store, recorder_key, run_id):
            single.observe(entry["step"], entry)
    assert single.clause() == "1 run recorded with no capture policy in force"


def test_a_pack_with_scrubbed_fields_states_both_sentences_in_one_scope_line(
    store: Store, recorder_key: SigningKey
) -> None:
    provider = capture_clause()()
    for policy in ("off", "default"):
        writer = recorder(store, recorder_key, policy).start()
        writer.append("tool_call", {"tool": "pay", "args": [VISA]})
        writer.seal()
        for entry in _entries(store, recorder_key, writer.run_id):
            provider.observe(entry["step"], entry)
    assert provider.clause() == (
        "1 run recorded with no capture policy in force, 1 field scrubbed before capture (pan 1)"
    )
    assert provider.scope_lines() == (CONTRACT["off_scope_line"] + " " + CONTRACT["scope_line"],)


def test_claims_linkable_and_keys_are_counted(store: Store, recorder_key: SigningKey, tmp_path: Path) -> None:
    key = contract_key(tmp_path)
    policy = policy_with({
        "fields": [{"kind": "identity", "path": "principal", "mode": "hash-only", "linkable": True},
                   {"kind": "identity", "path": "on_behalf_of", "mode": "hash-only"},
                   {"kind": "*", "path": "*", "mode": "scrub"}],
        "hash_only_key": {"file": str(key)},
    })
    writer = recorder(store, recorder_key, policy).start()
    writer.append("identity", {"principal": "svc:a", "on_behalf_of": "user:1"})
    writer.append("tool_call", {"tool": "t", "args": ["cleaned"], "result": "r"},
                  hints={"args": "scrubbed-upstream:presidio", "result": "scrubbed-upstream"})
    writer.seal()
    verdict = verify_stored(store, recorder_key, writer.run_id)
    assert verdict.line.endswith(
        ", 2 fields hash-only (never held; 2 can be opened with key 3a9f..),"
        " 1 field linkable (equal values give equal commitments under its key),"
        " 2 fields claimed cleaned upstream (asserted, not checked)"
    )
    # A claim is never a scrub: only hash-only fields call for the scope line here.
    assert verdict.scope_lines == (CONTRACT["scope_line"],)


def test_fields_under_a_revoked_key_are_named_with_the_date(
    store: Store, recorder_key: SigningKey, tmp_path: Path
) -> None:
    policy = policy_with({**CONTRACT_POLICY, "hash_only_key": {"file": str(contract_key(tmp_path))}})
    writer = recorder(store, recorder_key, policy).start()
    writer.append("identity", {"principal": "svc:a", "on_behalf_of": "user:1"})
    writer.append("identity", {"principal": "svc:b", "on_behalf_of": "user:2"})
    writer.seal()
    key_id = CONTRACT["test_key_3a9f"]["key_id"]
    verdict = verify_stored(store, recorder_key, writer.run_id, revoked={key_id: "2026-10-01"})
    assert verdict.line.endswith(
        ", 2 fields hash-only (never held; 2 can be opened with key 3a9f..),"
        " 2 fields committed under revoked key 3a9f.. (guessable by its holder from 2026-10-01:"
        " 1:on_behalf_of, 2:on_behalf_of)"
    )
    other = verify_stored(store, recorder_key, writer.run_id, revoked={"0" * 32: "2026-10-01"})
    assert "revoked" not in other.line


def test_two_keys_and_no_key_are_each_counted(store: Store, recorder_key: SigningKey, tmp_path: Path) -> None:
    first = contract_key(tmp_path)
    second = write_key(tmp_path / "second.key")
    initial = policy_with({**CONTRACT_POLICY, "hash_only_key": {"file": str(first)}})
    writer = recorder(store, recorder_key, initial).start()
    writer.append("identity", {"principal": "svc:a", "on_behalf_of": "user:1"})
    writer.append("identity", {"principal": "svc:a", "on_behalf_of": "user:2"})
    rotated = policy_with({**CONTRACT_POLICY, "hash_only_key": {"file": str(second)},
                           "retired_keys": [{"file": str(first)}]})
    recorder(store, recorder_key, rotated).attach(writer.run_id).append(
        "identity", {"principal": "svc:a", "on_behalf_of": "user:3"})
    recorder(store, recorder_key, policy_with(CONTRACT_POLICY)).attach(writer.run_id).append(
        "identity", {"principal": "svc:a", "on_behalf_of": "user:4"})
    verdict = verify_stored(store, recorder_key, writer.run_id)
    second_id = rotated.key_id
    assert verdict.line.endswith(
        f", 4 fields hash-only (never held; 2 can be opened with key 3a9f.., 1 with key {second_id[:4]}..,"
        " 1 can never be opened)"
    )


def test_an_iban_in_a_scrubbed_field_is_counted_by_detector(store: Store, recorder_key: SigningKey) -> None:
    writer = recorder(store, recorder_key, "default").start()
    writer.append("tool_call", {"tool": "pay", "args": [IBAN, IBAN, VISA]})
    verdict = verify_stored(store, recorder_key, writer.run_id)
    assert verdict.line.endswith(", 1 field scrubbed before capture (iban 2, pan 1)")
    assert " unsealed - end not attested" in verdict.line


def test_malformed_blocks_count_for_nothing_and_never_raise() -> None:
    provider = CaptureClause()
    entries = [
        {"run_id": "r", "kind": "tool_call", "capture": "nonsense"},
        {"run_id": "r", "kind": "tool_call", "capture": {"fields": ["a"]}},
        {"run_id": "r", "kind": "tool_call", "capture": {"fields": {"a": 1, "b": {"mode": "scrub", "found": "x"}}}},
        {"run_id": "r", "kind": "tool_call", "capture": {"fields": {"c": {"mode": "scrub",
                                                                          "found": {"pan": True, "iban": 2}}}}},
        {"run_id": 7, "kind": "run_meta", "data": None},
    ]
    for step, entry in enumerate(entries):
        provider.observe(step, entry)
    assert provider.clause() == "2 fields scrubbed before capture (iban 2)"


def test_a_scrub_declared_without_findings_prints_no_empty_brackets() -> None:
    provider = CaptureClause()
    provider.observe(0, {"run_id": "r", "kind": "tool_call", "capture": {"fields": {"a": {"mode": "scrub"}}}})
    assert provider.clause() == "1 field scrubbed before capture"


def test_tampering_with_a_declaration_fails_the_verdict(store: Store, recorder_key: SigningKey) -> None:
    # The block is inside the entry hash: a verifier never counts a declaration the chain does not bind.
    writer = recorder(store, recorder_key, "default").start()
    writer.append("tool_call", {"tool": "pay", "args": [VISA]})
    writer.seal()
    document = bundle_document(RunSource.from_store(store, writer.run_id), recorder_key)
    forged = copy.deepcopy(document)
    forged["entries"][1]["capture"]["fields"]["args"]["found"] = {"pan": 0}
    verdict = verify_bundle(forged, Pins.from_options(), clauses=[capture_clause()])
    assert not verdict.ok and "pan" not in verdict.line


def test_revoked_keys_are_resolved_only_when_a_field_has_a_key(store: Store, recorder_key: SigningKey) -> None:
    calls: list[int] = []

    def revoked() -> dict[str, str]:
        calls.append(1)
        return {}

    writer = recorder(store, recorder_key, "default").start()
    writer.append("tool_call", {"tool": "pay", "args": [VISA]})
    document = bundle_document(RunSource.from_store(store, writer.run_id), recorder_key)
    verdict = verify_bundle(document, Pins.from_options(), clauses=[capture_clause(revoked)])
    assert verdict.ok and calls == []
