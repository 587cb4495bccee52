"""A log of many JSON arrays that open mid-log and break off frames in linear time, with the same items.

The decoder once read each such array from where it stood in the whole log: a malformed one cost the
lines before it (the stdlib counts them for the error's position), and the depth count first followed
brackets 400 levels past it. Now ``raw_decode_at`` follows the value only as far as the decoder would
read it and decodes that stretch; what ``frame`` and the Copilot reader return must not change.
"""

from __future__ import annotations

import json
import re
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import STACK_SAFE_DEPTH
from bitexact.sessions import parse, records
from bitexact.sessions.parsers import copilot
from bitexact.sessions.records import KIND_NON_OBJECT, KIND_OBJECT, KIND_TEXT, Item, frame, raw_decode_at

MESSAGE = {"type": "assistant.message", "data": {"content": "hi"}}
TRICKY = {"type": "assistant.message", "data": {"content": ']" [{ \\"} \\\\'}}


# The algorithm before: brackets counted to where the value closes (or 400 deep), then the whole text
# decoded from ``start``. Kept here only as the reference the new one must agree with.
_OLD_STRUCTURE = re.compile(r'[\[\]{}]|"(?:[^"\\]++|\\.)*+"')


def _old_deeper_from(text: str, start: int, limit: int = STACK_SAFE_DEPTH) -> bool:
    if len(text) - start <= limit:
        return False
    depth = 0
    for token in _OLD_STRUCTURE.finditer(text, start):
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if depth > limit:
                return True
        elif first in "]}":
            depth -= 1
            if depth <= 0:
                return False
    return False


def _old_raw_decode_at(text: str, start: int) -> tuple[Any, int]:
    if _old_deeper_from(text, start):
        raise ValueError("nested too deep to decode")
    try:
        return records._strict_decoder.raw_decode(text, start)
    except RecursionError:
        raise ValueError("nested too deep to decode") from None


class _OldReader:
    """The reference, read as a :class:`records.ValueReader` is: each start on its own."""

    def __init__(self, text: str) -> None:
        self.text = text

    def decode_at(self, start: int) -> tuple[Any, int]:
        return _old_raw_decode_at(self.text, start)


def old_frame(text: str) -> list[Item]:
    with mock.patch.object(records, "ValueReader", _OldReader):
        return frame(text)


def old_copilot_parse(text: str) -> Any:
    with mock.patch.object(copilot, "ValueReader", _OldReader):
        return parse(text, "copilot")


def kinds_and_lines(items: list[Item]) -> list[tuple[str, int]]:
    return [(item.kind, item.line) for item in items]


# --- the hostile shapes, small --------------------------------------------------------------------------

def test_bare_brackets_around_a_debug_line_are_text_lines() -> None:
    text = "copilot\n" + "[\ndebug line\n]\n" * 3
    items = frame(text)
    assert items == [Item(KIND_TEXT, 1, "copilot")] + [
        Item(KIND_TEXT, 2 + 3 * block + offset, line)
        for block in range(3)
        for offset, line in enumerate(["[", "debug line", "]"])
    ]
    assert items == old_frame(text)


def test_an_object_then_a_debug_line_inside_brackets_is_text() -> None:
    text = "copilot\n" + '[{"a": 1},\ndebug line\n]\n' * 3
    items = frame(text)
    assert [item.kind for item in items] == [KIND_TEXT] * 10
    assert [item.value for item in items[1:4]] == ['[{"a": 1},', "debug line", "]"]
    assert items == old_frame(text)


def test_arrays_that_never_close_are_text() -> None:
    text = "copilot\n" + '[{"a": 1},\ndebug line\n' * 4
    items = frame(text)
    assert kinds_and_lines(items) == [(KIND_TEXT, number) for number in range(1, 10)]
    assert items[-2:] == [Item(KIND_TEXT, 8, '[{"a": 1},'), Item(KIND_TEXT, 9, "debug line")]
    assert items == old_frame(text)


def test_brackets_quotes_and_escapes_inside_strings_are_text_of_the_value() -> None:
    text = "start\n[\n" + json.dumps(TRICKY) + ",\n" + json.dumps({"k": "[[[[{{{{"}) + "\n]\nafter\n"
    items = frame(text)
    assert items == [
        Item(KIND_TEXT, 1, "start"),
        Item(KIND_OBJECT, 2, TRICKY),
        Item(KIND_OBJECT, 2, {"k": "[[[[{{{{"}),
        Item(KIND_TEXT, 6, "after"),
    ]
    assert items == old_frame(text)


