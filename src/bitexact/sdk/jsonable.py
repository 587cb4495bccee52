"""Turn whatever an agent hands the SDK into a value the evidence can hold.

Entries are canonical JSON. An agent's arguments and results are Python
objects: bytes, dataclasses, datetimes, big integers. Each is recorded in a
fixed, documented shape rather than refused, so recording never fails on an
ordinary value:

* bytes -> ``{"b64": ...}`` (the capture policy's ``*.b64`` rules apply);
* an integer past 2^53 - 1, a NaN or an infinity -> its text (RFC 8785 App. D);
* a dataclass, or a model with ``model_dump()`` -> its fields;
* a datetime, date, time, UUID, Decimal, Path or Enum -> its text or value;
* a set -> a sorted list; a tuple -> a list; a non-string key -> its text;
* a string holding a surrogate pair -> the pair folded into its character, as
  the canonical form folds it; a lone surrogate -> that code point escaped;
* an agent's own ``orjson.Fragment`` -> the JSON value it holds, read by the
  strict reader (text that is not strict JSON, a duplicate key say, makes the
  value unwritable: never spliced in unread, where a reader would keep one
  of the duplicates without a word);
* anything else -> ``{"repr": repr(value)}``;
* a cycle -> ``"[cycle]"``; nesting past the evidence's limit -> its repr.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import enum
import math
import pickle
import re
import uuid
from decimal import Decimal
from pathlib import PurePath
from collections.abc import Mapping
from typing import Any, Final

import orjson

from bitexact.canon import loads
from bitexact.errors import StrictJSONError, stated

MAX_SAFE_INT: Final[int] = 2**53 - 1
MAX_DEPTH: Final[int] = 120
"""Below the evidence's 125 levels, leaving room for the SDK's own wrapping keys."""


def _text(value: str) -> str:
    """``value`` as JSON text can hold it: each valid surrogate pair folded into its character (as the
    canonical form folds one, bundle spec 1.2), each lone surrogate left escaped."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        folded = value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return folded.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def type_name(cls: type) -> str:
    """``module.QualifiedName`` of a class: how a record names an exception's type, or a method's receiver."""
    return f"{cls.__module__}.{cls.__qualname__}"


def exception_data(exc: BaseException) -> dict[str, str]:
    """An exception as a record describes it: ``{"type", "message"}``."""
    return {"type": type_name(type(exc)), "message": exception_message(exc)}


def exception_message(exc: BaseException) -> str:
    """An exception's message, even when its ``__str__`` itself raises (the agent gets its own exception
    either way; this only describes it)."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001
        return f"<{type(exc).__qualname__} whose message could not be read>"


@dataclasses.dataclass(frozen=True, slots=True)
class WrittenJSON:
    """JSON :func:`dump_json` already wrote (a tool's arguments as it was called), spliced into an
    entry as it is. Only the SDK makes these: an agent's own ``orjson.Fragment`` is not taken on trust."""

    fragment: orjson.Fragment


class UnwritableValueError(ValueError):
    """A value the SDK cannot write as JSON. Raised :func:`~bitexact.errors.stated`: its message may quote
    the agent's keys, its ``public`` words, which a gap (evidence) states, never do."""


KEYS_COLLIDE: Final[str] = "two keys of one mapping are the same key once written as JSON text"


def to_jsonable(value: Any, _depth: int = 0, _seen: frozenset[int] = frozenset()) -> Any:
    """``value`` as plain JSON data (dict, list, str, int, float, bool, None)."""
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str:
        return _text(value)
    if kind is int:
        return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else str(value)
    if kind is float:
        return value if math.isfinite(value) else repr(value)
    if kind is WrittenJSON:
        return value.fragment
    if kind is orjson.Fragment:
        return to_jsonable(_fragment_value(value), _depth, _seen)
    if _depth >= MAX_DEPTH:
        # Refused, as the write path refuses what orjson writes this deep: never cut short as its text.
        raise stated(UnwritableValueError(
            f"the value nests deeper than {MAX_DEPTH} levels: flatten it or record it as text"))
    if isinstance(value, (dict, list, tuple, set, frozenset)) or dataclasses.is_dataclass(value):
        if id(value) in _seen:
            return "[cycle]"
        _seen = _seen | {id(value)}
    if isinstance(value, dict):
        out = {written_key(k): to_jsonable(v, _depth + 1, _seen) for k, v in value.items()}
        if len(out) < len(value):
            raise stated(UnwritableValueError(key_collision(value)), KEYS_COLLIDE)
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, _depth + 1, _seen) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(v, _depth + 1, _seen) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=repr)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, _depth + 1, _seen)
    if isinstance(value, int):
        return to_jsonable(int(value), _depth, _seen)
    if isinstance(value, float):
        return to_jsonable(float(value), _depth, _seen)
    if isinstance(value, str):  # the text it holds, as orjson writes it (its __str__ may say something else)
        return _text(str.__str__(value))
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, Decimal, PurePath)):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name), _depth + 1, _seen) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return to_jsonable(dump(), _depth + 1, _seen)
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is recorded by repr
            pass
    try:
        text = repr(value)
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ must not break the agent's call
        text = f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    return {"repr": _text(text)}


