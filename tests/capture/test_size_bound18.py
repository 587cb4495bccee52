"""The size bound counts a field as stored: canonical JSON's escapes included (mem18).

Before, the bound counted UTF-8 bytes, so text of control characters (six bytes each as stored,
``\\u0001``) within BITEXACT_MAX_BODY_BYTES could make an entry six times the bound: past the store's
256 MiB row bound, the whole entry was refused (an ``invalid_argument`` gap) where withholding the one
field keeps the rest.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.walk import stored_size

LIMIT = 1000
TOO_LARGE = {"mode": "withheld", "cause": "scrub_failed", "reason": "too_large"}


def bounded(limit: int = LIMIT) -> Any:
    return load_policy(env={"BITEXACT_MAX_BODY_BYTES": str(limit), "BITEXACT_CAPTURE_POLICY": "default"})


def fields_of(captured: Any) -> dict[str, Any]:
    return {} if captured.block is None else captured.block["fields"]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("\x01" * (LIMIT // 6), True),  # 166 characters, 996 bytes as stored
        ("\x01" * (LIMIT // 6 + 1), False),  # 167 characters, 167 bytes of UTF-8, 1002 as stored
        ("\x1f" * (LIMIT // 6) + "abcd", True),  # exactly at the bound as stored
        ("\x1f" * (LIMIT // 6) + "abcde", False),
        ("\n" * (LIMIT // 2), True),  # two bytes each: \n
        ("\n" * (LIMIT // 2 + 1), False),
        ('"' * (LIMIT // 2 + 1), False),  # \"
        ("\\" * (LIMIT // 2 + 1), False),  # \\
        ("é" * (LIMIT // 2), True),  # not escaped: its UTF-8, as before
        ("\x7f" * LIMIT, True),  # DEL is not escaped in JSON
    ],
)
def test_a_texts_size_is_its_bytes_as_stored(text: str, kept: bool) -> None:
    data = {"tool": "fetch", "result": text, "note": "n" * LIMIT}  # the step is past the bound: measured
    captured = apply_policy(bounded(), "tool_call", data)
    if kept:
        assert captured.data["result"] == text and "result" not in fields_of(captured)
    else:
        assert captured.data["result"] == "[withheld]"
        assert fields_of(captured) == {"result": TOO_LARGE}
        assert [gap["fields"] for gap in captured.gaps] == [{"result": "too_large"}]
    # Every other field of the entry is kept.
    assert captured.data["note"] == data["note"] and captured.data["tool"] == "fetch"


def test_keys_inside_a_field_count_as_stored_too() -> None:
    # The committed field is result.items; a key under it is read, and stored, as its text is.
    inner = {"items": [{"\x02" * 100: "v" * 380}]}  # 600 + 380 = 980 bytes as stored (480 in UTF-8)
    data = {"tool": "t", "result": inner, "note": "n" * LIMIT}
    assert apply_policy(bounded(979), "tool_call", data).data["result"] == {"items": "[withheld]"}
    assert apply_policy(bounded(980), "tool_call", data).data["result"] == inner


def test_stored_size_is_the_length_canonical_json_gives_the_text() -> None:
    # Across the pieces it measures in (1 Mi characters), with escapes and non-ASCII on either side of a cut.
    text = ("a\x01é\U0001f600\"\\\n" * 200_000)[: (1 << 20) + 5]
    assert stored_size(text) == len(orjson.dumps(text)) - 2
    assert stored_size("\ud800x") == 4  # a lone surrogate: three bytes, as canonical JSON would refuse it later


def test_an_entry_of_control_characters_stays_within_its_fields_bounds_as_stored() -> None:
    # Scaled down from 64 MiB of text against a 256 MiB row: the entry as stored is bounded by its fields.
    data = {"tool": "fetch", "result": "\x01" * LIMIT, "args": ["a" * 10]}
    captured = apply_policy(bounded(), "tool_call", data)
    assert len(orjson.dumps(captured.data)) < 2 * LIMIT
    assert captured.data["args"] == ["a" * 10]
