"""An agent's own orjson.Fragment is recorded as the JSON value it holds, read strictly, whichever path
serializes the entry. dump_json's native pass spliced a Fragment unread (a duplicate key then lost one of
its values without a word) while the slow path recorded it as {"repr": "<orjson.Fragment object at ...>"},
which keeps nothing of it; which one an entry got depended on its other values."""

from __future__ import annotations

import collections
import enum
import json
from typing import Any

import orjson
import pytest

import bitexact
from bitexact.sdk import RecordingError
from bitexact.sdk.jsonable import NOT_STRICT_JSON, _holds_fragment, dump_json, to_jsonable
from sdk.conftest import entries

SLOW = 2**60
"""An integer past 2^53 - 1: orjson refuses it natively, so an entry holding one takes the slow path."""


def _results(run_id: str | None) -> list[Any]:
    return [e["data"]["result"] for e in entries(run_id) if e["kind"] == "tool_call"]


def test_a_fragment_is_recorded_as_the_value_it_holds_on_both_paths() -> None:
    text = b'{"rows": [1, 2.5, "\\u00e9"], "big": 123456789012345678901234567890, "nil": null}'
    value = {"rows": [1, 2.5, "é"], "big": "123456789012345678901234567890", "nil": None}
    with bitexact.run() as r:
        r.record_tool_call("cache", result={"doc": orjson.Fragment(text)})
        r.record_tool_call("cache", result={"doc": orjson.Fragment(text), "id": SLOW})
    fast, slow = _results(r.run_id)
    assert fast["doc"] == slow["doc"] == value
    assert slow["id"] == str(SLOW)


@pytest.mark.parametrize(("text", "why"), [
    (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
    (b"NaN", "non-finite JSON constant 'NaN'"),
    (b'{"a": ', "Expecting value"),
    (b"[1] [2]", "Extra data"),
], ids=["duplicate-key", "nan", "cut-short", "two-documents"])
def test_a_fragment_that_is_not_strict_json_is_a_gap_on_both_paths(text: bytes, why: str) -> None:
    with bitexact.run() as r:
        r.record_tool_call("cache", result={"doc": orjson.Fragment(text)})
        r.record_tool_call("cache", result={"doc": orjson.Fragment(text), "id": SLOW})
        r.record_tool_call("cache", result={"after": "the gaps"})
    assert _results(r.run_id) == [{"after": "the gaps"}], "a Fragment that is not strict JSON was recorded"
    # The gap says what is wrong without quoting the agent's keys.
    assert [g.detail for g in r.failures.gaps] == [f"UnwritableValueError: {NOT_STRICT_JSON}"] * 2
    assert "'a'" not in json.dumps([g.detail for g in r.failures.gaps])
    with bitexact.run(strict=True) as strict:
        with pytest.raises(RecordingError, match=NOT_STRICT_JSON) as info:
            strict.record_tool_call("cache", result={"doc": orjson.Fragment(text)})
    assert why in str(info.value.__cause__)


class _Colour(enum.Enum):
    RED = orjson.Fragment(b'{"r": 255}')


class _Mapping(dict):  # type: ignore[type-arg]
    pass


class _Rows(list):  # type: ignore[type-arg]
    pass


_Pair = collections.namedtuple("_Pair", "left right")


class _Opaque:
    """An object orjson does not write natively: it goes to to_jsonable, which reads a Fragment itself."""

    def __init__(self) -> None:
        self.inner = orjson.Fragment(b'{"a": 1, "a": 2}')

    def __reduce__(self) -> Any:  # never asked: the walk does not enter objects orjson does not enter
        raise AssertionError("the walk called the agent's __reduce__")


@pytest.mark.parametrize(("value", "held"), [
    ({"a": [1, {"b": "c"}], "t": (1, 2.5), "n": None}, False),
    ({"deep": [[[[orjson.Fragment(b"1")]]]]}, True),
    ({"colour": _Colour.RED}, True),
    (_Mapping(x=orjson.Fragment(b"1")), True),
    ({"rows": _Rows([orjson.Fragment(b"1")])}, True),
    ({"pair": _Pair(1, orjson.Fragment(b"1"))}, True),
    ({"opaque": _Opaque()}, False),
    ({"set": {1, 2}, "bytes": b"\x00" * 64, "class": _Opaque}, False),
    # Past the few values walked in Python: the C walk reads the rest.
    ({"rows": [{"i": i, "t": (i, "x")} for i in range(200)]}, False),
    ({"rows": [{"i": i} for i in range(200)] + [{"doc": orjson.Fragment(b"1")}]}, True),
], ids=["plain", "nested", "enum-value", "dict-subclass", "list-subclass", "namedtuple", "opaque-object",
        "set-bytes-class", "many-plain", "many-then-a-fragment"])
def test_the_walk_finds_a_fragment_wherever_orjson_would_splice_it(value: Any, held: bool) -> None:
    assert _holds_fragment(value) is held
    # Whatever the walk says, the bytes are to_jsonable's value.
    try:
        expected: Any = to_jsonable(value)
    except ValueError:
        with pytest.raises(ValueError):
            dump_json(value)
        return
    assert orjson.loads(dump_json(value)) == json.loads(json.dumps(expected))


def test_an_sdk_fragment_is_still_spliced_unread() -> None:
    """The SDK's own arguments-as-called (WrittenJSON) are trusted: written by dump_json a moment before."""
    @bitexact.record_tool
    def lookup(query: str, *, limit: int) -> int:
        return limit

    with bitexact.run() as r:
        assert lookup("q", limit=3) == 3
    (call,) = [e["data"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert (call["args"], call["kwargs"]) == (["q"], {"limit": 3})
