"""Conformance: every credential_keys and custody_hints row of the protocol vectors."""

from __future__ import annotations

import pytest

from bitexact.capture import apply_policy, load_policy, parse_custody, redact_url, scrub_text
from bitexact.capture.detectors import CREDENTIAL_KEYS
from bitexact.capture.errors import HintError

from .support import vectors

CREDENTIALS = vectors("credential_keys")
HINTS = vectors("custody_hints")


def test_the_credential_table_is_the_vectors_table() -> None:
    assert sorted(CREDENTIAL_KEYS) == sorted(CREDENTIALS["keys"])


@pytest.mark.parametrize("row", CREDENTIALS["recorded_urls"], ids=lambda r: r["name"])
def test_recorded_urls_row(row: dict) -> None:
    assert redact_url(row["url"]) == row["recorded"]


@pytest.mark.parametrize("row", CREDENTIALS["scrubbed"], ids=lambda r: r["name"])
def test_scrubbed_row_as_a_field(row: dict) -> None:
    policy = load_policy()
    captured = apply_policy(policy, "tool_call", {"result": row["value"]})
    assert captured.data == {"result": row["scrubbed"]}
    assert captured.block is not None
    found = [f["found"] for f in captured.block["fields"].values()]
    assert found == [{"credentials": 1}]


@pytest.mark.parametrize(
    "row", [r for r in CREDENTIALS["scrubbed"] if isinstance(r["value"], str)], ids=lambda r: r["name"]
)
def test_scrubbed_row_as_text(row: dict) -> None:
    scrubbed, counts = scrub_text(load_policy(), row["value"])
    assert scrubbed == row["scrubbed"]
    assert counts == {"credentials": 1}


@pytest.mark.parametrize(
    "row", [r for r in CREDENTIALS["scrubbed"] if isinstance(r["value"], dict)], ids=lambda r: r["name"]
)
def test_scrubbed_row_as_the_steps_data(row: dict) -> None:
    assert apply_policy(load_policy(), "http_call", row["value"]).data == row["scrubbed"]


def test_scrubbed_rows_are_stable_when_applied_twice() -> None:
    policy = load_policy()
    for row in CREDENTIALS["scrubbed"]:
        once = apply_policy(policy, "tool_call", {"result": row["value"]})
        twice = apply_policy(policy, "tool_call", once.data)
        assert twice.data == once.data
        assert twice.block is None, row["name"]


@pytest.mark.parametrize("row", HINTS["examples"], ids=lambda r: r["hint"])
def test_custody_hint_example(row: dict) -> None:
    if row["valid"]:
        (hint,) = parse_custody({"result": row["hint"]})
        assert hint.mode in HINTS["hints"]
    else:
        with pytest.raises(HintError) as caught:
            parse_custody({"result": row["hint"]})
        assert caught.value.field == "custody.result"


@pytest.mark.parametrize("row", HINTS["examples"], ids=lambda r: r["hint"])
def test_custody_hint_example_through_apply(row: dict) -> None:
    captured = apply_policy(load_policy(), "tool_call", {"tool": "t", "result": "ok"}, hints={"result": row["hint"]})
    if row["valid"]:
        assert not captured.withheld
        assert captured.data["tool"] == "t"
        if row["hint"] != "scrub":  # a scrub that finds nothing keeps the field: nothing to declare
            assert captured.block["fields"]["result"]["mode"] in ("hash-only", "scrubbed-upstream")
    else:
        # Kept without the custody it asked for, the value could be stored where it must not be.
        assert captured.withheld
        assert captured.data == {}
        assert captured.gaps == (
            {"cause": "invalid_argument", "field": "custody.result", "reason": captured.gaps[0]["reason"]},
        )


def test_custody_hints_tool_call_row() -> None:
    row = HINTS["tool_call"]
    captured = apply_policy(load_policy(), "tool_call", row["data"], hints=row["custody"])
    assert not captured.withheld
    declared = captured.block["fields"]
    assert set(declared) == set(row["declared"])
    for path, expected in row["declared"].items():
        for key, value in expected.items():
            assert declared[path][key] == value, (path, key)
    assert declared["args"] == row["declared"]["args"]  # a claim, exactly as declared
    assert captured.data["result"] == "[hash-only]"
    assert captured.data["args"] == row["data"]["args"]


def test_the_collector_only_field_is_refused_in_source_data() -> None:
    assert HINTS["collector_only"] == "capture"
    captured = apply_policy(load_policy(), "tool_call", {"tool": "t", "capture": {"fields": {}}})
    assert captured.withheld
    assert captured.gaps[0]["cause"] == "invalid_argument"
    assert captured.gaps[0]["field"] == "capture"
