"""A session log record nested deep: refused as malformed by counting, before the recursive decoder stands
at the interpreter's limit (where a collection would run the process's finalizers with no stack left)."""

from __future__ import annotations

import json

import pytest

from bitexact.canon import STACK_SAFE_DEPTH
from bitexact.sessions import parse
from bitexact.sessions.records import KIND_MALFORMED, KIND_NON_OBJECT, KIND_OBJECT, KIND_TEXT, decode_json, frame
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


MULTI_LINE_DEEP = "starting\n[\n" + "[" * 5000 + "]" * 5000 + "\n]\n" + json.dumps(INIT) + "\n"


def test_an_array_opening_mid_log_nested_deep_is_text_and_the_stack_is_left_to_others() -> None:
    """An array that opens on a line and closes lines later is read from the middle of the log, where its
    end (so its depth) is not known before it is read: the decoder recursed to the interpreter's limit."""
    assert least_finalizer_room(lambda: frame(MULTI_LINE_DEEP)) > 500
    assert [item.kind for item in frame(MULTI_LINE_DEEP)][-1] == KIND_OBJECT  # the record after it is kept
    assert all(item.kind != KIND_OBJECT or item.value == INIT for item in frame(MULTI_LINE_DEEP))
    shallow = "starting\n[\n" + "[" * 10 + "]" * 10 + "\n]\n"
    assert [(item.kind, item.line) for item in frame(shallow)] == [(KIND_TEXT, 1), (KIND_NON_OBJECT, 2)]


def test_a_deep_embedded_array_in_a_copilot_log_keeps_the_stack_and_the_records_after_it() -> None:
    """The Copilot reader decodes an array opening mid-log itself (raw_decode_at); a parse pauses the
    collector throughout, and raw_decode_at now refuses the array past the safe depth whoever calls it."""
    text = "copilot 1.0.3\n" + "[\n" + "[" * 5000 + "]" * 5000 + "\n]\n" + 't [DEBUG] data: {"choices":[{"message":{"content":"ok"}}]}\n'
    assert least_finalizer_room(lambda: parse(text, "copilot"), range(50, 3000, 50)) > 500
    from bitexact.sessions.records import raw_decode_at
    with pytest.raises(ValueError, match="nested too deep to decode"):
        raw_decode_at(text, text.index("[\n["))
    at = STACK_SAFE_DEPTH + 1
    with pytest.raises(ValueError, match="nested too deep to decode"):  # past the safe depth, short of Python's limit
        raw_decode_at("x " + "[" * at + "]" * at, 2)
    assert raw_decode_at("x [[1]] y", 2) == ([[1]], 7)


def test_a_deep_array_mid_log_is_refused_before_decoding_even_under_a_raised_recursion_limit() -> None:
    """raw_decode_at counted the depth only after decoding: in a process that raised its recursion limit,
    the recursive decoder ran off the C stack on a 300,000-deep array and the process died (SIGSEGV)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.setrecursionlimit(1_000_000)\n"
        "from bitexact.sessions.records import raw_decode_at\n"
        "text = 'x ' + '[' * 300_000 + ']' * 300_000\n"
        "try:\n"
        "    raw_decode_at(text, 2)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "nested too deep to decode"), done.stderr[-500:]
