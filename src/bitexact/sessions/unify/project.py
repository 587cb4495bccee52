"""Essential-payload projection driven by the unified typed models (UAS 3.5, 4.7).

A ``Projector`` keeps exactly the keys its TypedDict declares.  For each key
it looks the value up under the camelCase name, its snake_case spelling and
any extra source aliases, taking the first *present* spelling even when its
value is ``false``, ``0``, ``null`` or empty (3.5: "preferring an explicitly
present canonical value").  A value that does not fit the declared type is
omitted, never coerced or truncated, and its key is reported so the source
gets one collection warning instead of a silent drop.

Nested payloads that need their own mapping (usage objects, steering
notices, ranked choices ...) are handled by converters, which return
``MISSING`` to omit a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bitexact.sessions.draft7 import Check, compile_schema
from bitexact.sessions.schema import model_schema
from bitexact.sessions.usage import valid_count as is_count

MISSING: Any = object()
"""Sentinel: a converter's way of saying "omit this key"."""

Converter = Callable[[Any], Any]

_Step = tuple[str, str, Check | None, Converter | None, tuple[type, ...] | None, bool]
"""One field of a projection plan: the spelling read, then the field's key, check, converter, types, bool flag."""

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """``durationMs`` -> ``duration_ms`` (the default source spelling)."""
    return _CAMEL_BOUNDARY.sub(r"_\1", name).lower()


class Projection(NamedTuple):
    """A projected payload and the keys whose supplied values were refused.

    A named tuple rather than a frozen dataclass: one is built per source
    record, and tuple construction is several times cheaper.
    """

    data: dict[str, Any]
    refused: tuple[str, ...] = ()