def test_an_array_that_closes_many_lines_later_is_one_value() -> None:
    array = json.dumps([MESSAGE, [1, 2, {"x": [None, True]}], TRICKY, 7], indent=2)
    text = "note\n" + array + "\nlast\n"
    items = frame(text)
    assert kinds_and_lines(items) == [
        (KIND_TEXT, 1), (KIND_OBJECT, 2), (KIND_NON_OBJECT, 2), (KIND_OBJECT, 2), (KIND_NON_OBJECT, 2),
        (KIND_TEXT, array.count("\n") + 3),
    ]
    assert [item.value for item in items if item.kind == KIND_OBJECT] == [MESSAGE, TRICKY]
    assert items == old_frame(text)


def test_an_array_with_crlf_line_breaks_is_one_value() -> None:
    array = json.dumps([MESSAGE, {"b": [1, {}]}], indent=1).replace("\n", "\r\n")
    text = "note\r\n" + array + "\r\n[\r\ndebug\r\n]\r\n"
    assert kinds_and_lines(frame(text)) == [
        (KIND_TEXT, 1), (KIND_OBJECT, 2), (KIND_OBJECT, 2),
        (KIND_TEXT, array.count("\n") + 3), (KIND_TEXT, array.count("\n") + 4), (KIND_TEXT, array.count("\n") + 5),
    ]
    assert frame(text) == old_frame(text)


def test_a_malformed_array_then_a_valid_one() -> None:
    text = '[{"a": 1},\ndebug line\n[\n' + json.dumps(MESSAGE) + "\n]\n"
    items = frame(text)
    assert items == [
        Item(KIND_TEXT, 1, '[{"a": 1},'),
        Item(KIND_TEXT, 2, "debug line"),
        Item(KIND_OBJECT, 3, MESSAGE),
    ]
    assert items == old_frame(text)


def test_a_malformed_array_holding_a_valid_one_keeps_the_valid_one() -> None:
    """The outer array breaks off at the debug line after the inner one: only the inner one is read."""
    text = "[\n[" + json.dumps(MESSAGE) + "]\ndebug line\n"
    assert frame(text) == [Item(KIND_TEXT, 1, "["), Item(KIND_OBJECT, 2, MESSAGE), Item(KIND_TEXT, 3, "debug line")]
    assert frame(text) == old_frame(text)


@pytest.mark.parametrize("tail", ["[", "[\n", '[{"a": 1},', '[{"a": "unterminated', "[\n1,\n", '[{"a": 1}'])
def test_an_array_unclosed_at_the_end_of_the_text_is_text(tail: str) -> None:
    text = json.dumps(MESSAGE) + "\n" + tail
    items = frame(text)
    assert items[0] == Item(KIND_OBJECT, 1, MESSAGE)
    assert [item.kind for item in items[1:]] == [KIND_TEXT] * len(tail.rstrip("\n").split("\n"))
    assert items == old_frame(text)


@pytest.mark.parametrize("inner", ["NaN", "-Infinity", "tru", "01", "1.", "-", '"a\tb"', '"\\x"', '"\\u12"', "1 2",
                                   '{"a" 1}', '{"a": 1,}', "1,]", "[}", "{]", "'a'"])
def test_each_way_to_break_off_is_text_as_before(inner: str) -> None:
    text = "x\n[\n" + inner + "\n]\ny\n"
    items = frame(text)
    assert items[1] == Item(KIND_TEXT, 2, "[")
    assert KIND_OBJECT not in [item.kind for item in items]
    assert items == old_frame(text)


