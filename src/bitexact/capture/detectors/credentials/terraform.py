"""Terraform's sensitive values: a state's ``sensitive_attributes``, ``terraform show -json``'s mirrors.

docs/capture.md: "Terraform's sensitive values" (under "Object keys and JSON").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from bitexact.capture.detectors.documents import ATTRIBUTES, MIRRORED, MIRRORED_VALUES, MIRRORS, SENSITIVE_ATTRIBUTES
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS, _LONGEST_ALREADY


_SAW_SENSITIVE: Final[int] = 1
_SAW_SENSITIVE_ATTRIBUTES: Final[int] = 2
_SAW_SENSITIVE_VALUES: Final[int] = 4
_PLAIN, _PATHS, _PATH, _STEP = 0, 1, 2, 3
"""A container's part in a Terraform state's instance (rules version 10): none, its ``sensitive_attributes`` list,
one path in it, a path's first step (or a step given alone in the list)."""


@dataclass(slots=True)
class _StateFrame:
    """One open container of a text read for a state's instances (:meth:`CredentialsDetector._state_attributes`)."""

    kind: int
    opened: int
    key: str | None = None  # the last key read, while its value is not
    spans: dict[str, list[tuple[int, int]]] | None = None  # an "attributes" object's members' value spans
    attributes: dict[str, list[tuple[int, int]]] | None = None  # an instance's attributes (its spans)
    names: list[str] | None = None  # an instance's, or its paths list's, sensitive names
    step: dict[str, str] | None = None  # a step's "type" and "value"
    seen: bool = False  # a path: whether its first element was read

    @classmethod
    def opening(cls, owner: _StateFrame | None, char: str, at: int) -> _StateFrame:
        """The frame of a container opening with ``char`` at ``at`` inside ``owner``."""
        kind = _PLAIN
        if owner is not None:
            if char == "[" and owner.key == SENSITIVE_ATTRIBUTES:
                kind = _PATHS
            elif owner.kind == _PATHS:
                kind = _PATH if char == "[" else _STEP
            elif owner.kind == _PATH and not owner.seen and char == "{":
                kind = _STEP
            owner.seen = True
        spans: dict[str, list[tuple[int, int]]] | None = (
            {} if char == "{" and owner is not None and owner.key == ATTRIBUTES else None)
        return cls(kind, at, spans=spans)


@dataclass(slots=True)
class _ShowFrame:
    """One open container of a text read for ``terraform show -json``'s mirrors
    (:meth:`CredentialsDetector._show_values`, rules version 11)."""

    opened: int
    mirror: bool = False  # a mirror (sensitive_values, before_sensitive, after_sensitive) or a container inside one
    key: str | None = None  # the last key read, while its value is not
    spans: dict[str, list[tuple[int, int]]] | None = None  # a mirrored object's members' value spans
    marks: set[str] | None = None  # a mirror object's marked members
    held: bool = False  # a container inside a mirror: it holds a true leaf
    wholes: dict[str, list[tuple[int, int]]] | None = None  # a mirrored member's whole spans, by its key
    objects: dict[str, dict[str, list[tuple[int, int]]]] | None = None  # a mirrored object's spans, by its key
    masks: dict[str, set[str] | None] | None = None  # a mirror's marked members (None: the whole), by its key

    def mark(self) -> None:
        """A ``true`` read in this mirror: the member being read is marked (a mirror object's), or this container
        holds one."""
        if self.marks is not None:
            if self.key is not None:
                self.marks.add(self.key)
        else:
            self.held = True

    def whole(self, key: str, span: tuple[int, int]) -> None:
        """``span``, all of the member ``key`` mirrored: taken when its mirror is ``true``."""
        if self.wholes is None:
            self.wholes = {}
        self.wholes.setdefault(key, []).append(span)

    def mask(self, key: str, marks: set[str] | None) -> None:
        """The mirror ``key`` read: the members it marks, or None when it marks the whole member it mirrors."""
        if self.masks is None:
            self.masks = {}
        self.masks[key] = marks

    def taken(self) -> Iterator[tuple[int, int]]:
        """This object's spans its mirrors mark, once it is read whole."""
        for mirror, marks in (self.masks or {}).items():
            mirrored = MIRRORED[mirror]
            if marks is None:
                yield from (self.wholes or {}).get(mirrored, ())
                continue
            spans = (self.objects or {}).get(mirrored)
            if spans is not None:
                for name in marks:
                    yield from spans.get(name, ())

    def scalar(self, key: str, scalar: re.Match[str]) -> None:
        """The scalar value (:data:`_JSON_SCALAR`) of this object's member ``key``: a mirror's ``true``, or a value to
        take when it is marked."""
        value = scalar.group(1)
        if key in MIRRORS:
            if value == "true":
                self.mask(key, None)
        elif value not in ("true", "false", "null"):
            if self.spans is not None:
                self.spans.setdefault(key, []).append(scalar.span(1))
            if key in MIRRORED_VALUES:
                self.whole(key, scalar.span(1))
        self.key = None

    def closed(self, inner: _ShowFrame, end: int, text: str) -> None:
        """``inner``, the container this one's member :attr:`key` holds, read to its end (``end``)."""
        if self.mirror:
            if inner.held:
                self.mark()  # the member being read, when this is a mirror object
            self.key = None
            return
        key = self.key
        self.key = None
        if key is None:
            return
        if key in MIRRORS:
            if inner.marks is not None:
                self.mask(key, inner.marks)
            elif inner.held:  # a list holding a true: the whole member
                self.mask(key, None)
            return
        if self.spans is None and key not in MIRRORED_VALUES:
            return
        whole = (inner.opened, end)  # a container: taken whole, when taken (sliced only when short)
        if end - inner.opened <= _LONGEST_ALREADY and text[inner.opened : end] in ALREADY_TOKENS:
            return
        if key in MIRRORED_VALUES:
            self.whole(key, whole)
            if inner.spans is not None:
                if self.objects is None:
                    self.objects = {}
                self.objects[key] = inner.spans
        if self.spans is not None:
            self.spans.setdefault(key, []).append(whole)

    @classmethod
    def opening(cls, owner: _ShowFrame | None, char: str, at: int) -> _ShowFrame:
        """The frame of a container opening with ``char`` at ``at`` inside ``owner``."""
        if owner is None:
            return cls(at)
        if owner.mirror:
            return cls(at, True)
        key = owner.key
        if key in MIRRORS:
            return cls(at, True, marks=set() if char == "{" else None)
        return cls(at, spans={} if char == "{" and key in MIRRORED_VALUES else None)
