"""A compiled checker for the Draft-07 subset the generated session schemas use.

The session validator must run without third-party packages, so the shipped
schemas are compiled here into closures.  Only the keywords that
``bitexact.sessions.schema`` generates are supported (``type``, ``enum``,
``const``, ``properties``, ``required``, ``additionalProperties``, ``items``,
``additionalItems``, ``minItems``, ``uniqueItems``, ``minimum``, ``maximum``,
``pattern``, ``minLength``, ``anyOf``, ``allOf``, ``if``/``then``/``else``,
local ``$ref``); an unknown keyword is refused at compile time rather than
silently ignored.  The test suite checks agreement with the ``jsonschema``
package on every fixture.

Diagnostics carry a JSON Pointer and a cause, never the offending value, so
validation output cannot leak payloads (3.6).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from bitexact.regex_syntax import syntax_chars

Check = Callable[[Any, str, list[str]], None]
"""``check(value, pointer, errors)`` appends one message per violation."""

_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "definitions"})
_KNOWN = _ANNOTATIONS | {
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "additionalItems", "minItems", "uniqueItems", "minimum", "maximum", "pattern",
    "minLength", "anyOf", "allOf", "if", "then", "else", "$ref",
}


class UnsupportedSchemaError(ValueError):
    """The schema uses a keyword this checker does not implement."""


def json_equal(a: Any, b: Any) -> bool:
    """JSON value equality: ``1 == 1.0`` but ``true != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _is_type(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "boolean":
        return isinstance(value, bool)
    if name == "string":
        return isinstance(value, str)
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if name == "number":
        return True
    return isinstance(value, int) or (math.isfinite(value) and value.is_integer())


def _pointer(base: str, token: str | int) -> str:
    text = str(token).replace("~", "~0").replace("/", "~1")
    return f"{base}/{text}"


class Compiler:
    """Compiles one root schema; ``$ref``s resolve against its ``definitions``."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self._refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        """The checker for ``schema`` (a fragment of the root)."""
        if schema is True or schema == {}:
            return _accept
        if schema is False:
            return _reject
        unknown = set(schema) - _KNOWN
        if unknown:
            raise UnsupportedSchemaError(f"unsupported schema keywords: {sorted(unknown)}")
        built = [build(self, schema) for key, build in _BUILDERS if key in schema]
        checks = [c for c in built if c is not None]
        if len(checks) == 1:
            return checks[0]

        def check_all(value: Any, at: str, errors: list[str]) -> None:
            for check in checks:
                check(value, at, errors)

        return check_all

    def ref(self, target: str) -> Check:
        """A lazily compiled ``#/definitions/...`` reference (allows recursion)."""
        if not target.startswith("#/definitions/"):
            raise UnsupportedSchemaError(f"only local definitions can be referenced: {target}")
        if target not in self._refs:
            name = target[len("#/definitions/"):]
            slot: list[Check] = []
            self._refs[target] = lambda v, at, errs: slot[0](v, at, errs)
            slot.append(self.compile(self.root["definitions"][name]))
            self._refs[target] = slot[0]
        return self._refs[target]


def _accept(value: Any, at: str, errors: list[str]) -> None:
    return None


def _reject(value: Any, at: str, errors: list[str]) -> None:
    errors.append(f"{at or '/'}: not allowed")


def _b_ref(c: Compiler, s: dict[str, Any]) -> Check:
    target = s["$ref"]
    c.ref(target)
    return lambda v, at, errs: c._refs[target](v, at, errs)


_PY_TYPES = {"null": type(None), "boolean": bool, "string": str, "array": list, "object": dict}


def _b_type(c: Compiler, s: dict[str, Any]) -> Check:
    names = s["type"] if isinstance(s["type"], list) else [s["type"]]
    label = " or ".join(names)
    if "integer" not in names:
        # Fast path: one isinstance test; bool is a number only where "boolean" is listed.
        accepted = tuple(_PY_TYPES[n] for n in names if n in _PY_TYPES) + (
            (int, float) if "number" in names else ())
        allow_bool = "boolean" in names

        def fast(value: Any, at: str, errors: list[str]) -> None:
            if isinstance(value, bool):
                if not allow_bool:
                    errors.append(f"{at or '/'}: expected {label}")
            elif not isinstance(value, accepted):
                errors.append(f"{at or '/'}: expected {label}")

        return fast

    def check(value: Any, at: str, errors: list[str]) -> None:
        if not any(_is_type(value, n) for n in names):
            errors.append(f"{at or '/'}: expected {label}")

    return check


def _b_enum(c: Compiler, s: dict[str, Any]) -> Check:
    allowed = s["enum"]

    def check(value: Any, at: str, errors: list[str]) -> None:
        if not any(json_equal(value, a) for a in allowed):
            errors.append(f"{at or '/'}: value is not one of the {len(allowed)} allowed values")

    return check


def _b_const(c: Compiler, s: dict[str, Any]) -> Check:
    expected = s["const"]
    shown = expected if isinstance(expected, (str, int, float, bool)) or expected is None else "…"

    def check(value: Any, at: str, errors: list[str]) -> None:
        if not json_equal(value, expected):
            errors.append(f"{at or '/'}: expected constant {shown!r}")

    return check


def _b_properties(c: Compiler, s: dict[str, Any]) -> Check:
    props = {k: c.compile(v) for k, v in s["properties"].items()}

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, dict):
            for key, sub in props.items():
                if key in value:
                    sub(value[key], _pointer(at, key), errors)

    return check


def _b_required(c: Compiler, s: dict[str, Any]) -> Check:
    keys = s["required"]

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, dict):
            for key in keys:
                if key not in value:
                    errors.append(f"{at or '/'}: missing required property {key!r}")

    return check