@dataclass
class Projector:
    """Projects source records onto one unified payload model."""

    model: type
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    converters: Mapping[str, Converter] = field(default_factory=dict)
    _fields: list[tuple[str, Check | None, Converter | None, tuple[type, ...] | None, bool]] = field(
        init=False, default_factory=list
    )
    _by_spelling: dict[str, tuple[int, int]] = field(init=False, default_factory=dict)
    _plans: dict[tuple[str, ...], tuple[_Step, ...]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        root = model_schema(self.model)
        name = root["$ref"].rsplit("/", 1)[-1]
        properties = root["definitions"][name]["properties"]
        for key, fragment in properties.items():
            spellings = _spellings(key, self.aliases.get(key, ()))
            converter = self.converters.get(key)
            simple = None if converter else _simple_types(fragment)
            check = None if converter or simple is not None else (
                _nonnegative_number if fragment == _NONNEGATIVE_NUMBER else compile_schema(root, fragment))
            # A bool is refused only by a type list holding int without bool; with no int a bool fails the
            # isinstance test anyway, so the second test (once per field of every record) is skipped.
            allow_bool = simple is not None and (bool in simple or int not in simple)
            position = len(self._fields)
            self._fields.append((key, check, converter, simple, allow_bool))
            for rank, spelling in enumerate(spellings):
                self._by_spelling.setdefault(spelling, (position, rank))

    def _plan(self, keys: tuple[str, ...]) -> tuple[_Step, ...]:
        # Per field, the present spelling with the best rank wins; fields in model order.  Each step carries
        # its field's checks, so a projection reads one flat tuple per field instead of looking the field up.
        found: dict[int, tuple[int, str]] = {}
        for spelling in keys:
            hit = self._by_spelling.get(spelling)
            if hit is not None:
                position, rank = hit
                best = found.get(position)
                if best is None or rank < best[0]:
                    found[position] = (rank, spelling)
        return tuple((found[position][1], *self._fields[position]) for position in sorted(found))

    def __call__(self, record: Mapping[str, Any]) -> Projection:
        # Records of one source usually share their key layout, so the
        # spelling selection is computed once per layout.
        keys = tuple(record)
        plan = self._plans.get(keys)
        if plan is None:
            if len(self._plans) > 512:
                self._plans.clear()
            plan = self._plans[keys] = self._plan(keys)
        data: dict[str, Any] = {}
        refused: tuple[str, ...] = ()  # a tuple grown on refusal: most records have none, and need no list
        for spelling, key, check, converter, simple, allow_bool in plan:
            value = record[spelling]
            if simple is not None:
                # Inline type test for plain type-only fields (most runtime scalars).
                if simple and not (isinstance(value, simple) and (allow_bool or not isinstance(value, bool))):
                    refused += (key,)
                    continue
            elif converter is not None:
                value = converter(value)
                if value is MISSING:
                    refused += (key,)
                    continue
            elif check is not None:
                errors: list[str] = []
                check(value, "", errors)
                if errors:
                    refused += (key,)
                    continue
            data[key] = value
        return Projection(data, refused)


_NONNEGATIVE_NUMBER = {"type": "number", "minimum": 0}


def _nonnegative_number(value: Any, path: str, errors: list[str]) -> None:
    """The compiled check of ``{"type": "number", "minimum": 0}``, inlined (hot: durations, credits)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        errors.append(f"{path}: expected a nonnegative number")


_PY = {"null": type(None), "boolean": bool, "string": str, "array": list, "object": dict, "number": (int, float)}


def _simple_types(fragment: dict[str, Any]) -> tuple[type, ...] | None:
    """Python types equivalent to a type-only fragment (``()`` = anything), else ``None``."""
    if fragment == {}:
        return ()
    if set(fragment) != {"type"}:
        return None
    names = fragment["type"] if isinstance(fragment["type"], list) else [fragment["type"]]
    if "integer" in names or not all(n in _PY for n in names):
        return None
    types: list[type] = []
    for name in names:
        entry = _PY[name]
        types.extend(entry if isinstance(entry, tuple) else (entry,))
    return tuple(types)


def _spellings(key: str, extra: tuple[str, ...]) -> tuple[str, ...]:
    out = [key]
    for spelling in (snake_case(key), *extra):
        if spelling not in out:
            out.append(spelling)
    return tuple(out)


# ------------------------------------------------------------------ converters

_USAGE_KEYS = (
    ("inputTokens", ("input_tokens", "inputTokens")),
    ("outputTokens", ("output_tokens", "outputTokens")),
    ("reasoningOutputTokens", ("reasoning_output_tokens", "reasoningOutputTokens")),
    ("cacheReadInputTokens", ("cache_read_input_tokens", "cacheReadInputTokens")),
    ("cacheCreationInputTokens", ("cache_creation_input_tokens", "cacheCreationInputTokens")),
    ("totalTokens", ("total_tokens", "totalTokens")),
)


def unified_usage(value: Any) -> Any:
    """Parser-trace usage (snake_case, camelCase aliases) -> ``UnifiedUsage``.

    The canonical snake_case writer name wins by presence over its alias
    (T-UAS-030); invalid counts are omitted, never zeroed (T-UAS-031).
    """
    if not isinstance(value, dict):
        return MISSING
    out: dict[str, Any] = {}
    for target, spellings in _USAGE_KEYS:
        for spelling in spellings:
            if spelling in value:
                if is_count(value[spelling]):
                    out[target] = value[spelling]
                break
    for target, spellings in (
        ("inputTokensIncludeCache", ("input_tokens_include_cache", "inputTokensIncludeCache")),
    ):
        for spelling in spellings:
            if spelling in value:
                if isinstance(value[spelling], bool):
                    out[target] = value[spelling]
                break
    for spelling in ("overflowed_tokens", "overflowedTokens"):
        if spelling in value:
            items = value[spelling]
            if isinstance(items, list) and all(isinstance(i, str) for i in items):
                out["overflowedTokens"] = list(items)
            break
    return out


def first_present(record: Mapping[str, Any], *spellings: str) -> Any:
    """The value of the first present spelling, or ``MISSING``."""
    for spelling in spellings:
        if spelling in record:
            return record[spelling]
    return MISSING
