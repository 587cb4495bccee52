"""The clean walk's inlined common case collects exactly what its plain methods collected.

perf22 took ``member()``, ``value()`` and ``scalar()`` out of the clean walk's common case (a text key under
no name/value role, a string value, a list's string items): three Python calls a key were most of the walk's
instructions. :class:`PlainTexts` keeps the methods as they were before (0de516f) as the reference; each step
here is walked both ways, and the texts, their contexts, and whether the walk gave up (the full walk then
runs) must be the same. The reference also asks ``name_value`` of every object, where the walk now asks ``NAME_VALUE_KEYS.isdisjoint``
first; that pre-test is checked on its own too (an object it answers for is one ``name_value`` reads as
none). The steps: every object of the shared protocol vectors and the capture tests' data
files, the clean-step tests' mixed steps, and random JSON-like values with credential-named keys, ``b64``,
``[name, value]`` pairs, argv lists, name/value objects and str subclasses among them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bitexact.capture import load_policy
from bitexact.capture.clean import _BYTES_KEY, MAX_DEPTH, _Texts, _Unclean
from bitexact.capture.detectors.documents import (
    AFTER_SENSITIVE,
    BEFORE_SENSITIVE,
    SECRET_MAPS,
    SENSITIVE,
    SENSITIVE_ATTRIBUTES,
    SENSITIVE_VALUES,
)
from bitexact.capture.scan import NAME_MEMBERS, VALUE_MEMBERS
from bitexact.capture.walk import NAME_VALUE_KEYS, PLAIN, argv_passwords, credential_pair, name_value

from .test_clean import CLEAN_TEXT, Tagged, mixed_steps

DEFAULT = load_policy("default")
ROOT = Path(__file__).resolve().parents[2]


class PlainTexts(_Texts):
    """The clean walk's ``members`` and ``value`` as they were before perf22: a call per member and per value."""

    def members(self, value: dict[Any, Any], depth: int) -> None:
        pair = name_value(self.scanner, value)
        if pair is None:
            for key, item in value.items():
                self.member(key, item, depth, owner=value)
            return
        for key, item in value.items():
            self.member(key, item, depth, pair.role(key), value)

    def value(self, value: Any, context: str | None, depth: int) -> None:
        kind = type(value)
        if kind is dict:
            if depth >= MAX_DEPTH:
                raise _Unclean
            self.members(value, depth + 1)
        elif kind is list:
            if depth >= MAX_DEPTH:
                raise _Unclean
            if credential_pair(self.scanner, value) or argv_passwords(self.scanner, value):
                raise _Unclean
            for item in value:
                self.value(item, context, depth + 1)
        elif isinstance(value, (dict, list, tuple)):
            raise _Unclean
        else:
            self.scalar(value, context)


def _walked(texts: _Texts, data: dict[str, Any]) -> tuple[Any, ...]:
    try:
        texts.members(data, 1)
    except _Unclean:
        return ("unclean",)
    except RecursionError:
        return ("too deep",)
    return (texts.texts, texts.contexts)


def assert_same_walk(data: dict[str, Any]) -> None:
    inlined = _walked(_Texts(DEFAULT.scanner), data)
    plain = _walked(PlainTexts(DEFAULT.scanner), data)
    assert inlined == plain
    if inlined[0] != "unclean" and inlined[0] != "too deep":
        assert [type(text) for text in inlined[0]] == [type(text) for text in plain[0]]


