"""JSON Schema (Draft-07) generated from the typed session models (UAS 3.6).

Two schemas are generated, never written by hand:

- ``canonical-agent-session.schema.json`` from ``bitexact.sessions.model``
  (the parser trace and ``agent-session.jsonl``): an array of open events;
  an empty trace is valid and no header is required.
- ``unified-session.schema.json`` from ``bitexact.sessions.unified_model``:
  an array whose first record is the version-1 collector header, every
  record carrying provenance, known payloads closed to their essential
  fields.

Known event types are dispatched with ``if``/``then`` on ``type``, so a
malformed known payload cannot pass as an opaque native extension (3.6).
Generation is deterministic; ``check_schemas`` regenerates in memory and
reports missing or byte-different files without rewriting them (the
``make check-session-schemas`` of 3.6).

Command line: ``python -m bitexact.sessions.schema [--check] [DIR]``.
"""

from __future__ import annotations

import json
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, Union, cast, get_args, get_origin

from bitexact.sessions import unified_model as um

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
SCHEMA_DIR = Path(__file__).with_name("schemas")
CANONICAL_SCHEMA_FILE = "canonical-agent-session.schema.json"
UNIFIED_SCHEMA_FILE = "unified-session.schema.json"

_JSON_TYPES = frozenset({"null", "boolean", "number", "string", "array", "object"})
_SIMPLE: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class SchemaGenerationError(TypeError):
    """A model uses a type the generator cannot express in Draft-07."""


class _Generator:
    """Turns annotations into schema fragments, collecting TypedDict definitions."""

    def __init__(self, *, closed: bool) -> None:
        self.closed = closed
        self.definitions: dict[str, dict[str, Any]] = {}
        self._owners: dict[str, type] = {}

    def schema(self, tp: Any) -> dict[str, Any]:
        """The schema fragment for one annotation."""
        if tp is Any:
            return {}
        if tp in _SIMPLE:
            return {"type": _SIMPLE[tp]}
        if typing.is_typeddict(tp):
            return {"$ref": f"#/definitions/{self._define(tp)}"}
        origin = get_origin(tp)
        if origin is typing.Annotated:
            base, *markers = get_args(tp)
            fragment = dict(self.schema(base))
            for marker in markers:
                fragment.update(_marker_keywords(marker))
            return fragment
        if origin in (Required, NotRequired):
            return self.schema(get_args(tp)[0])
        if origin is Literal:
            values = list(get_args(tp))
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if origin in (Union, types.UnionType):
            return self._union(get_args(tp))
        if origin is list:
            (item,) = get_args(tp) or (Any,)
            items = self.schema(item)
            return {"type": "array", "items": items} if items else {"type": "array"}
        if origin is dict:
            key, value = get_args(tp) or (str, Any)
            if key is not str:
                raise SchemaGenerationError(f"object keys must be str, not {key!r}")
            value_schema = self.schema(value)
            if not value_schema:
                return {"type": "object"}
            return {"type": "object", "additionalProperties": value_schema}
        if tp is list:
            return {"type": "array"}
        if tp is dict:
            return {"type": "object"}
        raise SchemaGenerationError(f"cannot express {tp!r} as JSON Schema")

    def _union(self, members: tuple[Any, ...]) -> dict[str, Any]:
        fragments = [self.schema(m) for m in members]
        if any(f == {} for f in fragments):
            return {}
        plain = [f for f in fragments if set(f) == {"type"} and isinstance(f["type"], str)]
        if len(plain) == len(fragments):
            names = _dedupe(f["type"] for f in plain)
            if "number" in names and "integer" in names:
                names.remove("integer")
            covered = set(names) | ({"number"} if "integer" in names else set())
            if covered >= _JSON_TYPES:
                return {}
            return {"type": names[0]} if len(names) == 1 else {"type": names}
        return {"anyOf": fragments}

    def _define(self, td: type) -> str:
        name = td.__name__
        owner = self._owners.get(name)
        if owner is td:
            return name
        if owner is not None:
            name = f"{td.__module__.rsplit('.', 1)[-1]}.{name}"
            if self._owners.get(name) is td:
                return name
        self._owners[name] = td
        self.definitions[name] = {}  # reserve before recursing (self-reference)
        self.definitions[name] = self._object(td)
        return name

    def _object(self, td: type) -> dict[str, Any]:
        hints = typing.get_type_hints(td, include_extras=True)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for key, hint in hints.items():
            properties[key] = self.schema(hint)
            if _is_required(td, key, hint):
                required.append(key)
        fragment: dict[str, Any] = {"type": "object"}
        if td.__doc__:
            fragment["description"] = " ".join(td.__doc__.split())
        fragment["properties"] = properties
        if required:
            fragment["required"] = required
        if self.closed:
            fragment["additionalProperties"] = False
        return fragment


def _is_required(td: type, key: str, hint: Any) -> bool:
    # Python 3.11 misses Required/NotRequired under postponed annotations,
    # so the resolved hint decides first and the class totality second.
    origin = get_origin(hint)
    if origin is Required:
        return True
    if origin is NotRequired:
        return False
    # ``type`` cannot express "a TypedDict class"; every class passed here is one,
    # and TypedDict classes carry ``__required_keys__`` at runtime.
    required_keys: frozenset[str] = cast(Any, td).__required_keys__
    return key in required_keys


