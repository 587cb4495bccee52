"""The strict reader (bundle spec §1.1): what it refuses, with what message, and where."""

from __future__ import annotations

import pytest

from bitexact.canon import loads
from bitexact.errors import StrictJSONError


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ('{"a":1,"a":2}', "duplicate key 'a'"),
        ('{"x":{"k":1,"k":1}}', "duplicate key 'k'"),
        ("[NaN]", "non-finite JSON constant 'NaN' is not allowed"),
        ("[Infinity]", "non-finite JSON constant 'Infinity' is not allowed"),
        ("[-Infinity]", "non-finite JSON constant '-Infinity' is not allowed"),
        ("[1e999]", "non-finite number is not allowed"),
        ("[-1e999]", "non-finite number is not allowed"),
        ("[" * 129 + "]" * 129, "nesting deeper than 128 levels is refused"),
        ('{"a":' * 129 + "1" + "}" * 129, "nesting deeper than 128 levels is refused"),
    ],
)
def test_refusals_have_the_spec_message(document: str, message: str) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads(document)
    assert str(info.value) == message


def test_nesting_of_exactly_128_levels_is_accepted() -> None:
    assert loads("[" * 128 + "]" * 128) is not None


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = '{"s": "' + "[" * 500 + '\\"' + "{" * 300 + '"}'
    assert loads(text)["s"].startswith("[[[")


def test_very_deep_input_is_refused_without_exhausting_the_stack() -> None:
    with pytest.raises(StrictJSONError, match="nesting deeper than 128"):
        loads("[" * 100_000 + "]" * 100_000)


def test_invalid_utf8_is_refused_naming_the_byte() -> None:
    with pytest.raises(StrictJSONError) as info:
        loads(b'{"a":"\xff"}')
    assert info.value.position == 6
    assert "invalid UTF-8 at byte 6" in str(info.value)


def test_oversized_input_is_refused_before_parsing() -> None:
    with pytest.raises(StrictJSONError, match="over the limit of 10 bytes"):
        loads(b"[1,2,3,4,5,6]", max_bytes=10)


def test_syntax_errors_say_where() -> None:
    with pytest.raises(StrictJSONError) as info:
        loads('{"a": 1,}')
    assert info.value.position == 8
    assert "line 1 column 9" in str(info.value)


def test_integers_parse_exactly_and_minus_zero_is_integer_zero() -> None:
    assert loads("[9007199254740993, -0, -0.0]") == [9007199254740993, 0, -0.0]
    assert isinstance(loads("-0"), int)


def test_lone_surrogate_escapes_are_read() -> None:
    assert loads('"\\udc00"') == "\udc00"
