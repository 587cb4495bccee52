"""The hand-kept numbers and guards of the token-shape search agree with the shapes they stand for.

``Shape.width`` (where a token starts, counted back from its mark) and ``_MARK_GUARDS`` (the characters a
frequent mark's shapes hold before it) are written beside ``SHAPES`` for speed and readability; these tests
derive both from each shape's ``before`` pattern, so a shape added or changed without them fails here by
name rather than by a token quietly not found.
"""

from __future__ import annotations

import re
from re import _parser  # type: ignore[attr-defined]

import pytest

from bitexact.capture.detectors.credentials import _MARK_GUARDS
from bitexact.credential_shapes import MARKS, SHAPES, Shape

_LITERAL, _IN, _RANGE, _SUBPATTERN, _BRANCH = (_parser.LITERAL, _parser.IN, _parser.RANGE, _parser.SUBPATTERN,
                                               _parser.BRANCH)


def _last_chars(items: list[tuple[object, object]]) -> set[str]:
    """Every character the parsed pattern ``items`` can end with (literals, classes, groups, branches)."""
    op, arg = items[-1]
    if op == _LITERAL:
        return {chr(arg)}  # type: ignore[arg-type]
    if op == _IN:
        chars: set[str] = set()
        for inner_op, inner in arg:  # type: ignore[attr-defined]
            if inner_op == _LITERAL:
                chars.add(chr(inner))
            elif inner_op == _RANGE:
                chars.update(chr(c) for c in range(inner[0], inner[1] + 1))
            else:
                raise AssertionError(f"unexpected class item {inner_op}")
        return chars
    if op == _SUBPATTERN:
        return _last_chars(list(arg[-1]))  # type: ignore[index]
    if op == _BRANCH:
        return set().union(*(_last_chars(list(branch)) for branch in arg[1]))  # type: ignore[index]
    raise AssertionError(f"unexpected pattern item {op}")


@pytest.mark.parametrize("shape", SHAPES, ids=[s.before + s.mark for s in SHAPES])
def test_each_shapes_width_is_what_its_before_matches(shape: Shape) -> None:
    low, high = _parser.parse(shape.before).getwidth()
    assert low == high == shape.width


@pytest.mark.parametrize("mark", sorted(_MARK_GUARDS))
def test_each_marks_guard_holds_exactly_the_last_characters_of_its_shapes_prefixes(mark: str) -> None:
    shapes = [s for s in SHAPES if s.mark == mark]
    assert shapes and all(s.before for s in shapes)  # a guard needs a prefix before every shape of its mark
    wanted = set().union(*(_last_chars(list(_parser.parse(s.before))) for s in shapes))
    guard = re.fullmatch(r"\(\?<=\[?([^\]]*)\]?" + re.escape(mark) + r"\)", _MARK_GUARDS[mark])
    assert guard is not None, _MARK_GUARDS[mark]
    assert set(guard.group(1)) == wanted


def test_every_guarded_mark_is_a_mark_of_the_table() -> None:
    assert set(_MARK_GUARDS) <= set(MARKS)
