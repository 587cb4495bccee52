"""The clean-step shortcut: a small step under one ``scrub`` rule that holds nothing to scrub.

Most steps an agent records hold no card number, IBAN or credential, and
for them the full walk (:mod:`bitexact.capture.walk`) does a great deal of
bookkeeping - a unit per field, a reference per text, a copy-on-write
output - only to hand back the data unchanged with no capture block. For a
1 KiB tool call that bookkeeping was about two thirds of the policy's 70 µs.

:func:`clean` reads a step the way the walk reads it when every position is
under ``scrub`` (no hint, no per-key rule, no collector's prior block): the
same texts (keys, strings, numbers long enough to matter) with the same
contexts (the key a value is stored under). It answers True only when the
walk would change and declare nothing:

* no value under a credential-named key (or a ``[name, value]`` pair, or
  the value of a name/value object whose name names a credential) that the
  credential table replaces whole, and no argv list holding a password;
* no string under ``b64`` (declared unscanned);
* the detectors find nothing in any text. :meth:`Scanner.scrub_many` reads
  every text as it would alone, whichever texts it is joined with, so one
  call over all of them answers for the walk's batches.

Anything else - a finding, a detector that raises, a step too large, too
deep or cyclic - answers False, and the full walk runs from the start, so
what is stored never depends on the shortcut.
"""

from __future__ import annotations

from typing import Any, Final

from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.scan import DetectorFailed, Scanner, number_text
from bitexact.capture.walk import (
    NAME_VALUE_KEYS,
    PLAIN,
    SECRET_MAP,
    NameValue,
    Role,
    argv_passwords,
    credential_pair,
    name_value,
    replaced_member,
    replaced_whole,
)

MAX_CHARS: Final[int] = 64 * 1024
"""Texts larger than this in total take the walk (it scans a large step in parts)."""
MAX_DEPTH: Final[int] = 64
"""Containers nested deeper than this take the walk (which names a cyclic or too-deep step)."""
_BYTES_KEY: Final[str] = "b64"
_PLAIN: Final[frozenset[type]] = frozenset({str, int, float, bool})


class _Unclean(Exception):
    """Internal: the step needs the full walk."""


class _Texts:
    """The texts to scan and their contexts, as the walk collects them under ``scrub``."""

    __slots__ = ("scanner", "texts", "contexts")

    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner
        self.texts: list[str] = []
        self.contexts: list[str | None] = []

    def add(self, text: str, context: str | None) -> None:
        # Their total is checked once the walk ends (clean): the step it walks is at most MAX_CHARS as JSON.
        self.texts.append(text)
        self.contexts.append(context)

    def scalar(self, value: Any, context: str | None) -> None:
        kind = type(value)
        if kind not in _PLAIN and isinstance(value, (str, int, float)):
            raise _Unclean  # a subclass of str or a number: the walk decides what it makes of it
        if kind is str:
            self.texts.append(value)  # add(), without the call: the common case
            self.contexts.append(context)
        elif kind is int:
            if self.scanner.int_needs_scan(value):
                self.add(str(value), context)
        elif kind is float:
            if self.scanner.float_needs_scan(value):
                self.add(number_text(value), context)

    def members(self, value: dict[Any, Any], depth: int) -> None:
        """Every member of an object (the step itself included), each in its role (:func:`name_value`)."""
        # An object holding no key name_value looks for is no name/value object: asked in C, without the call.
        pair = None if NAME_VALUE_KEYS.isdisjoint(value) else name_value(self.scanner, value)
        if pair is None:  # nearly every object: no role to look up
            texts, contexts, scanner = self.texts, self.contexts, self.scanner
            for key, item in value.items():
                if type(key) is not str:
                    self.member(key, item, depth, owner=value)  # a key that is not text, or a subclass's
                    continue
                # member(key, item, depth, PLAIN, value) and, for a string, a dict or a list, value() and scalar()
                # inline: this runs once per key of every step, and each Python call per key was much of its cost.
                texts.append(key)
                contexts.append(None)
                if replaced_whole(scanner, key, item, value):  # the credential rule's own test, never a copy
                    raise _Unclean  # replaced whole by the credential token
                kind = type(item)
                if kind is str:
                    if key == _BYTES_KEY:
                        raise _Unclean  # declared unscanned
                    texts.append(item)
                    contexts.append(key)
                    continue
                if key == _BYTES_KEY and isinstance(item, str):
                    raise _Unclean
                if kind is dict:
                    if depth >= MAX_DEPTH:
                        raise _Unclean
                    if item:  # an empty object holds no text
                        self.members(item, depth + 1)
                elif kind is list:
                    if depth >= MAX_DEPTH:
                        raise _Unclean
                    self.items(item, key, depth)
                else:
                    self.value(item, key, depth)
            return
        for key, item in value.items():
            self.member(key, item, depth, pair.role(key), value)

    def member(self, key: Any, value: Any, depth: int, role: Role = PLAIN, owner: dict[Any, Any] | None = None) -> None:
        """``key: value`` of an object (``owner``), ``role`` its role in a name/value object."""
        text_key = type(key) is str
        if not text_key and isinstance(key, str):
            raise _Unclean  # a str subclass as a key
        if text_key:
            self.texts.append(key)  # add(key, None), without the call: once per key of every step
            self.contexts.append(None)
            # replaced_member(), its common case first: this runs once per key of every step.
            if (replaced_whole(self.scanner, key, value, owner) if role == PLAIN
                    else replaced_member(self.scanner, key, value, role, owner or {})):
                raise _Unclean  # replaced whole by the credential token
            if key == _BYTES_KEY and isinstance(value, str):
                raise _Unclean  # declared unscanned
            if role and (role == SECRET_MAP or isinstance(role, NameValue)):
                raise _Unclean  # a Secret's data map, a state's attributes, a values/before/after mirrored: the walk reads them
        self.value(value, key if text_key else None, depth)

    def value(self, value: Any, context: str | None, depth: int) -> None:
        kind = type(value)
        if kind is dict:
            if depth >= MAX_DEPTH:
                raise _Unclean
            self.members(value, depth + 1)
        elif kind is list:
            if depth >= MAX_DEPTH:
                raise _Unclean
            self.items(value, context, depth)
        elif isinstance(value, (dict, list, tuple)):
            raise _Unclean  # a subclass or a tuple: the walk decides what it makes of it
        else:
            self.scalar(value, context)

    def items(self, value: list[Any], context: str | None, depth: int) -> None:
        """Every item of a list (``context`` the key it is stored under), its depth checked by the caller."""
        if credential_pair(self.scanner, value) or argv_passwords(self.scanner, value):
            raise _Unclean  # a [name, value] pair whose value is replaced whole, an argv list's password
        texts, contexts = self.texts, self.contexts
        for item in value:
            if type(item) is str:  # value() then scalar() of a string, inline: most items are
                texts.append(item)
                contexts.append(context)
            else:
                self.value(item, context, depth + 1)


def clean(data: dict[str, Any], scanner: Scanner, deadline: Deadline) -> bool:
    """True when the walk, every position under ``scrub``, would store ``data`` unchanged and declare nothing.

    Raises :class:`BudgetExhausted` when the deadline passes while it scans
    (the walk would run out too).
    """
    found = _Texts(scanner)
    try:
        found.members(data, 1)
    except (_Unclean, RecursionError):
        return False
    if sum(map(len, found.texts)) > MAX_CHARS:
        return False
    try:
        changed = scanner.scrub_many(found.texts, deadline, context_of=found.contexts.__getitem__)
    except DetectorFailed:
        return False
    except BudgetExhausted:
        raise
    return not changed