def test_depth_is_counted_as_before() -> None:
    """The guard against the recursive decoder's depth holds for an array read from mid-log."""
    ok = "x\n[\n" + "[" * (STACK_SAFE_DEPTH - 1) + "]" * (STACK_SAFE_DEPTH - 1) + "\n]\n"
    assert kinds_and_lines(frame(ok)) == [(KIND_TEXT, 1), (KIND_NON_OBJECT, 2)]
    deep = "x\n[\n" + "[" * STACK_SAFE_DEPTH + "]" * STACK_SAFE_DEPTH + "\n]\n"
    # The outer array is refused; its one line of 400 levels is read on its own.
    assert kinds_and_lines(frame(deep)) == [(KIND_TEXT, 1), (KIND_TEXT, 2), (KIND_NON_OBJECT, 3), (KIND_TEXT, 4)]
    assert frame(ok) == old_frame(ok) and frame(deep) == old_frame(deep)
    with pytest.raises(ValueError, match="nested too deep to decode"):
        raw_decode_at(deep, 2)
    with pytest.raises(ValueError, match="nested too deep to decode"):  # deep before it would break off
        raw_decode_at("[" * (STACK_SAFE_DEPTH + 1) + "debug", 0)


def test_raw_decode_at_returns_the_end_in_the_whole_text() -> None:
    text = 'head [{"a": "]"}, 1.5e3, null] tail ['
    assert raw_decode_at(text, 5) == ([{"a": "]"}, 1500.0, None], 30)
    assert raw_decode_at(text, 6) == ({"a": "]"}, 16)
    with pytest.raises(json.JSONDecodeError) as error:
        raw_decode_at(text, len(text) - 1)
    assert error.value.pos == 1  # counted from the value's start: the text before it is not read
    # A value that is no array or object is read as the decoder reads it, the brackets after it no part of it.
    assert raw_decode_at("x -12.5e1,[[", 2) == (-125.0, 9)
    assert raw_decode_at('x "a]\\"" [[', 2) == ('a]"', 8)
    assert raw_decode_at("x null]", 2) == (None, 6)
    assert raw_decode_at("x 01", 2) == (0, 3)
    for refused in ("x -", "x NaN", 'x "a\nb"', "x ", "x"):
        with pytest.raises(ValueError):
            raw_decode_at(refused, 2)


# --- the same shapes through the Copilot reader ---------------------------------------------------------

SHAPES = [
    "[\ndebug line\n]\n",
    '[{"a": 1},\ndebug line\n]\n',
    '[{"a": 1},\ndebug line\n',
    "[\n" + json.dumps(TRICKY) + ",\n7\n]\n",
    json.dumps([MESSAGE, {"type": "assistant.message", "data": {"content": "[x]"}}], indent=2) + "\n",
]


def test_copilot_reads_the_valid_arrays_among_malformed_ones() -> None:
    text = "copilot 1.0.3\n" + "".join(SHAPES)
    result = parse(text, "copilot")
    assert [event["data"]["content"] for event in result.events if event["type"] == "assistant.message"] == [
        TRICKY["data"]["content"], "hi", "[x]",
    ]
    assert result.diagnostics == ["line 10: non-object JSON entry skipped"]  # the 7, by its array's line
    assert result == old_copilot_parse(text)


@pytest.mark.parametrize("shape", SHAPES)
def test_copilot_reads_each_shape_as_before(shape: str) -> None:
    text = "copilot 1.0.3\n" + shape * 3 + json.dumps(MESSAGE) + "\n"
    assert parse(text, "copilot") == old_copilot_parse(text)


# --- the same items as before, on generated logs ---------------------------------------------------------

_PIECES = [
    "[", "]", "{", "}", ",", ":", " ", "\n", "\t", "\r", '"', "\\", '\\"', "a", "0", "1", "12", "-", ".", "e", "E", "+",
    "1.5", "1e5", "1.e5", "true", "false", "null", "NaN", "Infinity", "-Infinity", "tru", '"s"', '"\\""', '"]"',
    '"[{"', '"\\\\"', '"\\u00e9"', '"\\u12"', '"\\x"', '"a\nb"', "\x01", "é", "debug line", '"k": ', ", ",
    '[{"a": 1},', "[]", "{}", "\n[\n", "\n[{", "\n]\n",
]
_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet='ab"\\[]{}\n\té', max_size=4),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='k"[}', max_size=2), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _logs(draw: st.DrawFn) -> str:
    """A log of debug lines, JSON (pretty or not, often arrays), and pieces of JSON cut and spliced."""
    parts = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.integers(0, 2))
        if kind == 0:
            parts.append(draw(st.sampled_from(_PIECES)))
        elif kind == 1:
            value = draw(st.lists(_JSON, max_size=3))
            parts.append(json.dumps(value, indent=draw(st.sampled_from([None, 1]))))
        else:
            dumped = json.dumps(draw(_JSON), indent=1)
            parts.append(dumped[:draw(st.integers(0, len(dumped)))])
    separators = st.sampled_from(["", "", "\n", "\r\n", "\ndebug line\n", "\n[\n", "\n[{", "\r\n[\r\n", " "])
    return "".join(part + draw(separators) for part in parts)


