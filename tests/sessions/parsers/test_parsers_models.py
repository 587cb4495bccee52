"""Typed models agree with what the parsers emit (UAS 3.4 signatures; T-UAS-003/009/013/069)."""

from __future__ import annotations

import typing
from typing import Any, Literal, Union

import pytest

from bitexact.sessions import parse
from bitexact.sessions.model import CORE_EVENT_TYPES, SESSION_EVENT_DATA
from uas_parser_helpers import fixture_text, parser_fixtures


def _accepts(hint: Any, value: Any) -> bool:
    origin = typing.get_origin(hint)
    if hint is Any:
        return True
    if origin in (typing.Required, typing.NotRequired):
        return _accepts(typing.get_args(hint)[0], value)
    if origin is Union or str(origin) == "types.UnionType" or type(hint).__name__ == "UnionType":
        return any(_accepts(arg, value) for arg in typing.get_args(hint))
    if origin is Literal:
        return value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if origin in (list, dict):
        return isinstance(value, origin)
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return isinstance(value, dict)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


@pytest.mark.uas("T-UAS-003", "T-UAS-009", "T-UAS-013", "T-UAS-069")
@pytest.mark.parametrize("engine,name", parser_fixtures())
def test_emitted_payloads_match_the_declared_signatures(engine: str, name: str) -> None:
    for event in parse(fixture_text(engine, name), engine).events:
        model = SESSION_EVENT_DATA.get(event["type"])
        if model is None:
            continue
        hints = typing.get_type_hints(model, include_extras=True)
        for key, value in event["data"].items():
            if key in hints:
                assert _accepts(hints[key], value), (event["type"], key, value)
        for key in model.__required_keys__:
            assert key in event["data"], (event["type"], key)
        if event["type"] == "session.init" and "id" not in event:
            assert isinstance(event["data"].get("sourceEngine"), str)  # mapped inits always name the engine


@pytest.mark.uas("T-UAS-004")
def test_every_core_type_has_a_model() -> None:
    assert set(CORE_EVENT_TYPES) <= set(SESSION_EVENT_DATA)