def _marker_keywords(marker: Any) -> dict[str, Any]:
    if isinstance(marker, um.Range):
        out: dict[str, Any] = {}
        if marker.minimum is not None:
            out["minimum"] = marker.minimum
        if marker.maximum is not None:
            out["maximum"] = marker.maximum
        return out
    if isinstance(marker, um.Pattern):
        return {"pattern": marker.regex}
    if isinstance(marker, um.MinLength):
        return {"minLength": marker.length}
    if isinstance(marker, um.Unique):
        return {"uniqueItems": True}
    return {}


def _dedupe(names: Any) -> list[str]:
    out: list[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


def _dispatch(gen: _Generator, data_map: dict[str, type]) -> list[dict[str, Any]]:
    rules = []
    for event_type in sorted(data_map):
        rules.append(
            {
                "if": {"properties": {"type": {"const": event_type}}, "required": ["type"]},
                "then": {"properties": {"data": gen.schema(data_map[event_type])}},
            }
        )
    return rules


def canonical_schema() -> dict[str, Any]:
    """Draft-07 schema of a canonical parser trace, generated from ``model.py``."""
    from bitexact.sessions import model as cm

    gen = _Generator(closed=False)
    data_map: dict[str, type] = dict(cm.SESSION_EVENT_DATA)
    event = {
        "type": "object",
        "description": "One canonical event: dot-namespaced type, object data, native metadata.",
        "required": ["type", "data"],
        "properties": {
            "type": {"type": "string", "pattern": r"^[^.\s]+(\.[^.\s]+)+$"},
            "data": {"type": "object"},
        },
        "allOf": _dispatch(gen, data_map),
    }
    return {
        "$schema": DRAFT_07,
        "$id": "https://bitexact.dev/schemas/sessions/" + CANONICAL_SCHEMA_FILE,
        "title": "Canonical agent session trace",
        "description": "Ordered array of canonical events (UAS 3.1); an empty trace is valid.",
        "type": "array",
        "items": {"$ref": "#/definitions/CanonicalEvent"},
        "definitions": {"CanonicalEvent": event, **dict(sorted(gen.definitions.items()))},
    }


def unified_schema() -> dict[str, Any]:
    """Draft-07 schema of the unified file, generated from ``unified_model.py``."""
    gen = _Generator(closed=True)
    provenance_ref = gen.schema(um.Provenance)
    envelope_properties = {
        "type": {"type": "string", "minLength": 1},
        "data": {"type": "object"},
        "provenance": provenance_ref,
        "id": {},
        "parentId": {},
        "timestamp": {"type": ["string", "number"]},
    }
    event = {
        "type": "object",
        "description": "One unified record: type, data, provenance and native id/parentId/timestamp.",
        "required": ["type", "data", "provenance"],
        "properties": envelope_properties,
        "additionalProperties": False,
        "allOf": _dispatch(gen, um.UNIFIED_EVENT_DATA),
    }
    header = {
        "type": "object",
        "description": "The leading collector-owned file-format header (T-UAS-064).",
        "required": ["type", "data", "provenance"],
        "properties": {
            "type": {"const": "session.format"},
            "data": gen.schema(um.SessionFormatData),
            "provenance": {
                "type": "object",
                "required": ["component", "phase", "path", "index"],
                "properties": {
                    "component": {"const": "collector"},
                    "phase": {"const": "conclusion"},
                    "path": {"const": um.UNIFIED_PATH},
                    "index": {"const": 0},
                },
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    return {
        "$schema": DRAFT_07,
        "$id": "https://bitexact.dev/schemas/sessions/" + UNIFIED_SCHEMA_FILE,
        "title": "Unified agent session (aw_session.jsonl), file format version 1",
        "description": "Logical array of decoded records; the first is the version header.",
        "type": "array",
        "minItems": 1,
        "items": [{"$ref": "#/definitions/FormatHeader"}],
        "additionalItems": {"$ref": "#/definitions/UnifiedEvent"},
        "definitions": {
            "FormatHeader": header,
            "UnifiedEvent": event,
            **dict(sorted(gen.definitions.items())),
        },
    }


def model_schema(model: Any, *, closed: bool = True) -> dict[str, Any]:
    """A self-contained schema for one model (its ``definitions`` included)."""
    gen = _Generator(closed=closed)
    root = gen.schema(model)
    return {**root, "definitions": gen.definitions}


SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    CANONICAL_SCHEMA_FILE: canonical_schema,
    UNIFIED_SCHEMA_FILE: unified_schema,
}


def render_schema(schema: dict[str, Any]) -> str:
    """Deterministic text of a schema: two-space indent, LF, trailing newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Regenerate every schema file (the ``make session-schemas`` of 3.6)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in SCHEMAS.items():
        path = directory / name
        path.write_text(render_schema(build()), encoding="utf-8", newline="\n")
        written.append(path)
    return written


def check_schemas(directory: Path = SCHEMA_DIR) -> list[str]:
    """Regenerate in memory; return a problem per missing or byte-different file."""
    problems = []
    for name, build in SCHEMAS.items():
        path = directory / name
        expected = render_schema(build()).encode("utf-8")
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif path.read_bytes() != expected:
            problems.append(f"{name}: differs from the generated schema; regenerate it")
    return problems


def load_schema(name: str) -> dict[str, Any]:
    """The shipped schema ``name`` (one of ``SCHEMAS``)."""
    if name not in SCHEMAS:
        raise KeyError(f"unknown schema {name!r}; expected one of {sorted(SCHEMAS)}")
    return json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """``python -m bitexact.sessions.schema [--check] [DIR]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    rest = [a for a in args if a != "--check"]
    directory = Path(rest[0]) if rest else SCHEMA_DIR
    if check:
        problems = check_schemas(directory)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1 if problems else 0
    for path in write_schemas(directory):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