NOT_STRICT_JSON: Final[str] = "an orjson.Fragment holds text that is not strict JSON"


def _fragment_value(fragment: orjson.Fragment) -> Any:
    """The value an agent's own Fragment holds, read as every door reads JSON: strictly."""
    contents = orjson.dumps(fragment)  # its text as it would be spliced: a Fragment has no other reader
    try:
        return loads(contents, max_bytes=max(len(contents), 1))
    except StrictJSONError as exc:  # its message may quote the agent's keys: stated only by the class
        raise stated(UnwritableValueError(f"{NOT_STRICT_JSON}: {exc.where()}"), NOT_STRICT_JSON) from None


def key_collision(value: Mapping[Any, Any]) -> str:
    """Why a mapping cannot be written: two of its keys are one key once written as text (``1`` and
    ``"1"``, an enum and its value). Keeping only one would lose the other's value without a word."""
    seen: dict[str, Any] = {}
    for key in value:
        text = written_key(key)
        if text in seen:
            return f"keys {seen[text]!r} and {key!r} are the same key {text!r} once written as JSON text"
        seen[text] = key
    return KEYS_COLLIDE


def written_key(key: Any) -> str:
    """A mapping key as the SDK writes it: text, a surrogate pair folded, a lone surrogate escaped (JSON text cannot
    hold it)."""
    if isinstance(key, enum.Enum) and not isinstance(key, str):
        key = key.value
    # A str subclass (a StrEnum member) is written as the text it holds, as orjson writes such a value:
    # orjson refuses the subclass object itself as a key, so it must be a plain str.
    return _text(str.__str__(key) if isinstance(key, str) else str(key))



def _orjson_options() -> int:

    return orjson.OPT_STRICT_INTEGER | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


_OPTIONS: Final[int] = _orjson_options()
"""The options, once: dump_json runs two or three times in a recorded tool call."""


def _has_non_finite(value: Any, *, budget: int | None = None) -> bool | None:
    """Whether a float orjson writes natively is a NaN or an infinity; None once ``budget`` values were looked at."""
    stack = [value]
    while stack:
        if budget is not None:
            budget -= 1
            if budget < 0:
                return None
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, enum.Enum):  # orjson writes a member's value itself, a NaN there as null too
            stack.append(item.value)
    return False


_NULL = re.compile(rb"null")
"""Where orjson may have written a NaN or an infinity. A compiled pattern searches 2 MiB in about
0.55 ms against 1.05 ms for ``b"null" in raw`` (the agent's call pays it for every entry)."""
_SEARCH_FIRST: Final[int] = 16 * 1024
"""Output up to this size is searched for ``null`` before any walk: under a microsecond here."""
_WALK_BUDGET: Final[int] = 1024
"""Values looked at for a NaN before searching the output instead: a few long strings are walked
in microseconds, where searching their 2 MiB of output would take half a millisecond."""


class _FragmentFound(Exception):
    """Raised by :class:`_FragmentFinder` at the first agent ``orjson.Fragment`` it meets."""


def _rebuild(*items: Any) -> None:
    """The callable of :class:`_FragmentFinder`'s reductions; never called (nothing is unpickled)."""