def _b_additional(c: Compiler, s: dict[str, Any]) -> Check | None:
    extra = s["additionalProperties"]
    known = set(s.get("properties", {}))
    if extra is True:
        return None
    sub = c.compile(extra) if extra is not False else None

    def check(value: Any, at: str, errors: list[str]) -> None:
        if not isinstance(value, dict):
            return
        for key in value:
            if key in known:
                continue
            if sub is None:
                errors.append(f"{at or '/'}: property {key!r} is not allowed")
            else:
                sub(value[key], _pointer(at, key), errors)

    return check


def _b_items(c: Compiler, s: dict[str, Any]) -> Check:
    items = s["items"]
    if isinstance(items, list):
        positional = [c.compile(i) for i in items]
        rest = s.get("additionalItems", True)
        rest_check = c.compile(rest) if rest is not True else None

        def check_tuple(value: Any, at: str, errors: list[str]) -> None:
            if not isinstance(value, list):
                return
            for i, item in enumerate(value):
                if i < len(positional):
                    positional[i](item, _pointer(at, i), errors)
                elif rest_check is not None:
                    rest_check(item, _pointer(at, i), errors)

        return check_tuple
    sub = c.compile(items)

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, list):
            for i, item in enumerate(value):
                sub(item, _pointer(at, i), errors)

    return check


def _b_min_items(c: Compiler, s: dict[str, Any]) -> Check:
    n = s["minItems"]

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, list) and len(value) < n:
            errors.append(f"{at or '/'}: expected at least {n} item(s)")

    return check


def _b_unique(c: Compiler, s: dict[str, Any]) -> Check | None:
    if not s["uniqueItems"]:
        return None

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, list):
            for i, item in enumerate(value):
                if any(json_equal(item, other) for other in value[:i]):
                    errors.append(f"{at or '/'}: items must be unique")
                    return

    return check


def _number_bound(key: str, test: Callable[[float, float], bool], word: str) -> Callable[..., Check]:
    def build(c: Compiler, s: dict[str, Any]) -> Check:
        bound = s[key]

        def check(value: Any, at: str, errors: list[str]) -> None:
            if _is_type(value, "number") and not test(value, bound):
                errors.append(f"{at or '/'}: must be {word} {bound}")

        return check

    return build


def _ecma_anchors(pattern: str) -> str:
    """``pattern`` with each ``$`` outside a class made ``\\Z``: in ECMA-262 (what Draft-07 patterns are)
    ``$`` matches only at the end, where Python's ``$`` also matches before a final newline."""
    out: list[str] = []
    at = 0
    for index, char in syntax_chars(pattern):
        if char == "$":
            out += [pattern[at:index], "\\Z"]
            at = index + 1
    return "".join(out) + pattern[at:]


def _b_pattern(c: Compiler, s: dict[str, Any]) -> Check:
    regex = re.compile(_ecma_anchors(s["pattern"]))

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, str) and not regex.search(value):
            errors.append(f"{at or '/'}: does not match the required pattern")

    return check


def _b_min_length(c: Compiler, s: dict[str, Any]) -> Check:
    n = s["minLength"]

    def check(value: Any, at: str, errors: list[str]) -> None:
        if isinstance(value, str) and len(value) < n:
            errors.append(f"{at or '/'}: shorter than {n} character(s)")

    return check


def _b_any_of(c: Compiler, s: dict[str, Any]) -> Check:
    options = [c.compile(o) for o in s["anyOf"]]

    def check(value: Any, at: str, errors: list[str]) -> None:
        for option in options:
            trial: list[str] = []
            option(value, at, trial)
            if not trial:
                return
        errors.append(f"{at or '/'}: matches none of the {len(options)} allowed forms")

    return check


def _b_all_of(c: Compiler, s: dict[str, Any]) -> Check:
    parts = [c.compile(p) for p in s["allOf"]]

    def check(value: Any, at: str, errors: list[str]) -> None:
        for part in parts:
            part(value, at, errors)

    return check


def _b_if(c: Compiler, s: dict[str, Any]) -> Check:
    condition = c.compile(s["if"])
    then = c.compile(s.get("then", True))
    otherwise = c.compile(s.get("else", True))

    def check(value: Any, at: str, errors: list[str]) -> None:
        trial: list[str] = []
        condition(value, at, trial)
        (otherwise if trial else then)(value, at, errors)

    return check


_BUILDERS: list[tuple[str, Callable[[Compiler, dict[str, Any]], Check | None]]] = [
    ("$ref", _b_ref),
    ("type", _b_type),
    ("enum", _b_enum),
    ("const", _b_const),
    ("properties", _b_properties),
    ("required", _b_required),
    ("additionalProperties", _b_additional),
    ("items", _b_items),
    ("minItems", _b_min_items),
    ("uniqueItems", _b_unique),
    ("minimum", _number_bound("minimum", lambda v, b: v >= b, ">=")),
    ("maximum", _number_bound("maximum", lambda v, b: v <= b, "<=")),
    ("pattern", _b_pattern),
    ("minLength", _b_min_length),
    ("anyOf", _b_any_of),
    ("allOf", _b_all_of),
    ("if", _b_if),
]


def compile_schema(root: dict[str, Any], fragment: Any = None) -> Check:
    """Compile ``fragment`` (default: the whole ``root``) into a checker."""
    compiler = Compiler(root)
    return compiler.compile(root if fragment is None else fragment)


def errors_of(check: Check, value: Any, at: str = "") -> list[str]:
    """Run a compiled checker; an empty list means valid."""
    errors: list[str] = []
    check(value, at, errors)
    return errors
