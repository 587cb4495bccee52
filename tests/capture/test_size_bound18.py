"""The size bound counts a field as stored: canonical JSON's escapes included (mem18).

Before, the bound counted UTF-8 bytes, so text of control characters (six bytes each as stored,
``\\u0001``) within BITEXACT_MAX_BODY_BYTES could make an entry six times the bound: past the store's
256 MiB row bound, the whole entry was refused (an ``invalid_argument`` gap) where withholding the one
field keeps the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, load_policy, open_withheld
from bitexact.capture.walk import stored_size
from bitexact.crypto.keysources import generate_key_file, load_key_file

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


# -- a field its producer withheld as it streamed (an HTTP body let go of; tests/sdk/test_http_memory18.py) --


def _streamed(value: Any, path: str = "response.text") -> tuple[dict[str, Any], bytes]:
    import hashlib

    from bitexact.capture.streamed import streamed_hint

    content = canonicalize({path: value})
    return {path: streamed_hint(hashlib.sha256(content).digest(), len(content))}, content


def test_a_streamed_marker_declares_the_field_as_the_walk_would(tmp_path: Path) -> None:
    key_file = tmp_path / "capture.key"
    generate_key_file(key_file)
    policy = load_policy(env={"BITEXACT_MAX_BODY_BYTES": str(LIMIT), "BITEXACT_CAPTURE_POLICY": "default",
                              "BITEXACT_CAPTURE_KEY": str(key_file)})
    body = "y\x01" * LIMIT
    hints, content = _streamed(body)
    streamed = apply_policy(policy, "http_call", {"response": {"status": 200, "text": "[withheld]"}}, hints=hints)
    whole = apply_policy(policy, "http_call", {"response": {"status": 200, "text": body}, "pad": "p" * LIMIT})
    assert streamed.data["response"] == whole.data["response"]
    assert streamed.block is not None and whole.block is not None
    assert streamed.block["fields"] == whole.block["fields"] == {"response.text": TOO_LARGE}
    ((gap,), (whole_gap,)) = streamed.gaps, whole.gaps
    assert {k: v for k, v in gap.items() if k != "withheld"} == {k: v for k, v in whole_gap.items() if k != "withheld"}
    assert gap["withheld"]["bytes"] == whole_gap["withheld"]["bytes"] == len(content)
    assert open_withheld(gap["withheld"], content, load_key_file(key_file))
    assert open_withheld(whole_gap["withheld"], content, load_key_file(key_file))


def test_a_streamed_field_beside_one_the_walk_withholds_gets_a_gap_of_its_own() -> None:
    hints, _ = _streamed("z" * (2 * LIMIT))
    data = {"request": {"text": "q" * (LIMIT + 1)}, "response": {"status": 200, "text": "[withheld]"}}
    captured = apply_policy(bounded(), "http_call", data, hints=hints)
    assert captured.data == {"request": {"text": "[withheld]"}, "response": {"status": 200, "text": "[withheld]"}}
    assert captured.block is not None
    assert captured.block["fields"] == {"request.text": TOO_LARGE, "response.text": TOO_LARGE}
    assert [gap["fields"] for gap in captured.gaps] == [{"request.text": "too_large"}, {"response.text": "too_large"}]
    assert [gap["withheld"]["digest"] for gap in captured.gaps] == ["dropped: no capture key"] * 2


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("tool_call", {"response": {"text": "[withheld]"}}),  # only an exchange's body streams past
        ("http_call", {"response": {"text": "the body itself"}}),  # a marker stands only for the placeholder
    ],
)
def test_a_marker_anywhere_else_is_a_hint_that_is_not_one(kind: str, data: dict[str, Any]) -> None:
    hints, _ = _streamed("forged")
    captured = apply_policy(bounded(), kind, data, hints=hints)
    assert captured.withheld and captured.gaps[0]["cause"] == "invalid_argument"
    assert captured.gaps[0]["field"].startswith("custody")
