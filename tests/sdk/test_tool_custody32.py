"""record_tool's custody checked against what a tool call holds, where the tool is wrapped (session 32).

A hint whose path no call of the tool can have was taken: a typo's top key (``reslt``) named nothing, so the
field meant was kept as sent, and a sub-key of ``args`` (always a list) withheld every call of the tool whole.
"""

from __future__ import annotations

import json

import pytest

import bitexact
from bitexact.sdk.errors import CustodyHintError
from sdk.conftest import entries


@pytest.mark.parametrize(("custody", "field"), [
    ({"reslt": "hash-only"}, "custody.reslt"),
    ({"results.token": "scrub"}, "custody.results.token"),
    ({"args.0": "hash-only"}, "custody.args.0"),
    ({"status.x": "scrub"}, "custody.status.x"),
    ({"tool.name": "scrub"}, "custody.tool.name"),
])
def test_a_hint_no_tool_call_can_have_is_refused_where_the_tool_is_wrapped(
        custody: dict[str, str], field: str) -> None:
    with pytest.raises(CustodyHintError) as caught:
        bitexact.record_tool(custody=custody)(lambda token: token)
    assert caught.value.field == field
    assert str(caught.value).startswith(field + ": a tool call")


def test_the_hints_meant_by_the_refused_ones_are_taken_as_before() -> None:
    """``result`` and ``args`` whole, what the refusals' messages point to, keep both values out."""
    @bitexact.record_tool(custody={"result": "hash-only", "args": "hash-only"})
    def lookup(subject: str) -> str:
        return "tok-SECRET-result"

    with bitexact.run() as r:
        assert lookup("tok-SECRET-arg") == "tok-SECRET-result"
    calls = [e["data"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert len(calls) == 1 and "SECRET" not in json.dumps(calls)


@pytest.mark.parametrize("custody", [
    {"kwargs.password": "scrub"}, {"error.message": "scrub"}, {"receiver.self": "hash-only"},
    {"result.holder": "hash-only"}, {"tool": "scrub"}, {"status": "scrub"},
])
def test_every_key_a_tool_call_has_may_still_be_hinted(custody: dict[str, str]) -> None:
    bitexact.record_tool(custody=custody)(lambda password=None: password)


def test_record_tool_call_withholds_a_call_whose_hint_names_nothing_and_declares_it() -> None:
    """r.record_tool_call took a typo's hint: the result it was meant for was stored as sent."""
    with bitexact.run() as r:
        handle = r.record_tool_call("lookup", ["q"], result="tok-SECRET-result", custody={"reslt": "hash-only"})
        assert dict(handle) == {}
    stored = entries(r.run_id)
    assert "SECRET" not in json.dumps([e["data"] for e in stored])
    gaps = [e["data"]["gap"] for e in stored if e["kind"] == "marker" and "gap" in e["data"]]
    assert [(g["cause"], g["kind"], list(g["fields"])) for g in gaps] == [
        ("invalid_argument", "tool_call", ["custody.reslt"])]


def test_record_tool_call_in_strict_mode_raises_the_refusal() -> None:
    with bitexact.run(strict=True) as r:
        with pytest.raises(CustodyHintError) as caught:
            r.record_tool_call("lookup", ["q"], result="x", custody={"args.0": "hash-only"})
    assert caught.value.field == "custody.args.0"
