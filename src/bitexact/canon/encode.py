"""Canonical JSON bytes: RFC 8785 (JCS) plus the bundle spec §1.2 additions.

Two paths produce identical bytes. The fast path validates the value in one
walk (types, numbers, depth) and lets ``orjson`` write it: its string escapes
and its float digits are RFC 8785's, checked over every code point and a
million random doubles. It covers nearly every agent event. Anything orjson
would write differently from the spec - surrogates, keys whose UTF-16 order
differs from code-point order, doubles below 1e-4, integers past 64 bits -
falls through to the reference encoder below, which implements every rule
directly. Property tests check both against the ``rfc8785`` package.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from bitexact.errors import CanonicalizationError, stated

MAX_DEPTH = 128
"""Deepest nesting accepted; the outermost container is level 1 (§1.1)."""

_MAX_SAFE = 2**53 - 1
_INF = float("inf")


_SORT = orjson.OPT_SORT_KEYS


def _fast_dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=_SORT)


_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_LONE = re.compile("[\ud800-\udfff]")
_HIGH_BMP = re.compile(rb"[\xee\xef]")  # lead bytes of U+E000..U+FFFF in UTF-8
_ASTRAL = re.compile(rb"[\xf0-\xf4]")  # lead bytes of U+10000 and up



class _NeedsReference(Exception):
    """Internal: the fast path cannot write this value byte-exactly."""


def _depth_error() -> CanonicalizationError:
    return stated(CanonicalizationError(f"nesting deeper than {MAX_DEPTH} levels is refused"))


def _type_error(value: object) -> CanonicalizationError:
    return stated(CanonicalizationError(f"{type(value).__name__} cannot be canonicalized as JSON"))


def key_error(key: object) -> CanonicalizationError:
    """The refusal of an object key that is not text (stated: it names the key's type only)."""
    return stated(CanonicalizationError(f"object keys must be strings; got {type(key).__name__}"))


def _check_float(value: float) -> None:
    if value != value or value == _INF or value == -_INF:
        raise stated(CanonicalizationError("NaN and Infinity cannot be canonicalized"))
    if value == 0.0 and math.copysign(1.0, value) < 0:
        raise stated(CanonicalizationError(
            "negative zero cannot be canonicalized: it would share a commitment "
            "with positive zero (RFC 8785 errata 7920)"
        ))


def _check_int(value: int) -> None:
    if -_MAX_SAFE <= value <= _MAX_SAFE:
        return
    digits = str(value)
    try:
        ok = es6_number(float(value)) == digits
    except OverflowError:
        ok = False
    if not ok:
        raise stated(CanonicalizationError(
            f"integer {digits} is outside the safe integer range: JSON numbers are "
            "doubles, and a parser elsewhere reads these digits back as a different "
            "value. Record it as a string instead (RFC 8785 Appendix D)."
        ), "an integer is outside the safe integer range: record it as a string instead (RFC 8785 Appendix D)")


def es6_number(value: float) -> str:
    """Write a finite double as ECMAScript ``Number::toString`` does."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    if exp_text:
        digits = (whole + frac).rstrip("0")
        n = int(exp_text) + len(whole)
    elif whole != "0":
        digits = (whole + frac).rstrip("0")
        n = len(whole)
    else:
        stripped = frac.lstrip("0")
        n = len(stripped) - len(frac)
        digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        exponent = n - 1
        sign_e = "+" if exponent >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{head}e{sign_e}{abs(exponent)}"
    return sign + body


def _prepare(value: Any, depth: int) -> Any:
    """Validate ``value`` and return it, or a copy the C encoder writes exactly."""
    t = type(value)
    if t is str or t is bool or value is None:
        return value
    if t is int:
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return value
        _check_int(value)
        return value
    if t is float:
        _check_float(value)
        if value.is_integer():
            if -_MAX_SAFE <= value <= _MAX_SAFE:
                return int(value)
            if -1e21 < value < 1e21:
                # Past 2^53 ES6 writes the shortest digits padded with zeros, not the exact integer.
                return int(es6_number(value))
            return value
        if -1e-4 < value < 1e-4:
            raise _NeedsReference
        return value
    if t is dict:
        if depth > MAX_DEPTH:
            raise _depth_error()
        copy: dict[str, Any] | None = None
        for key, item in value.items():
            if type(key) is not str:
                if isinstance(key, str):
                    raise _NeedsReference
                raise key_error(key)
            ti = type(item)
            if ti is str or ti is bool or item is None or (ti is int and -_MAX_SAFE <= item <= _MAX_SAFE):
                continue  # the common scalars need no copy; skip the call
            new = _prepare(item, depth + 1)
            if new is not item:
                if copy is None:
                    copy = dict(value)
                copy[key] = new
        return value if copy is None else copy
    if t is list or t is tuple:
        if depth > MAX_DEPTH:
            raise _depth_error()
        items: list[Any] | None = None
        for index, item in enumerate(value):
            ti = type(item)
            if ti is str or ti is bool or item is None or (ti is int and -_MAX_SAFE <= item <= _MAX_SAFE):
                continue
            new = _prepare(item, depth + 1)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        if items is not None:
            return items
        return value if t is list else list(value)
    # bool/int/float/str/dict/list subclasses (enums, OrderedDict...) take the reference path.
    if isinstance(value, (str, int, float, dict, list, tuple)):
        raise _NeedsReference
    raise _type_error(value)


def canonicalize(value: Any) -> bytes:
    """Return the canonical UTF-8 bytes of ``value`` (bundle spec §1.2).

    Raises :class:`CanonicalizationError` with the spec's message for a value
    that has no canonical form.
    """
    try:
        # A plain string (most committed values) needs no walk: orjson refuses what it cannot write exactly.
        data = orjson.dumps(value, option=_SORT) if type(value) is str else _fast_dumps(_prepare(value, 1))
    except (_NeedsReference, orjson.JSONEncodeError):
        pass  # surrogates, integers past 64 bits, subclasses: the reference path
    else:
        if data.isascii() or not (_HIGH_BMP.search(data) and _ASTRAL.search(data)):
            return data
        # Keys may sort differently by UTF-16 code unit than by code point.
    parts: list[str] = []
    _write(value, 1, parts)
    return "".join(parts).encode("utf-8")


def canonical_plain(value: Any) -> tuple[bytes, bool]:
    """``canonicalize(value)``, and whether ``orjson.dumps(value, option=OPT_SORT_KEYS)`` writes those bytes.

    True when the fast path wrote ``value`` itself (it needed no copy: no integral float, no tuple, no
    subclass) and its bytes pass :func:`orjson_order_holds`. Then the same value written by orjson inside a
    larger object is written as these bytes: the write path writes an entry's ``data`` in one native call
    when every committed value is plain.
    """
    kind = type(value)
    if kind is str:
        try:
            return orjson.dumps(value), True
        except orjson.JSONEncodeError:
            return canonicalize(value), False
    if (kind is dict or kind is list) and not value:
        # A call with no keyword arguments (most) or no positional ones: nothing to walk, write or check.
        return (b"{}" if kind is dict else b"[]"), True
    try:
        prepared = _prepare(value, 1)
        data = orjson.dumps(prepared, option=_SORT)
    except (_NeedsReference, orjson.JSONEncodeError):
        return canonicalize(value), False
    if orjson_order_holds(data):
        return data, prepared is value
    return canonicalize(value), False


def orjson_order_holds(data: bytes) -> bool:
    """Whether orjson's key order (by code point) in ``data`` is the canonical one (by UTF-16 code unit).

    The two differ only between a character past U+FFFF and one in U+E000..U+FFFF: bytes without both
    hold no pair of keys they could order differently.
    """
    return data.isascii() or not (_HIGH_BMP.search(data) and _ASTRAL.search(data))


def canonical_text(text: str) -> bytes:
    """``canonicalize(text)`` for a ``str`` (not a subclass), in one native call where it can be.

    A string has no members whose order could differ, so orjson's bytes are the canonical ones whenever it
    writes them; a lone surrogate, which it refuses, takes :func:`canonicalize`. For the write path, which
    commits most values as plain strings.
    """
    try:
        return orjson.dumps(text)
    except orjson.JSONEncodeError:
        return canonicalize(text)


# --- the reference encoder: every rule written out -------------------------


def _fold(text: str) -> str:
    if _LONE.search(text) is None:
        return text
    return _PAIR.sub(
        lambda m: chr(0x10000 + ((ord(m[0][0]) - 0xD800) << 10) + (ord(m[0][1]) - 0xDC00)),
        text,
    )


def _string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    if _LONE.search(quoted) is None:
        return quoted
    return _LONE.sub(lambda m: f"\\u{ord(m[0]):04x}", quoted)


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


def _write(value: Any, depth: int, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        # A subclass's own contents, never its display (an enum of str shows "Colour.RED", holds "red").
        out.append(_string(_fold(str.__str__(value))))
    elif isinstance(value, int):
        integer = int.__index__(value)
        _check_int(integer)
        out.append(str(integer))
    elif isinstance(value, float):
        double = float.__float__(value)
        _check_float(double)
        out.append(es6_number(double))
    elif isinstance(value, dict):
        if depth > MAX_DEPTH:
            raise _depth_error()
        members: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise key_error(key)
            folded = _fold(str.__str__(key))
            if folded in members:
                raise stated(CanonicalizationError("object keys collide once surrogate pairs are folded"))
            members[folded] = item
        out.append("{")
        for index, key in enumerate(sorted(members, key=_utf16_key)):
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(members[key], depth + 1, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if depth > MAX_DEPTH:
            raise _depth_error()
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, depth + 1, out)
        out.append("]")
    else:
        raise _type_error(value)


# --- canonical bytes in pieces, for objects holding an array too large to hold whole ---------


@dataclass(frozen=True)
class Streamed:
    """An array member of an object written by :func:`canonical_chunks` one item at a time.

    ``items`` is called once per write, so the same object can be written
    twice (signed, then written out) without the array ever being held whole.
    """

    items: Callable[[], Iterable[Any]]


def canonical_chunks(value: dict[str, Any]) -> Iterator[bytes]:
    """The canonical bytes of the object ``value``, in pieces.

    Its top-level members that are :class:`Streamed` are written item by
    item, each item canonicalized on its own (an array's canonical form is
    its items' canonical forms joined by commas in brackets). Joined, the
    pieces are exactly :func:`canonicalize` of ``value`` with every streamed
    array given as a list. The rest of the object is canonicalized once, with
    each streamed member standing as a random placeholder string that no
    other value can hold by chance, so the member order is the encoder's own.
    """
    token = os.urandom(16).hex()
    placeholders = {key: f"{token}-{index}" for index, key in enumerate(value) if type(value[key]) is Streamed}
    frame = canonicalize({key: placeholders.get(key, item) for key, item in value.items()})
    spots = sorted((frame.index(b'"%s"' % placeholders[key].encode()), key) for key in placeholders)
    position = 0
    for spot, key in spots:
        yield frame[position:spot]
        yield from _array_chunks(value[key])
        position = spot + len(placeholders[key]) + 2  # the placeholder and its quotes
    yield frame[position:]


def _array_chunks(array: Streamed) -> Iterator[bytes]:
    yield b"["
    for index, item in enumerate(array.items()):
        # Inside its object and array, as the whole document would hold it: the depth limit counts them.
        text = canonicalize([[item]])[2:-2]
        yield b"," + text if index else text
    yield b"]"
