"""``nested_deeper_than``: how deep a JSON text nests, found without recursing, and the strict reader's use
of it (the stack stays shallow however deep the document)."""

from __future__ import annotations

import json
import random
from itertools import accumulate
from typing import Any

import pytest

from bitexact.canon import STACK_SAFE_DEPTH, loads, nested_deeper_than
from bitexact.errors import StrictJSONError
from stack_room import least_finalizer_room


def _depth(value: Any) -> int:
    """The nesting of a Python value, as its JSON text has it (each list or dict one level)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _bracket_depth(text: str) -> int:
    """The deepest point of a text's brackets, strings included: only for texts with no string."""
    return max(accumulate((1 if c in "[{" else -1 for c in text if c in "[]{}"), initial=0))


@pytest.mark.parametrize(
    ("text", "limit", "deeper"),
    [
        ("[]", 0, True),
        ("[]", 1, False),
        ("[" * 5 + "]" * 5, 4, True),
        ("[" * 5 + "]" * 5, 5, False),
        ('{"a":' * 9 + "1" + "}" * 9, 8, True),
        ('{"a":' * 9 + "1" + "}" * 9, 9, False),
        ("[" + "[]," * 500 + "[]]", 2, False),  # a thousand brackets, two levels
        ('["' + "[" * 50 + '"]', 2, False),  # brackets inside a string do not count
        ('["\\"' + "[" * 50 + '"]', 2, False),  # nor after an escaped quote in it
        ('["\\\\"' + ",[" * 50 + "]" * 50 + "]", 2, True),  # an escaped backslash ends no string
        ('[["]]]]]]]"' + ",[" * 9 + "]" * 9 + "]]", 10, True),  # closing brackets in a string hide nothing
        ("[" * 12, 11, True),  # truncated: every bracket still open counts
        ("]" * 5 + "[" * 3, 3, False),
    ],
)
def test_the_depth_of_a_text(text: str, limit: int, deeper: bool) -> None:
    assert nested_deeper_than(text, limit) is deeper


def _value(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([1, None, "", "[x", "]}", '\\"[', "\\\\", 'q"{', "é\u2028", "\\u005b"])
    if rng.random() < 0.5:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}[": _value(rng, depth - 1) for i in range(rng.randint(0, 3))}


def test_the_depth_of_generated_documents_is_exact_and_of_their_prefixes_never_less() -> None:
    rng = random.Random(8)
    checked = 0
    for _ in range(600):
        value = _value(rng, rng.randint(0, 24))
        text = json.dumps(value, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]))
        depth = _depth(value)
        assert [nested_deeper_than(text, limit) for limit in range(28)] == [depth > n for n in range(28)], text
        # A truncated text: the parser recurses as deep as its brackets before the cut, so it is never shallower.
        cut = text[: rng.randint(0, len(text))]
        if '"' not in cut:
            reached = _bracket_depth(cut)
            assert all(nested_deeper_than(cut, limit) for limit in range(reached)), cut
            checked += 1
    assert checked > 50


def test_a_document_far_past_the_limit_is_found_deep_without_recursing() -> None:
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert nested_deeper_than(deep)
    assert not nested_deeper_than("[" * STACK_SAFE_DEPTH + "]" * STACK_SAFE_DEPTH)
    assert nested_deeper_than("[" * (STACK_SAFE_DEPTH + 1) + "]" * (STACK_SAFE_DEPTH + 1))


def test_the_strict_reader_refuses_a_deep_document_with_the_stack_left_to_others() -> None:
    """Refused by counting first, so a collection during the refusal finds the stack as the caller had it."""
    deep = "[" * 5000 + "]" * 5000

    def refuse() -> None:
        with pytest.raises(StrictJSONError, match="nesting deeper than 128 levels is refused"):
            loads(deep)

    assert least_finalizer_room(refuse) > 500
    # Many brackets but shallow: read as ever.
    assert loads("[" + "[1]," * 400 + "[2]]")[-1] == [2]
