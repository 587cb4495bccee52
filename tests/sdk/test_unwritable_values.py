"""A value the SDK cannot write as JSON is declared in a gap that says why, naming none of the agent's data:
the gap said only "ValueError", so an operator could not tell a value nested too deep from keys that
collide as text, nor what to change."""

from __future__ import annotations

import json
from typing import Any

import pytest

import bitexact
from bitexact.sdk import RecordingError
from bitexact.sdk.jsonable import MAX_DEPTH
from sdk.conftest import entries


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def _gap_markers(run_id: str) -> list[dict[str, Any]]:
    return [e["data"]["gap"] for e in entries(run_id) if e["kind"] == "marker" and "gap" in e["data"]]


def test_a_value_nested_too_deep_is_a_gap_saying_so() -> None:
    with bitexact.run() as r:
        handle = r.record("tool_call", {"tool": "t", "result": _nested(5000)})
        r.record_tool_call("t", result=_nested(MAX_DEPTH + 300))
    expected = f"the value nests deeper than {MAX_DEPTH} levels: flatten it or record it as text"
    assert handle.gap is not None and expected in handle.gap.detail
    assert [g.detail for g in r.failures.gaps] == [f"UnwritableValueError: {expected}"] * 2
    assert all(expected in json.dumps(g) for g in _gap_markers(r.run_id))


def test_keys_that_collide_as_text_are_a_gap_that_names_no_key() -> None:
    secret_key = "sk-live-0123456789abcdef"
    with bitexact.run() as r:
        r.record("tool_call", {"tool": "t", "result": {1: "a", "1": "b", secret_key: "c"}})
        r.record("tool_call", {"tool": "t", "result": {"k" + secret_key: 1, 2: "x", "2": "y"}})
        r.record_tool_call("t", error={3: "a", "3": "b", secret_key: "c"})
    details = [g.detail for g in r.failures.gaps]
    collide = "two keys of one mapping are the same key once written as JSON text"
    assert details == [f"UnwritableValueError: {collide}"] * 2 + [f"capture failed: UnwritableValueError: error: {collide}"]
    stored = json.dumps(entries(r.run_id))
    assert secret_key not in stored and "'1'" not in stored


def test_a_strict_run_raises_saying_why_and_chains_the_agents_own_error() -> None:
    with bitexact.run(strict=True) as r:
        with pytest.raises(RecordingError, match="could not be serialized: UnwritableValueError: two keys") as info:
            r.record("tool_call", {"tool": "t", "result": {1: "a", "1": "b"}})
        assert "keys 1 and '1' are the same key '1'" in str(info.value.__cause__)


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        (-0.0, "CanonicalizationError: negative zero cannot be canonicalized: it would share a commitment with"
               " positive zero (RFC 8785 errata 7920)"),
        (_nested(MAX_DEPTH + 5), "EvidenceError: entry data nests deeper than 125 levels: flatten it or record"
                                 " it as text"),
    ],
    ids=["negative-zero", "deeper-than-an-entry-holds"],
)
def test_what_the_write_path_refuses_is_a_gap_saying_why(value: Any, detail: str) -> None:
    with bitexact.run() as r:
        r.record("tool_call", {"tool": "t", "result": value})
    assert [g.detail for g in r.failures.gaps] == [detail]


def test_an_integer_the_write_path_refuses_is_a_gap_that_never_quotes_its_digits() -> None:
    from bitexact.canon import canonicalize
    from bitexact.errors import CanonicalizationError
    from bitexact.sdk.failures import describe

    digits = 9007199254740993123
    with pytest.raises(CanonicalizationError) as info:
        canonicalize({"n": digits})
    assert str(digits) in str(info.value)
    stated_why = describe(info.value)
    assert stated_why.startswith("CanonicalizationError: an integer is outside the safe integer range")
    assert str(digits) not in stated_why