def _outcome(read: Any, text: str, start: int) -> Any:
    """What ``read`` returns, or the error it raises with the decoder's message and position in ``text``."""
    try:
        return read(text, start)
    except json.JSONDecodeError as error:
        # The old decoder counted from the text's start, the new one from the value's (only its stretch is read).
        return ("JSONDecodeError", error.msg, error.pos + (0 if read is _old_raw_decode_at else start))
    except ValueError as error:
        return (type(error).__name__, str(error))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(text=_logs())
def test_frame_gives_the_same_items_as_before(text: str) -> None:
    assert frame(text) == old_frame(text)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(text=_logs())
def test_the_copilot_reader_gives_the_same_result_as_before(text: str) -> None:
    assert parse("copilot\n" + text, "copilot") == old_copilot_parse("copilot\n" + text)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(text=_logs())
def test_raw_decode_at_agrees_with_before_at_every_bracket(text: str) -> None:
    """The same value and end, or the same refusal: the decoder's own message at the same place, unless
    the old count refused first for depth (it counted brackets past where the value breaks off)."""
    for start in (match.start() for match in re.finditer(r"[\[{]", text)):
        expected = _outcome(_old_raw_decode_at, text, start)
        got = _outcome(raw_decode_at, text, start)
        if expected == ("ValueError", "nested too deep to decode"):
            assert got[0] in ("_TooDeep", "JSONDecodeError")
        else:
            assert got == expected


def test_values_near_the_depth_limit_agree_with_before() -> None:
    for depth in (STACK_SAFE_DEPTH - 1, STACK_SAFE_DEPTH, STACK_SAFE_DEPTH + 1):
        for close in (depth, depth - 1):
            for inner in ("", "1", "x", '"]"'):
                text = "a\n[\n" + "[" * depth + inner + "]" * close + "\n]\nb\n"
                assert frame(text) == old_frame(text), (depth, close, inner)


# --- cost, counted not timed ----------------------------------------------------------------------------

class _CountingDecoder:
    """Delegates to the strict decoder, adding up the characters it is given to read."""

    def __init__(self) -> None:
        self.read = 0
        self.decoder = records._strict_decoder

    def raw_decode(self, text: str, start: int = 0) -> tuple[Any, int]:
        self.read += len(text) - start
        return self.decoder.raw_decode(text, start)

    def decode(self, text: str) -> Any:
        self.read += len(text)
        return self.decoder.decode(text)


@pytest.mark.parametrize("block", ["[\ndebug line\n]\n", '[{"a": 1},\ndebug line\n]\n', '[{"a": 1},\ndebug line\n'])
def test_the_decoder_reads_each_malformed_array_only_as_far_as_it_goes(block: str) -> None:
    """Before, each array was decoded from where it stood to the end of the log (its error's line counted
    from the log's start): the characters read grew as the square of the count. Now a few per array."""
    for count in (100, 400):
        text = "copilot\n" + block * count
        counter = _CountingDecoder()
        with mock.patch.object(records, "_strict_decoder", counter):
            frame(text)
        assert counter.read <= 2 * len(text)


# --- brackets that open inside one another and never close: each stretch followed once ------------------

_CHAINS = ["[\n", "[", "[{\n", '{"k": [\n', '[ "x",\n', "[1,\n", '["\\q",\n', "[NaN,\n", "[\r\n"]


@st.composite
def _nested_logs(draw: st.DrawFn) -> str:
    """Logs of :func:`_logs`'s parts and of chains of brackets opened one inside another, some closed."""
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 2))
        if kind == 0:
            parts.append(draw(_logs()))
        elif kind == 1:
            depth = draw(st.sampled_from([2, 5, STACK_SAFE_DEPTH - 1, STACK_SAFE_DEPTH, STACK_SAFE_DEPTH + 3]))
            parts.append(draw(st.sampled_from(_CHAINS)) * depth)
        else:
            parts.append(draw(st.sampled_from(["]\n", "]", "}\n", "],\n"])) * draw(st.sampled_from([1, 3, 400])))
    return "".join(parts)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(text=_nested_logs())
