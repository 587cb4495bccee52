"""Values of str, int and float subclasses canonicalize as their plain JSON values (bundle spec §1.2), found
in review: an enum of str used to be written as its display name."""

from __future__ import annotations

import enum
import json

import rfc8785

from bitexact.canon import canonicalize


class Colour(str, enum.Enum):
    """A str-mixin enum: a str whose __str__ returns 'Colour.RED', not its value."""

    RED = "red"


def test_str_mixin_enum_value_is_written_as_its_string_value() -> None:
    # A str instance is a JSON string; its value is "red" (json.dumps, rfc8785 agree).
    expected = b'{"k":"red"}'
    assert json.dumps({"k": Colour.RED}, separators=(",", ":")).encode() == expected
    assert rfc8785.dumps({"k": Colour.RED}) == expected
    assert canonicalize({"k": Colour.RED}) == expected  # actual: b'{"k":"Colour.RED"}'


def test_str_mixin_enum_key_is_written_as_its_string_value() -> None:
    expected = b'{"red":1}'
    assert rfc8785.dumps({Colour.RED: 1}) == expected
    assert canonicalize({Colour.RED: 1}) == expected  # actual: b'{"Colour.RED":1}'


def test_str_subclass_with_custom_str_is_written_as_its_content() -> None:
    class Tagged(str):
        def __str__(self) -> str:
            return "something else"

    assert rfc8785.dumps([Tagged("abc")]) == b'["abc"]'
    assert canonicalize([Tagged("abc")]) == b'["abc"]'  # actual: b'["something else"]'
