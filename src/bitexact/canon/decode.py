"""The strict JSON reader every door uses (bundle spec §1.1).

Python's C scanner does the parsing; hooks refuse what the spec refuses.
Messages are the spec's, exactly, so a verdict that quotes them matches any
other conforming verifier; the position travels separately on the error.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from bitexact.canon.encode import MAX_DEPTH
from bitexact.errors import StrictJSONError

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""Largest document ``loads`` reads unless told otherwise (256 MiB)."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _constant(token: str) -> Any:
    raise StrictJSONError(f"non-finite JSON constant {token!r} is not allowed")


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError("non-finite number is not allowed")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError as exc:  # past Python's int-string digit limit
        raise StrictJSONError(f"integer literal of {len(text)} digits is too long") from exc


_decoder = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int
)


def _max_depth(text: str) -> int:
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(accumulate(1 if ch in "[{" else -1 for ch in brackets))


def loads(data: bytes | bytearray | memoryview | str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Parse one JSON document strictly.

    Refuses, with :class:`StrictJSONError`: invalid UTF-8, input over
    ``max_bytes``, duplicate keys, NaN/Infinity, literals that overflow to
    infinity, nesting deeper than 128 levels, and any syntax error.
    """
    size = len(data)
    if size > max_bytes:
        raise StrictJSONError(f"document is {size} bytes, over the limit of {max_bytes} bytes")
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError(
                f"invalid UTF-8 at byte {exc.start}: {exc.reason}", exc.start
            ) from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _max_depth(text) > MAX_DEPTH:
        raise StrictJSONError(f"nesting deeper than {MAX_DEPTH} levels is refused")
    try:
        return _decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise StrictJSONError(str(exc), exc.pos) from None
    except RecursionError:
        raise StrictJSONError(f"nesting deeper than {MAX_DEPTH} levels is refused") from None