class _FragmentFinder(pickle.Pickler):
    """Walks a value in C, as pickling would, to find an agent's ``orjson.Fragment`` in what orjson
    writes natively. pickle goes through exact dicts, lists and tuples itself and asks
    :meth:`reducer_override` about everything else: a Fragment is reported, a container orjson also
    reads natively (a dict, list or tuple subclass, an enum's value) is walked through its plain
    contents, read without calling the agent's methods, and any other object is not entered (orjson
    hands those to :func:`to_jsonable`, which reads a Fragment strictly itself)."""

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is orjson.Fragment:
            raise _FragmentFound
        if obj is _rebuild:  # the reductions' own callable, written as a global
            return NotImplemented
        # By the object's real type, as orjson decides: an agent's __class__ property is never asked.
        if issubclass(kind, dict):
            return _rebuild, (list(dict.values(obj)),)
        if issubclass(kind, list):
            return _rebuild, (list.copy(obj),)
        if issubclass(kind, tuple):
            return _rebuild, (tuple.__getitem__(obj, slice(None)),)
        if issubclass(kind, enum.Enum):
            return _rebuild, (obj.value,)
        return _rebuild, ()


class _Discard:
    """A file for pickle that keeps nothing (``write`` is the builtin ``len``: no Python frame per write)."""

    write = staticmethod(len)


_DISCARD: Final = _Discard()


_PLAIN: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None), WrittenJSON})
"""What holds no Fragment: plain scalars, and the SDK's own JSON (trusted: it wrote it)."""
_FEW: Final[int] = 64
"""Values a Python walk looks at before the C walk takes over (a 1 KiB tool call holds about 10)."""


def _holds_fragment(value: Any) -> bool:
    """Whether orjson's native pass over ``value`` met an agent's ``orjson.Fragment`` (spliced in unread).

    Plain dicts, lists and tuples of plain values are walked in Python while they are few (0.3 µs
    for a 1 KiB tool call); anything more, or any other object, goes to the C walk (pickle in fast
    mode, its output discarded): 1.4 µs on a 1 KiB tool call, 3.4 ms on 2 MiB of 40,000 small
    dicts, where a walk in Python takes 50 ms.
    """
    stack = [value]
    budget = _FEW
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in _PLAIN:
            continue
        budget -= 1
        if budget < 0 or not (kind is dict or kind is list or kind is tuple):
            return _walked_in_c(value)
        stack.extend(item.values() if kind is dict else item)
    return False


def _walked_in_c(value: Any) -> bool:
    """:func:`_holds_fragment` by :class:`_FragmentFinder`. Anything the walk cannot get through
    answers yes: the slow path is always right, only slower."""
    finder = _FragmentFinder(_DISCARD, protocol=pickle.HIGHEST_PROTOCOL)  # type: ignore[arg-type]
    finder.fast = True  # no memo: nothing is kept of what was walked
    try:
        finder.dump(value)
    except _FragmentFound:
        return True
    except Exception:  # noqa: BLE001 - what pickle cannot walk is left to the slow path
        return True
    return False


def dump_json(value: Any) -> bytes:
    """``to_jsonable(value)`` as JSON bytes, in one native pass whenever that gives the same value.

    orjson writes plain data, tuples, enums, UUIDs and str/int/dict
    subclasses itself and hands every other object to :func:`to_jsonable`.
    Whatever it would write differently from :func:`to_jsonable` makes it
    raise (an integer past 2^53 - 1, a non-string key, a lone surrogate),
    splices it unread (an agent's own ``orjson.Fragment``: looked for by a
    walk in C, :func:`_holds_fragment`) or writes ``null`` (a NaN or an
    infinity: looked for by walking the value when it holds few items, else
    only where the output says ``null``): those values take the slow path.
    So a large entry costs the agent's call one native serialization and one
    native walk, not a walk in Python over its objects.
    """

    try:
        raw = orjson.dumps(value, default=to_jsonable, option=_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        return orjson.dumps(to_jsonable(value))
    if _holds_fragment(value):
        return orjson.dumps(to_jsonable(value))
    if len(raw) <= _SEARCH_FIRST and _NULL.search(raw) is None:
        return raw  # no null written, so no NaN or infinity either
    non_finite = _has_non_finite(value, budget=_WALK_BUDGET)
    if non_finite is None:  # too many values to walk first: search the output, walk only if it says null
        non_finite = _NULL.search(raw) is not None and bool(_has_non_finite(value))
    if non_finite:
        return orjson.dumps(to_jsonable(value))
    return raw