def test_frame_gives_the_same_items_as_before_on_nested_brackets(text: str) -> None:
    assert frame(text) == old_frame(text)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(text=_nested_logs())
def test_the_copilot_reader_gives_the_same_result_as_before_on_nested_brackets(text: str) -> None:
    assert parse("copilot\n" + text, "copilot") == old_copilot_parse("copilot\n" + text)


def _refusal(read: Any, start: int) -> Any:
    """What ``read(start)`` returns, or all the error it raises tells (the decoder's position, line and text)."""
    try:
        return read(start)
    except json.JSONDecodeError as error:
        return ("JSONDecodeError", error.msg, error.pos, error.lineno, error.colno, error.doc)
    except ValueError as error:
        return (type(error).__name__, str(error))


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(text=_nested_logs())
def test_a_reader_at_every_bracket_in_turn_reads_as_raw_decode_at(text: str) -> None:
    """What a walk remembers (stops, brackets paused for depth, the decoder's refusal) gives what reading
    each start on its own gives, errors included."""
    reader = records.ValueReader(text)
    for start in (match.start() for match in re.finditer(r"[\[{]", text)):
        assert _refusal(reader.decode_at, start) == _refusal(lambda at: raw_decode_at(text, at), start)


class _CountingSteps:
    """The grammar walker's step patterns, adding up the characters each step reads."""

    def __init__(self) -> None:
        self.read = 0
        self.patches = [
            mock.patch.object(records, name, _CountingStep(getattr(records, name), self))
            for name in ("_ARRAY_OPENED", "_ARRAY_NEXT", "_OBJECT_OPENED", "_OBJECT_NEXT")
        ]

    def __enter__(self) -> _CountingSteps:
        for patch in self.patches:
            patch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for patch in self.patches:
            patch.stop()


class _CountingStep:
    def __init__(self, pattern: re.Pattern[str], counter: _CountingSteps) -> None:
        self.pattern = pattern
        self.counter = counter

    def match(self, text: str, at: int) -> re.Match[str] | None:
        read = self.pattern.match(text, at)
        self.counter.read += read.end() - at if read is not None else 0
        return read


_READER = records.ValueReader


class _OneWalkPerStart:
    """A reader that remembers nothing between starts: what each start cost before."""

    def __init__(self, text: str) -> None:
        self.text = text

    def decode_at(self, start: int) -> tuple[Any, int]:
        return _READER(self.text).decode_at(start)


NESTED = {
    "never closed": "[\n",
    "then broken off": "[\n" * 300 + "debug line\n",
    "objects, then broken off": '[{"k": [\n' * 130 + "debug line\n",
    "closed, a bad escape inside": "[\n" * 300 + '"\\q"\n' + "]\n" * 300,
    "then NaN": "[\n" * 300 + "NaN\n" + "debug line\n",
    "some closed, then broken off": "[\n" * 300 + "[1]\n" * 50 + "debug line\n",
}


def _work(text: str, reader: type = records.ValueReader) -> tuple[int, int, int, int]:
    """Characters the walker read and the decoder was handed, framing ``text`` and reading it as Copilot's."""
    counts = []
    for read in (lambda: frame(text), lambda: parse(text, "copilot")):
        decoder = _CountingDecoder()
        with _CountingSteps() as steps, mock.patch.object(records, "_strict_decoder", decoder), \
                mock.patch.object(records, "ValueReader", reader), mock.patch.object(copilot, "ValueReader", reader):
            read()
        counts += [steps.read, decoder.read]
    return counts[0], counts[1], counts[2], counts[3]


@pytest.mark.parametrize("shape", list(NESTED))
def test_nested_brackets_are_each_read_a_few_times_not_once_a_start(shape: str) -> None:
    """Each line opens a bracket inside the last; read from each start on its own, a stretch of up to 400
    of them was followed (and decoded) again from every line, now it is followed once."""
    text = "copilot\n" + NESTED[shape] * (4000 // NESTED[shape].count("\n"))
    assert all(count <= 3 * len(text) for count in _work(text))
    assert max(_work(text, _OneWalkPerStart)) > 50 * len(text)  # the same count tells the cost it had
