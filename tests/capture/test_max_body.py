"""BITEXACT_MAX_BODY_BYTES: a field larger than the bound is withheld unscanned, as a scan out of budget is."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.capture import PolicyError, apply_policy, load_policy, open_withheld
from bitexact.capture.clause import CaptureCounts, clause_text
from bitexact.capture.policy import DEFAULT_MAX_BODY_BYTES
from bitexact.crypto.keysources import load_key_file

from .support import assert_block_matches_data

LIMIT = 1000
VISA = "4111111111111111"
TOO_LARGE = {"mode": "withheld", "cause": "scrub_failed", "reason": "too_large"}


def bounded(limit: int = LIMIT, policy: str = "default", key_file: Path | None = None) -> Any:
    env = {"BITEXACT_MAX_BODY_BYTES": str(limit), "BITEXACT_CAPTURE_POLICY": policy}
    if key_file is not None:
        env["BITEXACT_CAPTURE_KEY"] = str(key_file)
    return load_policy(env=env)


def fields_of(captured: Any) -> dict[str, Any]:
    return {} if captured.block is None else captured.block["fields"]


# -- the setting ---------------------------------------------------------------


def test_unset_or_empty_the_bound_is_64_mib() -> None:
    assert DEFAULT_MAX_BODY_BYTES == 67_108_864
    assert load_policy(env={}).max_body_bytes == DEFAULT_MAX_BODY_BYTES
    assert load_policy(env={"BITEXACT_MAX_BODY_BYTES": " "}).max_body_bytes == DEFAULT_MAX_BODY_BYTES
    assert bounded(4096).max_body_bytes == 4096
    assert bounded(4096, "pci").max_body_bytes == 4096


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "1e6", "64MiB"])
@pytest.mark.parametrize("policy", ["default", "pci", "off"])
def test_a_value_that_is_not_a_positive_whole_number_is_refused_naming_the_variable(value: str, policy: str) -> None:
    # Refused with the policy off too: a wrong value must not lie in wait for the policy to be turned on.
    with pytest.raises(PolicyError) as refused:
        load_policy(env={"BITEXACT_MAX_BODY_BYTES": value, "BITEXACT_CAPTURE_POLICY": policy})
    assert refused.value.field == "BITEXACT_MAX_BODY_BYTES"
    assert str(refused.value) == (
        f"capture policy: BITEXACT_MAX_BODY_BYTES: {value!r} is not a whole number of bytes greater than 0"
    )


def test_health_reports_a_wrong_value_as_a_policy_nothing_records_under() -> None:
    from bitexact.health.capture import check_policy_invalid
    from bitexact.health.context import HealthContext

    [finding] = check_policy_invalid(HealthContext(env={"BITEXACT_MAX_BODY_BYTES": "lots"}))
    assert finding.name == "capture-policy-invalid" and finding.level == "critical"
    assert "BITEXACT_MAX_BODY_BYTES" in finding.message and finding.details["field"] == "BITEXACT_MAX_BODY_BYTES"
    assert check_policy_invalid(HealthContext(env={"BITEXACT_MAX_BODY_BYTES": "2048"})) == []


def test_the_bound_is_not_part_of_the_policys_digest() -> None:
    # A host setting, declared field by field where it withholds: the same rules keep the same digest.
    assert bounded(LIMIT).digest == load_policy(env={}).digest


# -- under, at, over -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("x" * (LIMIT - 1), True),
        ("x" * LIMIT, True),
        ("x" * (LIMIT + 1), False),
        ("é" * (LIMIT // 2), True),  # 2 bytes a character: at the bound in UTF-8
        ("é" * (LIMIT // 2 + 1), False),  # fewer characters than the bound, more bytes
        ("\U0001f600" * (LIMIT // 4), True),  # 4 bytes a character
        ("\U0001f600" * (LIMIT // 4) + "x", False),
    ],
)
def test_a_texts_size_is_its_utf8_bytes(text: str, kept: bool) -> None:
    # A neighbour makes the step larger than the bound, so the bound is looked at.
    data = {"tool": "fetch", "result": text, "note": "n" * LIMIT}
    captured = apply_policy(bounded(), "tool_call", data)
    if kept:
        assert captured.data["result"] == text and "result" not in fields_of(captured)
    else:
        assert captured.data["result"] == "[withheld]"
        assert fields_of(captured)["result"] == TOO_LARGE
    assert captured.data["note"] == data["note"] and captured.data["tool"] == "fetch"


@pytest.mark.parametrize(("size", "kept"), [(LIMIT - 1, True), (LIMIT, True), (LIMIT + 1, False), (LIMIT + 2, False)])
def test_a_b64_values_size_is_the_bytes_it_encodes(size: int, kept: bool) -> None:
    encoded = base64.b64encode(b"\1" * size).decode()  # 999, 1000, 1001 bytes: no padding, "==", "="
    data = {"name": "report.pdf", "content": {"b64": encoded}}
    captured = apply_policy(bounded(), "context", data)
    if kept:
        assert captured.data["content"]["b64"] == encoded
        assert fields_of(captured)["content.b64"] == {"mode": "unscanned"}
    else:
        assert captured.data["content"] == {"b64": "[withheld]"}
        assert fields_of(captured)["content.b64"] == TOO_LARGE
    assert_block_matches_data(captured.data, captured.block)


def test_a_step_within_the_bound_is_never_measured_field_by_field() -> None:
    # Every field is smaller than its step: a step within the bound keeps what the policy keeps.
    data = {"result": "x" * (LIMIT - 20)}
    assert apply_policy(bounded(), "tool_call", data).data == data


# -- nested fields ---------------------------------------------------------------


def test_the_bound_is_per_committed_field_its_neighbours_kept_and_scrubbed() -> None:
    data = {
        "request": {"url": "https://api.example/pay", "text": "card " + VISA},
        "response": {"status": 200, "text": "y" * (LIMIT + 1), "headers": {"content-type": "text/plain"}},
    }
    captured = apply_policy(bounded(), "http_call", data)
    assert captured.data == {
        "request": {"url": "https://api.example/pay", "text": "card [PAN ****1111]"},
        "response": {"status": 200, "text": "[withheld]", "headers": {"content-type": "text/plain"}},
    }
    assert fields_of(captured) == {"request.text": {"mode": "scrub", "found": {"pan": 1}, "rule": 0},
                                   "response.text": TOO_LARGE}
    assert_block_matches_data(captured.data, captured.block)


def test_a_fields_size_is_everything_the_scan_would_read_in_it() -> None:
    # No string in it is larger than the bound; together they are (keys inside it count, its own does not).
    parts = [{"blob": "a" * 300, "b64": base64.b64encode(b"\0" * 100).decode()} for _ in range(3)]
    data = {"response": {"status": 200, "json": {"items": parts}}, "tool": "list"}
    # 3 * (300 + 100 + len("blob") + len("b64")) + len("items") = 1226 bytes, "json" and status not counted.
    captured = apply_policy(bounded(1225), "tool_call", data)
    assert captured.data == {"response": {"status": 200, "json": "[withheld]"}, "tool": "list"}
    assert fields_of(captured) == {"response.json": TOO_LARGE}
    kept = apply_policy(bounded(1226), "tool_call", data)
    assert kept.data == data
    assert [declared["mode"] for declared in fields_of(kept).values()] == ["unscanned"] * 3


def test_a_large_value_deep_inside_a_top_level_list_withholds_that_field_only() -> None:
    data = {"args": ["short", {"deep": [{"deeper": "d" * (LIMIT + 1)}]}], "result": {"ok": True}}
    captured = apply_policy(bounded(), "tool_call", data)
    assert captured.data == {"args": "[withheld]", "result": {"ok": True}}
    assert fields_of(captured) == {"args": TOO_LARGE}


# -- not scanned, not stored -------------------------------------------------------


class Reading:
    """A detector that records what it was given to read (the work done), and finds nothing."""

    name = "reading"
    context_free = True

    def __init__(self) -> None:
        self.read: list[str] = []

    def find(self, text, deadline, *, context=None, prefilter=False):  # noqa: ANN001, ANN201
        self.read.append(text)
        return []


def test_a_field_over_the_bound_is_never_given_to_a_detector_its_key_is() -> None:
    import dataclasses

    from bitexact.capture.detectors import build
    from bitexact.capture.scan import Scanner

    reading = Reading()
    policy = bounded()
    policy = dataclasses.replace(policy, scanner=Scanner((*build(policy.detectors), reading)))
    data = {"result": "MARK" + "x" * LIMIT, "tool": "fetch " + "f" * LIMIT}
    captured = apply_policy(policy, "tool_call", data)
    assert captured.data["result"] == "[withheld]"  # its key read and kept
    assert captured.data["tool"] == "[withheld]"
    read = "\0".join(reading.read)
    assert "MARK" not in read and "fetch" not in read and "result" in read


def test_the_withheld_digest_opens_for_the_fields_as_captured(key_file: Path) -> None:
    data = {"result": "r" * (LIMIT + 1), "response": {"text": "t" * (LIMIT + 1), "status": 200}}
    captured = apply_policy(bounded(key_file=key_file), "tool_call", data)
    [gap] = captured.gaps
    assert gap["cause"] == "scrub_failed"
    assert gap["fields"] == {"response.text": "too_large", "result": "too_large"}
    content = canonicalize({"response.text": data["response"]["text"], "result": data["result"]})
    assert gap["withheld"]["bytes"] == len(content)
    key = load_key_file(key_file)
    assert open_withheld(gap["withheld"], content, key)
    assert not open_withheld(gap["withheld"], canonicalize({"result": data["result"]}), key)


def test_with_no_capture_key_the_digest_is_dropped_and_said_so() -> None:
    data = {"result": "r" * (LIMIT + 1)}
    [gap] = apply_policy(bounded(), "tool_call", data).gaps
    assert gap == {"cause": "scrub_failed", "fields": {"result": "too_large"},
                   "withheld": {"bytes": len(canonicalize(data)), "digest": "dropped: no capture key"}}


def test_the_verdict_counts_it_apart_from_fields_whose_scan_ran_out() -> None:
    captured = apply_policy(bounded(), "tool_call", {"result": "r" * (LIMIT + 1), "tool": "t"})
    counts = CaptureCounts()
    counts.add_block("run", 1, captured.block)
    assert clause_text(counts, {}) == "1 field withheld (larger than the size bound, never scanned)"
    counts.add_block("run", 2, {"v": 1, "fields": {"args": {"mode": "withheld", "cause": "scrub_failed",
                                                            "reason": "budget"}}})
    assert clause_text(counts, {}) == ("1 field withheld (the scan could not finish), 1 field withheld (larger"
                                       " than the size bound, never scanned)")


# -- what the bound does not cover ----------------------------------------------------


def test_with_the_policy_off_nothing_is_scanned_and_a_large_field_is_kept() -> None:
    data = {"result": "card " + VISA + "x" * LIMIT}
    captured = apply_policy(bounded(policy="off"), "tool_call", data)
    assert captured.data == data and captured.block is None and captured.gaps == ()
    # A hinted scrub with the policy off is never withheld, for its size either.
    hinted = apply_policy(bounded(policy="off"), "tool_call", data, hints={"result": "scrub"})
    assert hinted.data["result"].startswith("card [PAN ****1111]x")


def test_a_field_a_rule_keeps_or_commits_hash_only_is_not_bounded(tmp_path: Path, key_file: Path) -> None:
    import json

    policy_path = tmp_path / "policy.json"
    policy_path.write_text(json.dumps({"fields": [
        {"kind": "*", "path": "raw", "mode": "keep"},
        {"kind": "*", "path": "secret", "mode": "hash-only"},
        {"kind": "*", "path": "*", "mode": "scrub"},
    ]}))
    data = {"raw": "k" * (LIMIT + 1), "secret": "s" * (LIMIT + 1), "text": "t" * (LIMIT + 1)}
    captured = apply_policy(bounded(policy=str(policy_path), key_file=key_file), "tool_call", data)
    assert captured.data == {"raw": data["raw"], "secret": "[hash-only]", "text": "[withheld]"}
    fields = fields_of(captured)
    assert fields["secret"]["mode"] == "hash-only" and fields["text"] == TOO_LARGE and "raw" not in fields
