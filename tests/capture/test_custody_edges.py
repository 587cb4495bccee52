"""Custody hints and field rules through every door (SDK, session import, the policy itself): regression tests.

Each test failed before its fix because of a value stored in the clear, or a capture block that
does not declare what the policy did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.capture import apply_policy, load_policy, parse_policy
from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.sessions.evidence import import_session, load_session
from bitexact.store import Store

PAN = "4111111111111111"
INIT = '{"type":"session.init","data":{"sourceEngine":"copilot"}}'


@pytest.fixture
def sdk_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data directory for an SDK run under the shipped default policy."""
    from bitexact.sdk.stores import close_stores

    for name in ("BITEXACT_HOST_KEY", "BITEXACT_CONTEXT", "BITEXACT_DRAIN_TIMEOUT", "BITEXACT_QUEUE_MAX_BYTES"):
        monkeypatch.delenv(name, raising=False)
    yield home
    close_stores()


def _sdk_entries(run_id: str | None) -> list[dict[str, Any]]:
    from bitexact.sdk.stores import recorder_for

    assert run_id is not None
    recorder, _ = recorder_for()
    return list(recorder.store.entries(run_id))


def _found(block: dict[str, Any] | None) -> dict[str, int]:
    """Every detector finding the block declares, summed over its fields."""
    total: dict[str, int] = {}
    for declaration in (block or {}).get("fields", {}).values():
        for detector, count in declaration.get("found", {}).items():
            total[detector] = total.get(detector, 0) + count
    return total


# -- a hash-only field whose key a scrub renamed: the key's scrub goes undeclared ----------------------


@pytest.mark.parametrize("policy_name", [None, "off"])
@pytest.mark.parametrize(("data", "hints"), [
    ({"tool": "kyc", "result": {PAN: "holder"}}, {f"result.{PAN}": "hash-only"}),
    ({"tool": "kyc", PAN: "holder"}, {PAN: "hash-only"}),
], ids=["subkey", "top-level key"])
def test_a_card_number_scrubbed_from_the_key_of_a_hash_only_field_is_declared(
    policy_name: str | None, data: dict[str, Any], hints: dict[str, str]
) -> None:
    # Control: with no hint, the same key is renamed and the block declares {"mode": "scrub", "found": {"pan": 1}}.
    # With a hash-only hint the key is still renamed to "[PAN ****1111]" by the pan detector, but the
    # hash-only declaration overwrites the scrub one: the card number the recorder removed is declared nowhere,
    # so a verdict's "fields scrubbed before capture (pan N)" undercounts what was done.
    policy = load_policy(policy_name, env={})
    captured = apply_policy(policy, "tool_call", data, hints=hints)
    assert PAN not in json.dumps(captured.data)  # the key was scrubbed ...
    assert _found(captured.block).get("pan") == 1, captured.block  # ... so the block must say so


def test_sdk_hash_only_hint_on_a_key_holding_a_card_number_declares_the_key_scrub(sdk_home: Path) -> None:
    with bitexact.run() as r:
        r.record("tool_call", {"tool": "kyc", "result": {PAN: "holder"}}, custody={f"result.{PAN}": "hash-only"})
    entry = _sdk_entries(r.run_id)[1]
    assert PAN not in json.dumps(entry["data"])
    assert _found(entry.get("capture")).get("pan") == 1, entry.get("capture")


# -- the SDK folds two custody paths into one written key, and the later, looser one wins ---------------


@pytest.mark.parametrize("looser", ["scrubbed-upstream", "scrub"])
def test_sdk_two_custody_paths_naming_one_written_key_keep_the_strictest(sdk_home: Path, looser: str) -> None:
    # The data key "k\udc80" (a lone surrogate) is written "k\\udc80"; check_custody maps the hint path
    # "k\udc80" to that same text, and a second path spelled "k\\udc80" overwrites it in the dict it builds.
    # The hash-only the agent asked for is dropped and the value is stored as sent: a hint made capture looser.
    with bitexact.run() as r:
        r.record("tool_call", {"tool": "kyc", "k\udc80": "holder-SECRET-A"},
                 custody={"k\udc80": "hash-only", "k\\udc80": looser})
    stored = json.dumps([e.get("data") for e in _sdk_entries(r.run_id)])
    assert "holder-SECRET-A" not in stored


# -- the session importer ------------------------------------------------------------------------------


def _recorder(store: Store, key: SigningKey, policy: Any) -> Recorder:
    return Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600), policy=policy)


def test_imported_tool_name_under_a_hash_only_rule_is_not_copied_in_the_clear(
    store: Store, recorder_key: SigningKey
) -> None:
    # The rule keeps every toolName hash-only, and data.toolName is committed; but the importer copies the
    # same value into the entry's top-level "tool" display key, where it is stored as sent.
    policy = parse_policy({
        "detectors": {"pan": {}, "iban": {}, "credentials": {}},
        "fields": [{"kind": "tool_call", "path": "*.toolName", "mode": "hash-only"},
                   {"kind": "*", "path": "*", "mode": "scrub"}],
    }, env={})
    event = {"type": "tool.execution_start", "data": {"toolName": "kyc_lookup_SECRET", "arguments": {}}}
    log = (INIT + "\n" + json.dumps(event) + "\n").encode()
    result = import_session(_recorder(store, recorder_key, policy), load_session(log, "s.jsonl"))
    entries = list(store.entries(result.run_id))
    tool = next(e for e in entries if e["kind"] == "tool_call")
    assert tool["capture"]["fields"]["data.toolName"]["mode"] == "hash-only"  # the rule applied ...
    assert "kyc_lookup_SECRET" not in json.dumps(entries)  # ... yet the value is stored beside it


def test_imported_session_file_name_holding_a_card_number_is_not_stored_in_the_clear(
    store: Store, recorder_key: SigningKey
) -> None:
    # The importer adds its own "source" block (file name, digest) to every entry after the policy ran, and
    # names the file in run_meta: under the default policy (card numbers scrubbed everywhere) the card number
    # in the file's name reaches the store unscrubbed in every entry.
    log = (INIT + "\n" + '{"type":"user.message","data":{"content":"hi"}}' + "\n").encode()
    recorder = _recorder(store, recorder_key, load_policy(None, env={}))
    result = import_session(recorder, load_session(log, f"claim-{PAN}.jsonl"))
    stored = json.dumps(list(store.entries(result.run_id)))
    assert PAN not in stored
