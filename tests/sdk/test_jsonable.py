"""The shapes an agent's Python values are recorded in (sdk/jsonable.py): one native pass, same value as the walk."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
import uuid
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

import orjson
import pytest

from bitexact.sdk.jsonable import MAX_SAFE_INT, UnwritableValueError, dump_json, to_jsonable


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Claim:
    number: str
    amount: float


CASES: list[tuple[str, Any, Any]] = [
    ("plain data", {"a": [1, 2.5, "x", None, True]}, {"a": [1, 2.5, "x", None, True]}),
    ("bytes", {"b": b"\x00\xff"}, {"b": {"b64": "AP8="}}),
    ("an integer past 2^53 - 1", {"n": MAX_SAFE_INT + 1}, {"n": str(MAX_SAFE_INT + 1)}),
    ("a NaN", {"x": [1.0, math.nan]}, {"x": [1.0, "nan"]}),
    ("an infinity", {"x": {"y": -math.inf}}, {"x": {"y": "-inf"}}),
    ("a NaN beside a string saying null", {"s": "null", "x": math.inf}, {"s": "null", "x": "inf"}),
    ("the text null and no NaN", {"s": "nullable", "v": None}, {"s": "nullable", "v": None}),
    ("a datetime", {"t": dt.datetime(2026, 11, 30, 1, 2, 3)}, {"t": "2026-11-30T01:02:03"}),
    ("a UUID, a Decimal and a path", [uuid.UUID(int=1), Decimal("1.10"), PurePosixPath("/a/b")],
     ["00000000-0000-0000-0000-000000000001", "1.10", "/a/b"]),
    ("an enum", {"c": Colour.RED}, {"c": "red"}),
    ("a dataclass", Claim("HX-1", 12.5), {"number": "HX-1", "amount": 12.5}),
    ("a set and a tuple", {"s": {3, 1, 2}, "t": (1, "a")}, {"s": [1, 2, 3], "t": [1, "a"]}),
    ("a non-string key", {1: "one"}, {"1": "one"}),
    ("a lone surrogate", {"s": "a\ud800b"}, {"s": "a\\ud800b"}),
    # A valid pair is its astral character, as the canonical form folds it (bundle spec 1.2); a lone one beside it
    # is still escaped.
    ("a surrogate pair", {"s": "a\ud83d\ude00b"}, {"s": "a\U0001F600b"}),
    ("a surrogate pair in a key", {"\ud83d\ude00": 1}, {"\U0001F600": 1}),
    ("a pair and a lone surrogate", {"s": "\ud83d\ude00\udc00"}, {"s": "\U0001F600\\udc00"}),
]


@pytest.mark.parametrize(("what", "value", "expected"), CASES, ids=[c[0] for c in CASES])
def test_dump_json_writes_the_documented_shape(what: str, value: Any, expected: Any) -> None:
    assert orjson.loads(dump_json(value)) == expected
    assert to_jsonable(value) == expected  # the walk and the native pass agree


def test_a_cycle_is_recorded_as_a_marker() -> None:
    looped: dict[str, Any] = {"name": "loop"}
    looped["self"] = looped
    assert orjson.loads(dump_json(looped)) == {"name": "loop", "self": "[cycle]"}


def test_an_object_is_recorded_by_its_repr_even_when_repr_raises() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    class Broken:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert orjson.loads(dump_json({"o": Opaque()})) == {"o": {"repr": "<opaque>"}}
    assert orjson.loads(dump_json({"o": Broken()})) == {"o": {"repr": "<Broken whose repr raised RuntimeError>"}}


def test_a_large_text_entry_takes_the_native_pass_and_keeps_every_byte() -> None:
    text = "null " * 400_000  # 2 MB that says null everywhere, and not one NaN
    raw = dump_json({"result": text})
    assert raw == orjson.dumps({"result": text})


def test_a_nan_among_many_values_is_found_through_the_output() -> None:
    """Past the walk's budget the output is searched for null first: the NaN is still recorded as text."""
    rows: list[Any] = [{"i": i, "v": 1.5} for i in range(5_000)]
    rows[4_321]["v"] = math.nan
    recorded = orjson.loads(dump_json({"rows": rows}))
    assert recorded["rows"][4_321] == {"i": 4_321, "v": "nan"}
    assert recorded["rows"][0] == {"i": 0, "v": 1.5}


def test_keys_that_are_one_key_once_a_pair_is_folded_are_refused() -> None:
    """``{"\\ud83d\\ude00": 1, "\U0001F600": 2}`` would keep one of two values without a word: refused, naming both."""
    value = {"\ud83d\ude00": 1, "\U0001F600": 2}
    with pytest.raises(UnwritableValueError, match="same key"):
        dump_json(value)
    with pytest.raises(UnwritableValueError, match="same key"):
        to_jsonable(value)
