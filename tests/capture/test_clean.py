"""The clean-step shortcut stores exactly what the full walk stores.

``apply_policy`` answers a small step under one ``scrub`` rule from
:func:`bitexact.capture.clean.clean` when that finds nothing to change. Each
case here runs the same step twice, with the shortcut and with it turned
off, and compares everything ``apply_policy`` returns: the stored data, the
capture block, the gaps. The steps mix clean text with what the detectors
look for, written every way the property tests write it, and with what the
walk treats specially (credential keys, ``b64`` bytes, ``[name, value]``
pairs, JSON documents in strings, long numbers, str subclasses).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bitexact.capture import apply, apply_policy, load_policy
from bitexact.capture.budget import Deadline
from bitexact.capture.clean import clean

from .support import StepClock, write_policy
from .test_property import credential, ibans, pans, placed, secrets, written_iban, written_pan

DEFAULT = load_policy("default")
CLEAN_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


class Tagged(str):
    """A str subclass, as a caller's own string type would be."""


def _with_and_without_shortcut(policy: Any, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = apply_policy(policy, "tool_call", data)
    with monkeypatch.context() as patched:
        patched.setattr(apply, "clean", lambda *args: False)
        slow = apply_policy(policy, "tool_call", data)
    assert fast.data == slow.data
    assert json.dumps(fast.data, sort_keys=True) == json.dumps(slow.data, sort_keys=True)
    assert fast.block == slow.block
    assert fast.gaps == slow.gaps
    assert fast.withheld == slow.withheld


@st.composite
def mixed_steps(draw: st.DrawFn) -> dict[str, Any]:
    """A step of clean values, with (or without) a few of what the walk must act on."""
    special = draw(st.lists(st.sampled_from(
        ["pan", "iban", "secret", "b64", "pair", "credential_key", "long_int", "float", "document", "subclass"]
    ), max_size=3))
    items: list[Any] = draw(st.lists(st.one_of(
        CLEAN_TEXT, st.integers(-10**6, 10**6), st.booleans(), st.none(),
        st.floats(allow_nan=False, allow_infinity=False, width=32),
        st.dictionaries(CLEAN_TEXT, CLEAN_TEXT, max_size=3), st.lists(CLEAN_TEXT, max_size=3),
    ), max_size=6))
    for what in special:
        if what == "pan":
            items.append(placed(draw, draw(written_pan(draw(pans())))))
        elif what == "iban":
            items.append(placed(draw, draw(written_iban(draw(ibans())))))
        elif what == "secret":
            items.append(draw(credential(draw(secrets))))
        elif what == "b64":
            items.append({"b64": "aGVsbG8="})
        elif what == "pair":
            items.append(["Authorization", "Bearer " + draw(secrets)])
        elif what == "credential_key":
            items.append({draw(st.sampled_from(["password", "api_key", "token"])): draw(st.sampled_from(
                ["", "x", None, 12, {"nested": "value"}, ["a"], draw(secrets)]))})
        elif what == "long_int":
            items.append(draw(st.integers(10**11, 10**19)))
        elif what == "float":
            items.append(draw(st.floats(1e11, 1e19)))
        elif what == "document":
            items.append(json.dumps({"note": draw(CLEAN_TEXT), "n": draw(st.integers())}))
        else:
            items.append(Tagged(draw(CLEAN_TEXT)))
    items = draw(st.permutations(items)) if items else items
    shape = draw(st.sampled_from(["list", "object", "top"]))
    if shape == "list":
        return {"tool": "lookup", "result": items}
    if shape == "object":
        return {"tool": "lookup", "kwargs": {f"k{i}": item for i, item in enumerate(items)}}
    return {f"field{i}": item for i, item in enumerate(items)} or {"tool": "none"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=mixed_steps())
def test_the_shortcut_stores_what_the_walk_stores(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    _with_and_without_shortcut(DEFAULT, data, monkeypatch)


@pytest.fixture(scope="module")
def every_detector(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A policy with every detector, an SSN that needs its context and a custom pattern."""
    path = write_policy(tmp_path_factory.mktemp("policy"), {
        "detectors": {"pan": {"keep_last4": True}, "iban": {}, "credentials": {},
                      "us_ssn": {"require_context": True}, "email": {},
                      "custom": [{"name": "account", "pattern": "ACCT-\\d{8}"}]},
    })
    return load_policy(str(path))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=mixed_steps(), extra=st.sampled_from([
    {"ssn": "123-45-6789"}, {"note": "ssn 123-45-6789"}, {"n": "123-45-6789"}, {"email": "dana@example.com"},
    {"ref": "ACCT-12345678"}, {"ref": ["ACCT-1234567"]}, {"count": 7},
]))
def test_the_shortcut_agrees_under_every_detector(
    data: dict[str, Any], extra: dict[str, Any], every_detector: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _with_and_without_shortcut(every_detector, {**data, **extra}, monkeypatch)


@pytest.mark.parametrize("data", [
    {"tool": "t", "args": ["k" * 1000], "result": {"answer": "ok"}},
    {"tool": "t", "kwargs": {"limit": 10, "ratio": 0.5, "flag": True, "none": None}},
    {"tool": "t", "headers": [["Accept", "*/*"]], "nested": {"a": [{"b": ["c"]}]}},
    {"tool": "t", 1: "a non-string key"},
])
def test_a_clean_step_is_answered_by_the_shortcut(data: dict[str, Any]) -> None:
    assert clean(data, DEFAULT.scanner, Deadline.unlimited())
    captured = apply_policy(DEFAULT, "tool_call", data)
    assert captured.data is data and captured.block is None and not captured.gaps


@pytest.mark.parametrize("data", [
    {"card": "4111 1111 1111 1111"},
    {"result": {"iban": "GB82 WEST 1234 5698 7654 32"}},
    {"kwargs": {"password": "hunter2-Secret"}},
    {"headers": [["Authorization", "Bearer abcdefghijk7Q"]]},
    {"content": {"b64": "aGVsbG8="}},
    {"number": 4111111111111111},
    {"doc": '{"card": "4111111111111111"}'},
    {"subclass": Tagged("anything")},
    {"deep": json.loads("[" * 70 + "]" * 70)},
    {"big": "x" * (70 * 1024)},
])
def test_what_the_walk_must_act_on_is_left_to_it(data: dict[str, Any]) -> None:
    assert not clean(data, DEFAULT.scanner, Deadline.unlimited())


def test_a_cyclic_step_is_left_to_the_walk() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert not clean({"loop": loop}, DEFAULT.scanner, Deadline.unlimited())


def test_the_shortcut_is_not_taken_with_hints_or_field_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(apply, "clean", lambda *args: calls.append(args) or False)
    apply_policy(DEFAULT, "tool_call", {"q": "x"}, hints={"q": "hash-only"})
    ruled = load_policy(str(write_policy(tmp_path, {
        "detectors": {"pan": {}}, "fields": [{"kind": "tool_call", "path": "q", "mode": "hash-only"}],
    })))
    apply_policy(ruled, "tool_call", {"q": "x"})
    assert calls == []
    apply_policy(DEFAULT, "tool_call", {"q": "x"})
    assert len(calls) == 1




def test_a_budget_the_shortcut_spent_withholds_the_rest_never_writes_it_raw() -> None:
    # A dirty step: the shortcut scans it and finds a card number, then the walk
    # scans it again under the same deadline. Here the clock passes the whole budget
    # (one second) at the second reading, inside the shortcut's scan.
    card = " ".join(["4111 1111 1111 1111"] * 40)
    data = {"a": card, "b": {"c": card}}
    captured = apply_policy(DEFAULT, "tool_call", data, clock=StepClock(0.6))
    stored = json.dumps(captured.data)
    assert "4111 1111" not in stored
    assert captured.block is not None
    assert {f["mode"] for f in captured.block["fields"].values()} == {"withheld"}
    assert captured.gaps[0]["cause"] == "scrub_failed"
