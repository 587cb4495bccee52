"""A session log record nested deep: refused as malformed by counting, before the recursive decoder stands
at the interpreter's limit (where a collection would run the process's finalizers with no stack left)."""

from __future__ import annotations

import json

import pytest

from bitexact.canon import STACK_SAFE_DEPTH
from bitexact.sessions import parse
from bitexact.sessions.records import KIND_MALFORMED, KIND_OBJECT, KIND_TEXT, decode_json, frame
from stack_room import least_finalizer_room

DEEP = '{"type": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}"
INIT = {"type": "system", "subtype": "init", "session_id": "s1", "model": "m"}


def test_a_deep_record_is_malformed_and_the_stack_is_left_to_others() -> None:
    def decode() -> None:
        with pytest.raises(ValueError, match="nested too deep to decode"):
            decode_json(DEEP)

    assert least_finalizer_room(decode) > 500
    text = json.dumps(INIT) + "\n" + DEEP + "\n" + "[" * 5000 + "]" * 5000 + "\n"
    assert least_finalizer_room(lambda: frame(text)) > 500
    assert [item.kind for item in frame(text)] == [KIND_OBJECT, KIND_MALFORMED, KIND_TEXT]
    assert least_finalizer_room(lambda: frame("[" * 5000 + "]" * 5000)) > 500


def test_a_record_as_deep_as_the_safe_limit_is_read() -> None:
    record = '{"type": "x", "a": ' + "[" * (STACK_SAFE_DEPTH - 1) + "]" * (STACK_SAFE_DEPTH - 1) + "}"
    assert decode_json(record)["type"] == "x"
    (item,) = frame(record)
    assert item.kind == KIND_OBJECT
    deeper = '{"type": "x", "a": ' + "[" * STACK_SAFE_DEPTH + "]" * STACK_SAFE_DEPTH + "}"
    assert [item.kind for item in frame(deeper)] == [KIND_MALFORMED]


def test_an_engine_parse_of_a_log_with_a_deep_record_keeps_the_stack() -> None:
    text = json.dumps(INIT) + "\n" + DEEP + "\n"
    assert least_finalizer_room(lambda: parse(text, "claude"), range(50, 3000, 50)) > 500