def _objects(value: Any) -> list[dict[str, Any]]:
    """Every object inside ``value`` (``value`` itself included)."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


# The project's copy of the protocol vectors (a fresh clone has no seeds beside it) and the capture data files.
CORPUS = [ROOT / "tests" / "data" / "sdk" / "protocol-vectors.json", *sorted((ROOT / "tests" / "capture" / "data").glob("*.json"))]


def test_the_corpus_objects_are_walked_the_same() -> None:
    objects = [obj for path in CORPUS for obj in _objects(json.loads(path.read_text(encoding="utf-8")))]
    assert len(objects) > 50
    unclean = 0
    for obj in objects:
        assert_same_walk(obj)
        unclean += _walked(_Texts(DEFAULT.scanner), obj)[0] == "unclean"
    assert unclean  # the corpus reaches the paths that give up, too


def test_each_special_member_is_walked_the_same() -> None:
    kib = "k" * 1000
    cases: list[dict[str, Any]] = [
        {"tool": "tool", "args": [kib], "kwargs": {}, "result": {"answer": kib[:24], "echo": kib}, "status": "ok"},
        {"b64": "aGVsbG8="}, {"b64": Tagged("aGVsbG8=")}, {"b64": 3}, {"b64": ["aGVsbG8="]},
        {"password": "hunter2"}, {"password": ""}, {"api_key": {"nested": "x"}}, {"token": None},
        {"headers": ["Authorization", "Bearer abcdefghijklmnop"]}, {"argv": ["mysql", "-psecret"]},
        {"argv": ["myapp", "--password", "x"]}, {"name": "DB_PASSWORD", "value": "x"},
        {"kind": "Secret", "data": {"a": "b"}}, {Tagged("key"): "v"}, {1: "v"}, {"t": ("a", "b")},
        {"s": Tagged("x")}, {"l": [Tagged("x"), "y", 1, 2.5, 10**15, True, None, ["z"], {"k": "v"}]},
        {"n": 12345678901234, "f": 1234567890123.5, "b": False},
    ]
    deep: dict[str, Any] = {"leaf": "x"}
    for _ in range(MAX_DEPTH + 2):
        deep = {"d": deep}
    cases.append(deep)
    for case in cases:
        assert_same_walk(case)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=mixed_steps())
def test_the_clean_steps_mixed_steps_are_walked_the_same(data: dict[str, Any]) -> None:
    assert_same_walk(data)


KEYS = st.one_of(CLEAN_TEXT, st.sampled_from(["password", "token", "b64", "value", "name", "kind", "data",
                                              "Authorization", "sensitive", "api_key"]),
                 CLEAN_TEXT.map(Tagged), st.integers(0, 3))
SCALARS = st.one_of(CLEAN_TEXT, CLEAN_TEXT.map(Tagged), st.integers(-(10**16), 10**16), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(
                        ["Secret", "DB_PASSWORD", "--password", "mysql", "-pabc", "Bearer abcdefghijklmnop"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                      | st.dictionaries(KEYS, inner, max_size=4), max_leaves=16)


@settings(max_examples=800, deadline=None)
@given(data=st.dictionaries(KEYS, VALUES, max_size=6))
def test_random_steps_are_walked_the_same(data: dict[Any, Any]) -> None:
    assert_same_walk(data)


def test_the_reference_is_the_plain_walk() -> None:
    """PlainTexts differs from the walk only in how it is written: its member() and scalar() are the walk's."""
    assert PlainTexts.member is _Texts.member and PlainTexts.scalar is _Texts.scalar
    assert PLAIN == 0 and _BYTES_KEY == "b64"


ROLE_KEYS = sorted({"kind", "value", "Value", "name", "Name", "key", "data", "stringData", "attributes", "values",
                    "before", "after", SENSITIVE, SENSITIVE_ATTRIBUTES, SENSITIVE_VALUES, AFTER_SENSITIVE,
                    BEFORE_SENSITIVE, *NAME_MEMBERS, *VALUE_MEMBERS, *SECRET_MAPS})
ROLE_VALUES = st.one_of(st.sampled_from(["Secret", "DB_PASSWORD", "token", "x", True, False, None, 1]),
                        st.dictionaries(st.sampled_from(["a", "password", "data"]), st.sampled_from(["b", True]),
                                        max_size=2),
                        st.lists(st.sampled_from([True, False, "a", {"type": "get_attr", "value": "a"}]), max_size=3))


@settings(max_examples=3000, deadline=None)
@given(value=st.dictionaries(st.sampled_from(ROLE_KEYS) | CLEAN_TEXT, ROLE_VALUES | VALUES, max_size=6))
def test_an_object_the_pre_test_answers_for_is_no_name_value_object(value: dict[str, Any]) -> None:
    found = name_value(DEFAULT.scanner, value)
    if NAME_VALUE_KEYS.isdisjoint(value):
        assert found is None
    if found is not None:
        assert not NAME_VALUE_KEYS.isdisjoint(value)


def test_each_key_the_pre_test_names_can_make_a_name_value_object() -> None:
    """Not one key too many either: each key of the set, in an object of its kind, is read as one."""
    secret = {"kind": "Secret", "data": {"a": "b"}}
    pair = {"name": "DB_PASSWORD", "value": "x"}
    upper = {"name": "DB_PASSWORD", "Value": "x"}
    state = {SENSITIVE_ATTRIBUTES: [[{"type": "get_attr", "value": "a"}]], "attributes": {"a": "b"}}
    mirrors = [{mirror: True, mirrored: "x"} for mirror, mirrored in (
        (SENSITIVE_VALUES, "values"), (AFTER_SENSITIVE, "after"), (BEFORE_SENSITIVE, "before"))]
    for case in [secret, pair, upper, state, *mirrors]:
        assert name_value(DEFAULT.scanner, case) is not None, case
        assert_same_walk({"step": case})
    assert {"kind", "value", "Value", SENSITIVE_ATTRIBUTES, SENSITIVE_VALUES, AFTER_SENSITIVE,
            BEFORE_SENSITIVE} == NAME_VALUE_KEYS


def test_a_rule_without_where_applies_to_its_kinds_and_one_with_where_asks_it() -> None:
    from bitexact.capture.rules import FieldRule

    bare = FieldRule(0, "*", (), "*", "all", None, None, "scrub", False)
    tools = FieldRule(1, "tool_call", (), "*", "all", None, None, "scrub", False)
    where = FieldRule(2, "*", (("tool", "fetch"), ("n", 1)), "*", "all", None, None, "scrub", False)
    assert bare.applies_to("model", {}) and tools.applies_to("tool_call", {"x": 1})
    assert not tools.applies_to("model", {})
    assert where.applies_to("tool_call", {"tool": "fetch", "n": 1.0})
    assert not where.applies_to("tool_call", {"tool": "fetch", "n": True})
    assert not where.applies_to("tool_call", {"tool": "fetch"})
