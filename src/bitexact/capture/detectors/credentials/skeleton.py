"""The detector's gates: the literals a text holds, asked of its skeleton before the upper-case passes.

docs/capture.md: "Speed".
"""

from __future__ import annotations

import functools
from collections.abc import Container
from typing import Final


class _EveryLiteral:
    """What :meth:`CredentialsDetector._find` asks its gates of when every pass must run: it holds every literal."""

    def __contains__(self, literal: object) -> bool:
        return True


EVERY_LITERAL: Final[Container[str]] = _EveryLiteral()
"""A ``held`` for :meth:`CredentialsDetector._find` that opens every gate: the passes as they ran before perf23's
gates, the reference their findings are compared with (tests/capture/test_detector_gates23.py)."""

_SKELETON_FROM: Final[int] = 16 * 1024
"""Characters an ASCII text needs for :func:`held_literals` to read its skeleton: a shorter one asks each gate of
the text itself (a recorded call's joined fields are short: the skeleton would cost more than it saves)."""
_COMMON: Final[bytes] = b"abcdefghijklmnopqrstuvwxyz0123456789 "
"""What a text's skeleton leaves out: the characters prose is mostly made of."""


@functools.cache
def _skeleton_key(literal: str) -> bytes:
    """``literal`` as a skeleton holds it: without the :data:`_COMMON` characters (empty: the skeleton cannot tell)."""
    return literal.encode("ascii").translate(None, _COMMON) if literal.isascii() and len(literal) > 1 else b""


class _Skeleton:
    """The literals a long ASCII text holds, asked first of its skeleton: the text without lower-case letters,
    digits and spaces (one ``bytes.translate``, about 0.6 ms/MiB), a few KiB of prose's punctuation and capitals.

    Every occurrence of a literal in the text is, without those characters, an occurrence of the literal's own
    skeleton (:func:`_skeleton_key`) in the text's: a literal whose skeleton the text's lacks is absent, found so
    in a search of a few KiB where the text's own search reads every character (0.4-0.8 ms/MiB each: ``BEARER``,
    ``REQUIREPASS``, ``-P``, ``COPY``...). Any other answer is the text's own ``in``: the answers are exactly
    ``literal in text``'s."""

    __slots__ = ("_text", "_skeleton")

    def __init__(self, text: str) -> None:
        self._text = text
        self._skeleton = text.encode("ascii").translate(None, _COMMON)

    def __contains__(self, literal: object) -> bool:
        if not isinstance(literal, str):
            return False
        key = _skeleton_key(literal)
        if key and key not in self._skeleton:
            return False
        return literal in self._text


def held_literals(text: str) -> Container[str]:
    """What :meth:`CredentialsDetector._find`'s gates ask of ``text``: the text itself, or, for a long ASCII one, its
    :class:`_Skeleton` (the same answers, most of them found in a few KiB)."""
    return _Skeleton(text) if len(text) >= _SKELETON_FROM and text.isascii() else text
