"""Helpers for the parser tests (imported by basename; no package needed)."""

from __future__ import annotations

import copy
import json
import pathlib
from typing import Any

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"
MATRICES = pathlib.Path(__file__).resolve().parents[2] / "data" / "sessions_parsers" / "uas_matrices.json"
PARSER_ENGINES = ("claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor", "aider", "pydantic-ai")


def fixture_text(engine: str, name: str) -> str:
    """The exact text of a fixture file (UTF-8, no newline translation)."""
    return (FIXTURES / engine / name).read_bytes().decode("utf-8")


def parser_fixtures() -> list[tuple[str, str]]:
    """(engine, file name) of every parser fixture (the engine directories only)."""
    return sorted(
        (p.parent.name, p.name) for p in FIXTURES.rglob("*") if p.is_file() and p.parent.name in PARSER_ENGINES
    )


def matrices() -> dict[str, Any]:
    return json.loads(MATRICES.read_text(encoding="utf-8"))


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def datas(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == kind]


def assert_canonical(events: list[dict[str, Any]]) -> None:
    """T-UAS-003: ordered {type: dotted str, data: dict} objects; no wrapper, version or bare result."""
    assert isinstance(events, list)
    for event in events:
        assert isinstance(event, dict)
        assert isinstance(event.get("type"), str) and "." in event["type"], event
        assert isinstance(event.get("data"), dict), event
        assert "version" not in event and "specVersion" not in event, event


def jsonl(*records: Any) -> str:
    """JSON Lines text for records (str items are written as raw lines)."""
    return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records)


class FrozenDict(dict):
    """A dict that refuses mutation (exposes accidental input mutation, T-UAS-026)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("frozen fixture mutated")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]
    __ior__ = _refuse  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}


class FrozenList(list):
    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("frozen fixture mutated")

    __setitem__ = __delitem__ = append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __iadd__ = _refuse  # type: ignore[assignment]

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]


def deep_freeze(value: Any) -> Any:
    """A deeply immutable copy of a JSON value."""
    if isinstance(value, dict):
        return FrozenDict({k: deep_freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList(deep_freeze(v) for v in value)
    return value
