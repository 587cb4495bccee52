"""`bitexact health`'s collector-unscrubbed names why a collector sent what the recorder removes.

capture-controls.md, Collectors: a collector applies its host's policy and the recorder applies its own
again; a field the recorder changes is declared with ``applied_by: recorder`` and its ``policy`` beside the
collector's entry-level ``applied_by`` and ``policy``. The two digests tell the cause: the same policy under
older rules (a collector not upgraded with the recorder), another policy, or the same digest (cause unknown).

Each event goes the relay's route with real parts: ``apply_policy`` at the collector under its name,
``apply_policy`` at the recorder with the collector's block as ``prior``, the declarations merged as the
documented schema has them, and the entry written by the recorder's one write path; then the real CLI.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.capture import CapturePolicy, apply_policy, load_policy, read_policy_file
from bitexact.capture.policy import POLICY_VERSION, off_policy
from bitexact.crypto import SigningKey
from bitexact.health.capture import _unscrubbed
from bitexact.health.context import CollectorSent
from bitexact.recording import RunWriter
from bitexact.store import Store
from capture_verdict.support import VISA, policy_file, policy_with, recorder

SECRET = "password = hunter2"  # every version of the credentials rules finds this one
FILE_POLICY: dict[str, Any] = {"detectors": {"pan": {}, "credentials": {}, "email": {}}, "budget_ms": 2000}
# The rules of version 1 are gone from the code: a collector that runs without the credentials detector
# stands in for rules that miss what the recorder's find, and declares the digest such a collector declares.
MISSES_CREDENTIALS: dict[str, Any] = {"detectors": {"pan": {}, "iban": {}}}


def relay(writer: RunWriter, at_recorder: CapturePolicy, collector: str, data: dict[str, Any], *,
          scanned_by: CapturePolicy, declares: str, unscanned: dict[str, Any] | None = None) -> None:
    """One event from ``collector`` as the recorder stores it.

    ``scanned_by`` is the policy the collector's scan ran, ``declares`` the digest its block names;
    ``unscanned`` holds fields added after the collector's scan (a collector bug: they reach the wire raw).
    """
    sent = apply_policy(scanned_by, "tool_call", data, applied_by=collector)
    block: dict[str, Any] = {**(sent.block or {"v": 1, "applied_by": collector, "fields": {}}), "policy": declares}
    arrived = {**sent.data, **(unscanned or {})}
    again = apply_policy(at_recorder, "tool_call", arrived, prior=block)
    fields = dict(block["fields"])
    for path, declaration in (again.block or {}).get("fields", {}).items():
        fields[path] = {**declaration, "applied_by": "recorder", "policy": at_recorder.run_meta_value}
    writer.append_own("tool_call", again.data, capture={**block, "fields": dict(sorted(fields.items()))})


def findings(bx: Any, env: dict[str, str | None] | None = None) -> list[dict[str, Any]]:
    result = bx("health", "--json", env=env)
    assert result.exit_code == 2
    return [f for f in json.loads(result.stdout)["findings"] if f["name"] == "collector-unscrubbed"]


def event() -> dict[str, Any]:
    return {"tool": "deploy", "args": [f"card {VISA}"], "result": SECRET}


# -- digest_under ------------------------------------------------------------------------------------------


def test_digest_under_hashes_the_same_normalized_policy_with_another_rules_version() -> None:
    policy = policy_with(FILE_POLICY)
    assert policy.digest_under(POLICY_VERSION) == policy.digest
    assert policy.normalized is not None
    by_hand = hashlib.sha256(canonicalize({**policy.normalized, "v": 1})).hexdigest()
    assert policy.digest_under(1) == by_hand != policy.digest
    assert policy.normalized["v"] == POLICY_VERSION  # the policy's own dict is left as it was


def test_digest_under_is_none_for_off_and_refuses_a_version_that_is_none() -> None:
    assert off_policy().digest_under(1) is None
    for version in (0, POLICY_VERSION + 1, True, "1"):
        with pytest.raises(ValueError, match="rules version"):
            policy_with({}).digest_under(version)  # type: ignore[arg-type]


# -- the causes, through the real CLI ----------------------------------------------------------------------


def test_a_collector_on_older_rules_of_the_same_policy_file_is_told_to_upgrade(
    bx: Any, store: Store, recorder_key: SigningKey, tmp_path: Path
) -> None:
    path = policy_file(tmp_path, FILE_POLICY)
    same_file = read_policy_file(path, env={})
    writer = recorder(store, recorder_key, same_file).start()
    old = same_file.digest_under(1)
    assert old is not None
    relay(writer, same_file, "edge-1", event(), scanned_by=policy_with(MISSES_CREDENTIALS), declares=old)
    [finding] = findings(bx, {"BITEXACT_CAPTURE_POLICY": str(path)})
    assert finding["run_id"] == writer.run_id and finding["level"] == "critical"
    assert finding["details"] == {"collector": "edge-1", "fields": ["1:result"], "collector_policy": old,
                                  "recorder_policy": same_file.digest, "cause": "older-rules", "rules_version": 1}
    message = finding["message"]
    assert message.startswith("collector edge-1 sent 1 value(s) the recorder's policy removes - they crossed"
                              " the wire and sat in its spool: 1:result; ")
    assert message.endswith("; the collector runs the recorder's policy under older rules (rules version 1,"
                            f" the recorder's are version {POLICY_VERSION}): upgrade the collector with the recorder")
    assert "1:args" not in message  # the card the collector scrubbed itself names no one


def test_a_collector_with_another_policy_is_told_to_deploy_the_recorders(
    bx: Any, store: Store, recorder_key: SigningKey
) -> None:
    default, other = load_policy("default", env={}), policy_with(MISSES_CREDENTIALS)
    writer = recorder(store, recorder_key, default).start()
    relay(writer, default, "edge-2", event(), scanned_by=other, declares=other.run_meta_value)
    [finding] = findings(bx)
    assert finding["details"] == {"collector": "edge-2", "fields": ["1:result"],
                                  "collector_policy": other.digest, "recorder_policy": default.digest,
                                  "cause": "other-policy"}
    assert str(other.digest) not in finding["message"]  # shortened, as other messages shorten a hash
    assert finding["message"].endswith(
        f"; the collector's policy ({str(other.digest)[:16]}...) is not the recorder's ({str(default.digest)[:16]}...):"
        " deploy the same policy to the collector")


def test_the_same_digest_keeps_the_message_that_names_no_cause(
    bx: Any, store: Store, recorder_key: SigningKey
) -> None:
    default = load_policy("default", env={})
    writer = recorder(store, recorder_key, default).start()
    relay(writer, default, "edge-3", {"tool": "deploy", "args": [f"card {VISA}"]}, scanned_by=default,
          declares=default.run_meta_value, unscanned={"result": SECRET})
    [finding] = findings(bx)
    assert finding["details"] == {"collector": "edge-3", "fields": ["1:result"],
                                  "collector_policy": default.digest, "recorder_policy": default.digest}
    assert finding["message"] == ("collector edge-3 sent 1 value(s) the recorder's policy removes - they crossed"
                                  " the wire and sat in its spool: 1:result")


def test_a_policy_changed_since_is_compared_with_what_the_recorder_declared(
    bx: Any, store: Store, recorder_key: SigningKey
) -> None:
    # The recorder applied the default; pci is in force now. The collector declares the default under
    # rules 1: only the policy in force can be hashed again, so the cause is another policy, and the
    # message says the policy in force has changed since.
    default, pci = load_policy("default", env={}), load_policy("pci", env={})
    old = default.digest_under(1)
    assert old is not None
    writer = recorder(store, recorder_key, default).start()
    relay(writer, default, "edge-4", event(), scanned_by=policy_with(MISSES_CREDENTIALS), declares=old)
    same = recorder(store, recorder_key, default).start()  # the collector ran what the recorder declared
    relay(same, default, "edge-4", {"tool": "x"}, scanned_by=default, declares=default.run_meta_value,
          unscanned={"result": SECRET})
    by_run = {f["run_id"]: f for f in findings(bx, {"BITEXACT_CAPTURE_POLICY": "pci"})}
    changed = by_run[writer.run_id]
    assert changed["details"]["cause"] == "other-policy"
    assert changed["details"]["recorder_policy"] == default.digest  # the entry's, not pci's
    assert changed["message"].endswith(
        f" (the recorder's is the digest it declared on these fields; the policy in force is now"
        f" {str(pci.digest)[:16]}...)")
    assert "cause" not in by_run[same.run_id]["details"]  # same digests as declared, though pci is in force
    off = findings(bx, {"BITEXACT_CAPTURE_POLICY": "off"})
    assert {f["run_id"]: f["details"].get("cause") for f in off} == {writer.run_id: "other-policy", same.run_id: None}
    assert next(f for f in off if f["run_id"] == writer.run_id)["message"].endswith("the policy in force is now off)")


def test_a_collector_whose_policy_changed_mid_run_is_named_once_per_digest(
    bx: Any, store: Store, recorder_key: SigningKey
) -> None:
    default, other = load_policy("default", env={}), policy_with(MISSES_CREDENTIALS)
    old = default.digest_under(1)
    assert old is not None
    writer = recorder(store, recorder_key, default).start()
    relay(writer, default, "edge-5", event(), scanned_by=other, declares=old)
    relay(writer, default, "edge-5", event(), scanned_by=other, declares=other.run_meta_value)
    relay(writer, default, "edge-5", event(), scanned_by=other, declares=old)
    relay(writer, default, "aaa-edge", event(), scanned_by=other, declares=other.run_meta_value)
    found = findings(bx)
    assert [(f["details"]["collector"], f["details"].get("cause"), f["details"]["fields"]) for f in found] == [
        ("aaa-edge", "other-policy", ["4:result"]),
        ("edge-5", "older-rules", ["1:result", "3:result"]),  # in the order each digest was first sent
        ("edge-5", "other-policy", ["2:result"]),
    ]


def test_with_the_policy_off_and_no_digest_declared_the_recorders_policy_is_unknown() -> None:
    """The policy in force being off gives no digest to compare: no cause is named, and the message never tells
    the operator to deploy "off" (found by the session's review)."""
    finding = _unscrubbed("run-1", CollectorSent("edge-1", "a" * 64, None, ("1:result",)), off_policy(), {})
    assert finding.details["recorder_policy"] is None
    assert "cause" not in finding.details
    assert "deploy" not in finding.message
