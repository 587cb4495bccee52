"""Walk a step's data under its rules and hints, and carry out what they say.

The walk decides each position's mode - the first covering rule, made
stricter by any covering hint - and collects every text the detectors must
read under ``scrub``: string values, numbers as their JSON text (a number
too short to hold anything is skipped), and object keys. It then scans those
texts field by field, in batches, under the step's deadline:

* a batch that runs out of time is withheld with every field after it,
  declared ``scrub_failed`` (reason ``budget``) - never written raw;
* a batch in which a detector raises is scanned again field by field, and
  the fields that fail are withheld (reason ``detector_error``);
* a field whose own key was not read is stored under ``[withheld key]``;
* a field larger than the policy's ``max_body_bytes`` (:meth:`Walk.withhold_larger_than`)
  is withheld before the scan, unread (reason ``too_large``); its key alone is read.

Nothing found in a batch is applied until the whole batch has scanned.

The caller's data is never changed (:mod:`bitexact.capture.output`).

A field ("unit" here) is a committed path (bundle-format.md §4.1): ``KEY``,
or ``KEY.SUBKEY`` under an object-valued key, whose own key is then a unit
of its own. Hash-only positions are replaced by ``[hash-only]`` and
committed afterwards (:mod:`bitexact.capture.block`).
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from bitexact.capture.block import HASH_ONLY_PLACEHOLDER, WITHHELD_KEY, WITHHELD_PLACEHOLDER
from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.detectors import holds_credential, is_credential_name
from bitexact.capture.detectors.ordinary import ordinary_member
from bitexact.capture.detectors.credentials import TOKEN as CREDENTIAL_TOKEN
from bitexact.capture.detectors.credentials import (
    argv_secrets,
    mask_marks,
    sensitive_attribute_names,
    sensitive_value_names,
)
from bitexact.capture.detectors.documents import (
    AFTER_SENSITIVE,
    ATTRIBUTES,
    BEFORE_SENSITIVE,
    MIRRORED,
    SECRET_KIND,
    SECRET_MAPS,
    SENSITIVE,
    SENSITIVE_ATTRIBUTES,
    SENSITIVE_VALUES,
)
from bitexact.capture.hints import Hint
from bitexact.capture.output import ROOT, Chain, Output
from bitexact.capture.paths import spell
from bitexact.capture.rules import NONE, StepRules
from bitexact.capture.scan import NAME_MEMBERS, VALUE_MEMBERS, DetectorFailed, Scanner, names_credential, number_text

KEEP, SCRUB, HASH_ONLY = 0, 1, 2
HINT = -1
"""The source of a mode that a hint, not a rule, decided."""
BATCH_CHARS = 256 * 1024
_SIZE_BLOCK = 1024  # texts whose sizes are summed at once when a batch is cut into parts
BYTES_KEY = "b64"
"""A key holding base64 bytes: no detector reads them; declared unscanned."""
TOO_LARGE = "too_large"
"""The reason a field larger than the policy's ``max_body_bytes`` is withheld."""
_KEY = object()  # marks a text that is an object key, not a value
CONTAINERS = (dict, list, tuple)
"""What the walk descends into: canonical JSON writes a tuple as an array, and a subclass as its base."""


def utf8_size(text: str) -> int:
    """The bytes of ``text`` in UTF-8 (a lone surrogate, which canonical JSON refuses later, as three)."""
    if text.isascii():  # a flag CPython keeps: no copy of a large text
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


_STORED_PIECE: Final[int] = 1 << 20
"""Characters escaped at a time by :func:`stored_size`: what it allocates stays a few MiB, whatever the text."""


def stored_size(text: str) -> int:
    """The bytes ``text`` takes in canonical JSON, quotes left out: its UTF-8 with JSON's escapes (six bytes
    for most control characters, two for a quote, a backslash and \\n-like ones), as the store holds it.

    Counted a piece at a time (orjson writes the escapes canonical JSON uses), so a text of control
    characters never costs six times its size in memory to measure. A lone surrogate, which canonical
    JSON refuses later, counts as three bytes, as :func:`utf8_size` counts it.
    """
    total = 0
    for start in range(0, len(text), _STORED_PIECE):
        piece = text[start : start + _STORED_PIECE]
        try:
            total += len(orjson.dumps(piece)) - 2
        except orjson.JSONEncodeError:  # a lone surrogate
            total += len(json.dumps(piece, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2
    return total


def encoded_size(text: str) -> int:
    """The bytes a base64 text encodes: three for every four characters, less its padding."""
    padding = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
    return max(0, len(text) * 3 // 4 - padding)


def replaced_whole(scanner: Scanner, key: Any, value: Any, owner: dict[Any, Any] | None = None) -> bool:
    """Whether ``value``, under the object key ``key`` (of the object ``owner``, when it is one), is a credential
    the credential table replaces whole: not when ``owner`` shows it is ordinary evidence (a model's output token,
    a thinking block's signature, a bare ``key``'s path or word: :func:`ordinary_member`)."""
    return (scanner.by_key and isinstance(key, str) and is_credential_name(key) and holds_credential(value)
            and not (owner is not None and ordinary_member(owner, key, value)))


def credential_pair(scanner: Scanner, value: list[Any]) -> bool:
    """Whether ``value`` is a ``[name, value]`` pair (headers as a list) whose value is replaced whole."""
    return len(value) == 2 and replaced_whole(scanner, value[0], value[1])


PLAIN, NAME_MEMBER, VALUE_MEMBER, SECRET_MAP = 0, 1, 2, 3
"""A member's role in its object: none, a name naming a credential, the value of such a name, a map whose every
member is such a value (a Kubernetes Secret's ``data`` / ``stringData``, rules version 9)."""


@dataclass(frozen=True)
class NameValue:
    """An object with a value member and a name member naming a credential (``{"name": "DB_PASSWORD",
    "value": "X"}``): its value members are replaced whole, as a ``[name, value]`` pair's value is, and its
    name members are read as text, never replaced whole (``{"key": "DEPLOY_TOKEN"}`` holds a name, no secret,
    though ``key`` is a table word). Under rules version 9 also Terraform's ``{"sensitive": true, "value": X}``
    (a value member, no name), a Kubernetes Secret (its ``maps``: every member of them is a value member) and
    such a map itself (``every``). Under rules version 10 a Terraform state's resource instance: its
    ``attributes`` member is read as ``attributes`` says (the role of that member is that name/value object); under
    version 11 a ``terraform show -json`` resource or change, its ``values`` / ``before`` / ``after`` members so.
    ``inner``: each such member's key and the name/value object it is read as."""

    names: tuple[str, ...]
    values: tuple[str, ...]
    maps: tuple[str, ...] = ()
    every: bool = False
    inner: tuple[tuple[str, NameValue], ...] = ()

    def role(self, key: Any) -> Role:
        """The role of the member stored under ``key``."""
        if self.every or key in self.values:
            return VALUE_MEMBER
        for name, inner in self.inner:
            if key == name:
                return inner
        if key in self.names:
            return NAME_MEMBER
        return SECRET_MAP if key in self.maps else PLAIN


Role = int | NameValue
"""A member's role: :data:`PLAIN`, :data:`NAME_MEMBER`, :data:`VALUE_MEMBER`, :data:`SECRET_MAP`, or the name/value
object the container it holds is read as (a Terraform instance's ``attributes``, rules version 10)."""
EVERY_VALUE: Final[NameValue] = NameValue((), (), every=True)
"""A Kubernetes Secret's data map read as a name/value object: each of its members is a value."""


NAME_VALUE_KEYS: Final[frozenset[str]] = frozenset({"kind", "value", "Value", SENSITIVE_ATTRIBUTES, SENSITIVE_VALUES,
                                                     AFTER_SENSITIVE, BEFORE_SENSITIVE})
"""Every key :func:`name_value` looks for before it can read an object as a name/value object: one holding none
of them is none (``NAME_VALUE_KEYS.isdisjoint(value)``, a loop in C over the object's keys, answers for it
without the call). Kept in step with :func:`name_value` (tests/capture/test_clean_walk22.py)."""


def name_value(scanner: Scanner, value: dict[Any, Any]) -> NameValue | None:
    """``value`` as a name/value object whose name names a credential, when the credentials rule is on.

    A few lookups for any other object (``kind``, ``value``, ``Value``, and when it holds no value member
    ``sensitive_attributes``, ``sensitive_values``, ``after_sensitive``, ``before_sensitive``): this runs for every
    object of a step."""
    if not scanner.by_key:
        return None
    if "kind" in value:
        secret = _secret_maps(value)
        if secret is not None:
            return secret
    if not ("value" in value or "Value" in value):
        # rules version 10: a Terraform state's resource instance (no value member); 11: terraform show -json's
        # resources and a plan's changes (their mirrors)
        if SENSITIVE_ATTRIBUTES in value:
            return _sensitive_attributes(value)
        if SENSITIVE_VALUES in value or AFTER_SENSITIVE in value or BEFORE_SENSITIVE in value:
            return _mirrored(value)
        return None
    names: tuple[str, ...] = ()
    for key in NAME_MEMBERS:  # a plain loop: most objects with a value member name no credential
        if key not in value:
            continue
        name = value[key]
        if type(name) is str:
            if not names_credential(name):
                continue
        elif not (isinstance(name, str) and names_credential(str.__str__(name))):  # a subclass, as its text
            continue
        names += (key,)
    if not names:
        if value.get(SENSITIVE) is True and "value" in value:  # Terraform's sensitive output
            return NameValue((), ("value",))
        return None
    return NameValue(names, tuple(key for key in VALUE_MEMBERS if key in value))


def _secret_maps(value: dict[Any, Any]) -> NameValue | None:
    """``value`` as a Kubernetes Secret (``kind`` ``"Secret"``): its ``data`` / ``stringData`` members that are
    objects, each read as :data:`EVERY_VALUE`; None for any other kind, or a Secret without such a map."""
    kind = value["kind"]
    if not (kind == SECRET_KIND and isinstance(kind, str)):
        return None
    maps = tuple(key for key in SECRET_MAPS if isinstance(value.get(key), dict) and value[key])
    return NameValue((), (), maps) if maps else None


def _sensitive_attributes(value: dict[Any, Any]) -> NameValue | None:
    """``value`` as a Terraform state's resource instance: its ``attributes`` object's members that the first
    ``get_attr`` step of a ``sensitive_attributes`` path names (a path deeper than one step replaces the whole
    attribute it opens in); None when no path names a member of an ``attributes`` object."""
    attributes = value.get(ATTRIBUTES)
    if not isinstance(attributes, dict):
        return None
    names = tuple(name for name in sensitive_attribute_names(value[SENSITIVE_ATTRIBUTES]) if name in attributes)
    return NameValue((), (), inner=((ATTRIBUTES, NameValue((), names)),)) if names else None


def _mirrored(value: dict[Any, Any]) -> NameValue | None:
    """``value`` as a resource or a plan's change of ``terraform show -json`` (rules version 11): for each mirror it
    holds (:data:`~bitexact.capture.detectors.documents.MIRRORED`), the members of the object mirrored that it marks
    (:func:`sensitive_value_names`), or the whole member when the mirror is ``true`` (or a list holding a ``true``
    leaf: an output's list); None when it marks none."""
    whole: tuple[str, ...] = ()
    inner: tuple[tuple[str, NameValue], ...] = ()
    for mirror, mirrored in MIRRORED.items():
        if mirror not in value or mirrored not in value:
            continue
        mask, member = value[mirror], value[mirrored]
        if isinstance(mask, dict):
            names = tuple(sensitive_value_names(mask, member))
            if names:
                inner += ((mirrored, NameValue((), names)),)
        elif mask_marks(mask):
            whole += (mirrored,)
    return NameValue((), whole, inner=inner) if whole or inner else None


def inner_pair(scanner: Scanner, value: dict[Any, Any], role: Role) -> NameValue | None:
    """How an object stored in a member of ``role`` is read (:func:`name_value`): a Secret's map as
    :data:`EVERY_VALUE`, a Terraform instance's ``attributes`` as its paths say, any other object by what it
    holds."""
    if not role:  # nearly every object: PLAIN first, before any other test
        return name_value(scanner, value)
    if isinstance(role, NameValue):
        return role
    return EVERY_VALUE if role == SECRET_MAP and scanner.by_key else name_value(scanner, value)


def role_in(found: NameValue | None, key: Any) -> Role:
    """The role of ``key``'s member in an object read as ``found`` (:func:`name_value`)."""
    return PLAIN if found is None else found.role(key)


def replaced_member(scanner: Scanner, key: Any, value: Any, role: Role, owner: dict[Any, Any]) -> bool:
    """Whether ``value``, an object's member under ``key`` with ``role`` (:func:`name_value`), is replaced
    whole: a name/value object's value holding a credential, or (:func:`replaced_whole`) a value under a key
    that names a credential - but never a name/value object's name. ``owner`` is the object holding it."""
    if role == VALUE_MEMBER:
        return holds_credential(value)
    return role == PLAIN and replaced_whole(scanner, key, value, owner)


def argv_passwords(scanner: Scanner, value: list[Any]) -> dict[int, tuple[int, int]]:
    """The passwords of ``value`` read as an argv list (:func:`argv_secrets`), when the credentials rule is on."""
    return argv_secrets(value) if scanner.by_key else {}


@dataclass
class Unit:
    """A committed field, or the top-level key of an object-valued field."""

    chain: Chain
    original: Any
    first: int = 0
    end: int = 0
    key_item: int | None = None
    key_read: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    source: int | None = None
    withheld: str | None = None
    children: list[int] = field(default_factory=list)
    encoded_bytes: int = 0
    """The bytes its ``b64`` values encode (kept unscanned, so not among the walk's texts)."""

    @property
    def container(self) -> int:
        """The position of the container holding the field (see :class:`Output`)."""
        return int(self.chain[-1][0])

    @property
    def key(self) -> Any:
        """The field's key in its container, as captured."""
        return self.chain[-1][1]


@dataclass
class HashOnly:
    """A position to commit hash-only: where it is, its value and what decided it."""

    chain: Chain
    value: Any
    source: int
    linkable: bool
    unit: int


class Walk:
    """One step's walk; see the module docstring."""

    def __init__(
        self,
        rules: StepRules,
        hints: tuple[Hint, ...],
        scanner: Scanner,
        *,
        skip_paths: frozenset[str] = frozenset(),
    ) -> None:
        self.rules = rules
        self.scanner = scanner
        self.skip_paths = skip_paths
        self.hint_at: dict[tuple[str, ...], int] = {}
        for hint in hints:
            self.hint_at[hint.segments] = max(hint.strictness, self.hint_at.get(hint.segments, 0))
        # Deeper than a committed path, modes change only through *.NAME rules.
        self.uniform = not rules.by_name
        self.texts: list[str] = []
        # Parallel lists, one entry per text (not a tuple per text: tuples are
        # tracked by the garbage collector, and millions of them make its
        # passes grow with the step, so the walk would not stay linear).
        self.ref_container: list[int] = []  # the position of the container holding the text
        self.ref_key: list[Any] = []
        self.ref_source: list[int] = []
        self.ref_context: list[Any] = []  # the key a value is stored under, or _KEY for a key
        self.units: list[Unit] = []
        self.hash_only: list[HashOnly] = []
        self.unscanned: list[tuple[Chain, int, int]] = []
        self.too_large: list[int] = []  # the units withheld for their size, before the scan
        self.out = Output({})
        self.unit = -1

    def writable(self, position: int) -> Any:
        """The output copy of the container at ``position`` (see :class:`Output`)."""
        return self.out.writable(position)

    def _enter(self, container: Any, parent: int, key: Any, depth: int) -> int:
        return self.out.enter(container, parent, key, depth)

    # -- modes ------------------------------------------------------------

    def _mode(self, rule: int, hint: int) -> tuple[int, int]:
        """The strictness at a position and its source (a rule index, or HINT)."""
        by_rule = self.rules.mode(rule)
        if hint > by_rule:
            return hint, HINT
        return by_rule, rule

    def _linkable(self, source: int) -> bool:
        chosen = self.rules.rule(source) if source >= 0 else None
        return bool(chosen and chosen.linkable)

    # -- collection -------------------------------------------------------

    def _new_unit(self, chain: Chain, original: Any) -> Unit:
        unit = Unit(chain, original, first=len(self.texts))
        self.units.append(unit)
        self.unit = len(self.units) - 1
        return unit

    def _close_unit(self) -> None:
        self.units[self.unit].end = len(self.texts)

    def _count(self, detector: str, source: int) -> None:
        unit = self.units[self.unit]
        unit.counts[detector] += 1
        if unit.source is None:
            unit.source = source

    def run(self, data: dict[str, Any]) -> None:
        """Decide every position and collect what to scan; then :meth:`scan` and :meth:`finish`."""
        self.out = Output(data)
        star = self.rules.star
        by_key = self.rules.by_key
        by_name = self.rules.by_name
        root_mode, _ = self._mode(star, 0)
        pair = name_value(self.scanner, data)
        for key, value in data.items():
            rule = min(star, by_key.get(key, NONE), by_name.get(key, NONE))
            hint = self.hint_at.get((key,), 0)
            mode, source = self._mode(rule, hint)
            chain: Chain = ((ROOT, key),)
            role = role_in(pair, key)
            if (
                isinstance(value, dict)
                and value
                and mode != HASH_ONLY
                and not (self.skip_paths and spell([key]) in self.skip_paths)
                # A credential-named key holding an object is one field, replaced whole (as one level down).
                and not (mode == SCRUB and replaced_member(self.scanner, key, value, role, data))
            ):
                # An object-valued key: its key is a unit of its own, each sub-key a field.
                top = self._new_unit(chain, value)
                top_index = self.unit
                if max(root_mode, mode) >= SCRUB and isinstance(key, str):
                    top.key_item = self._key_text(ROOT, key, source)
                self._close_unit()
                inner = self._enter(value, ROOT, key, 1)
                pair_inside = inner_pair(self.scanner, value, role)
                for sub, item in value.items():
                    sub_rule = min(rule, self.rules.by_subkey.get((key, sub), NONE), by_name.get(sub, NONE))
                    sub_hint = max(hint, self.hint_at.get((key, sub), 0))
                    self._new_unit((*chain, (inner, sub)), item)
                    top.children.append(self.unit)
                    self._place(inner, sub, item, chain, sub_rule, sub_hint, mode, 2, unit_key=True,
                                role=role_in(pair_inside, sub), owner=value)
                    self._close_unit()
                self.unit = top_index
                continue
            self._new_unit(chain, value)
            self._place(ROOT, key, value, (), rule, hint, root_mode, 1, unit_key=True, role=role, owner=data)
            self._close_unit()

    def _unscanned(self, chain: Chain, source: int, value: str) -> None:
        """A ``b64`` value under scrub: kept unread and declared unscanned; its bytes count to its field's size."""
        self.unscanned.append((chain, source, self.unit))
        self.units[self.unit].encoded_bytes += encoded_size(value)

    def _ref(self, text: str, container: int, key: Any, source: int, context: Any) -> None:
        self.texts.append(text)
        self.ref_container.append(container)
        self.ref_key.append(key)
        self.ref_source.append(source)
        self.ref_context.append(context)

    def _key_text(self, container: int, key: str, source: int) -> int:
        self._ref(key, container, key, source, _KEY)
        return len(self.texts) - 1

    def _place(
        self,
        container: int,
        key: Any,
        value: Any,
        parents: Chain,
        rule: int,
        hint: int,
        parent_mode: int,
        depth: int,
        *,
        unit_key: bool = False,
        role: Role = PLAIN,
        owner: dict[Any, Any] | None = None,
    ) -> None:
        """Decide ``key`` of the container at position ``container`` (holding ``value``) and everything under it;
        ``role`` is the member's in a name/value object (:func:`name_value`), ``owner`` that container's original
        object (a list's item has none)."""
        mode, source = self._mode(rule, hint)
        chain = (*parents, (container, key))
        if self.skip_paths and self.out.spell(chain) in self.skip_paths:
            return  # already declared by a collector: left as it arrived
        text_key = isinstance(key, str)
        if text_key and max(mode, parent_mode) >= SCRUB:
            index = self._key_text(container, key, source)
            if unit_key:
                self.units[self.unit].key_item = index
        if mode == SCRUB and text_key:
            if replaced_member(self.scanner, key, value, role, owner if owner is not None else {}):
                self.writable(container)[key] = CREDENTIAL_TOKEN
                self._count("credentials", source)
                return
            if key == BYTES_KEY and isinstance(value, str):
                self._unscanned(chain, source, value)
                return
        if mode == HASH_ONLY:
            self.hash_only.append(HashOnly(chain, value, source, self._linkable(source), self.unit))
            self.writable(container)[key] = HASH_ONLY_PLACEHOLDER
            return
        if isinstance(value, CONTAINERS):
            inner = self._enter(value, container, key, depth)
            if mode == SCRUB and self.uniform:
                self._scrub_tree(value, inner, chain, source, key if text_key else None, depth + 1, role)
            else:
                self._mixed(value, inner, chain, rule, hint, mode, source, key if text_key else None, depth + 1,
                            role)
        elif mode == SCRUB:
            self._scalar(container, key, value, source, key if text_key else None)

    def _mixed(
        self,
        value: Any,
        position: int,
        chain: Chain,
        rule: int,
        hint: int,
        mode: int,
        source: int,
        context: str | None,
        depth: int,
        role: Role = PLAIN,
    ) -> None:
        """A container (``value``, at ``position``) where a ``*.NAME`` rule may change the mode below; ``role`` is
        the member's holding it (:func:`inner_pair`)."""
        if isinstance(value, dict):
            by_name = self.rules.by_name
            pair = inner_pair(self.scanner, value, role)
            for key, item in value.items():
                self._place(position, key, item, chain, min(rule, by_name.get(key, NONE)), hint, mode, depth,
                            role=role_in(pair, key), owner=value)
            return
        if mode == SCRUB and self._credential_list(value, position, chain, source, context, depth, (rule, hint)):
            return
        for index, item in enumerate(value):
            if isinstance(item, CONTAINERS):
                inner = self._enter(item, position, index, depth)
                self._mixed(item, inner, (*chain, (position, index)), rule, hint, mode, source, context, depth + 1)
            elif mode == SCRUB:
                self._scalar(position, index, item, source, context)

    def _credential_list(self, value: list[Any], position: int, chain: Chain, source: int, context: str | None,
                         depth: int, mixed: tuple[int, int] | None) -> bool:
        """A list the credentials rule reads whole: a [name, value] pair (headers as a list), whose value under
        a credential name is replaced; an argv list (``["mysql", "-pX"]``), whose passwords are replaced in
        their words (:func:`argv_secrets`), its other words scanned as any list's and an object or a list
        among them walked as its caller walks one (:meth:`_mixed` under ``mixed``'s rule and hint, else
        :meth:`_scrub_tree`)."""
        if credential_pair(self.scanner, value):
            self._scalar(position, 0, value[0], source, None)
            self.writable(position)[1] = CREDENTIAL_TOKEN
            self._count("credentials", source)
            return True
        secrets = argv_passwords(self.scanner, value)
        if not secrets:
            return False
        for index, item in enumerate(value):
            if isinstance(item, CONTAINERS):
                inner, below = self._enter(item, position, index, depth), (*chain, (position, index))
                if mixed is None:
                    self._scrub_tree(item, inner, below, source, context, depth + 1)
                else:
                    self._mixed(item, inner, below, *mixed, SCRUB, source, context, depth + 1)
                continue
            span = secrets.get(index)
            if span is not None:
                item = str.__str__(item)
                item = item[: span[0]] + CREDENTIAL_TOKEN + item[span[1] :]
                self.writable(position)[index] = item
                self._count("credentials", source)
            self._scalar(position, index, item, source, context)  # the rest of a word is scanned as any text
        return True

    def _scalar(self, container: int, key: Any, value: Any, source: int, context: str | None) -> None:
        kind = type(value)
        if kind is str:
            self._ref(value, container, key, source, context)
        elif kind is int:
            if self.scanner.int_needs_scan(value):
                self._ref(str(value), container, key, source, context)
        elif kind is float:
            if self.scanner.float_needs_scan(value):
                self._ref(number_text(value), container, key, source, context)
        elif kind is not bool and isinstance(value, (str, int, float)):
            # A subclass (a StrEnum member, numpy.str_, Markup) is stored as its plain JSON value: it is
            # read as that, never skipped.
            plain = str.__str__(value) if isinstance(value, str) else (float(value) if isinstance(value, float)
                                                                      else int(value))
            self._scalar(container, key, plain, source, context)

    def _scrub_tree(
        self, value: Any, position: int, chain: Chain, source: int, context: str | None, depth: int,
        role: Role = PLAIN,
    ) -> None:
        """A container (``value``, at ``position``) under scrub where nothing below can change the mode; ``role`` is
        the member's holding it (:func:`inner_pair`)."""
        add = self._ref
        by_key = self.scanner.by_key
        floor = self.scanner.int_floor if self.scanner.min_digits else None
        if isinstance(value, dict):
            pair = inner_pair(self.scanner, value, role)
            for key, item in value.items():
                kind = type(item)
                text_key = type(key) is str or isinstance(key, str)
                if text_key:
                    add(key, position, key, source, _KEY)
                    # replaced_member(), inline: this loop runs once per key of a large step.
                    if (replaced_member(self.scanner, key, item, pair.role(key), value) if pair is not None
                            else by_key and is_credential_name(key) and holds_credential(item)
                            and not ordinary_member(value, key, item)):
                        self.writable(position)[key] = CREDENTIAL_TOKEN
                        self._count("credentials", source)
                        continue
                if kind is str:
                    if key == BYTES_KEY:
                        self._unscanned((*chain, (position, key)), source, item)
                        continue
                    add(item, position, key, source, key if text_key else None)
                elif kind is int:
                    if floor is not None and (item >= floor or -item >= floor):
                        add(str(item), position, key, source, key if text_key else None)
                elif kind is dict or kind is list or isinstance(item, CONTAINERS):
                    inner = self._enter(item, position, key, depth)
                    self._scrub_tree(item, inner, (*chain, (position, key)), source, key if text_key else None,
                                     depth + 1, PLAIN if pair is None else pair.role(key))
                elif kind is float or isinstance(item, (str, int)):  # a float, or a subclass (see _scalar)
                    self._scalar(position, key, item, source, key if text_key else None)
            return
        if self._credential_list(value, position, chain, source, context, depth, None):
            return
        for index, item in enumerate(value):
            kind = type(item)
            if kind is str:
                add(item, position, index, source, context)
            elif kind is int:
                if floor is not None and (item >= floor or -item >= floor):
                    add(str(item), position, index, source, context)
            elif kind is dict or kind is list or isinstance(item, CONTAINERS):
                inner = self._enter(item, position, index, depth)
                self._scrub_tree(item, inner, (*chain, (position, index)), source, context, depth + 1)
            elif kind is float or isinstance(item, (str, int)):  # a float, or a subclass (see _scalar)
                self._scalar(position, index, item, source, context)

    # -- the size bound ----------------------------------------------------

    def withhold_larger_than(self, limit: int) -> None:
        """Withhold, before any scan, each field whose value is larger than ``limit`` bytes.

        A field's size is what the scan would read in it - its strings, the
        keys inside it and the numbers long enough to be read - counted as
        stored, in canonical JSON (UTF-8, with JSON's escapes: a control
        character is six bytes), plus the bytes its ``b64`` values encode;
        its own key is not counted. A position no detector reads (kept or
        hash-only by a rule) is not counted either. :meth:`scan` reads only
        their keys.
        """
        for index, unit in enumerate(self.units):
            if unit.withheld is None and self._larger_than(unit, limit):
                unit.withheld = TOO_LARGE
                self.too_large.append(index)

    def _larger_than(self, unit: Unit, limit: int) -> bool:
        texts = self.texts[unit.first : unit.end]
        own = 0 if unit.key_item is None else len(self.texts[unit.key_item])
        chars = sum(map(len, texts)) - own
        # A character is one to six bytes as stored (four in UTF-8, six as a JSON escape such as \u0001):
        # measure only a field that could fall either side.
        if chars + unit.encoded_bytes > limit:
            return True
        if 6 * chars + unit.encoded_bytes <= limit:
            return False
        own_bytes = 0 if unit.key_item is None else stored_size(self.texts[unit.key_item])
        return sum(map(stored_size, texts)) - own_bytes + unit.encoded_bytes > limit

    # -- scanning ---------------------------------------------------------

    def scan(self, deadline: Deadline) -> None:
        """Scan every collected text, unit by unit in batches, under ``deadline``."""
        for index in self.too_large:
            try:
                self._read_key(index, deadline)  # as for a field a detector failed on: a readable key is kept
            except BudgetExhausted:
                pass  # its key unread, stored as [withheld key]; the scan below runs out as well
        order = [i for i, unit in enumerate(self.units) if unit.end > unit.first and unit.withheld is None]
        start = 0
        while start < len(order):
            end = start
            size = 0
            while end < len(order) and (end == start or size < BATCH_CHARS):
                unit = self.units[order[end]]
                size += sum(map(len, self.texts[unit.first : unit.end]))
                end += 1
            batch = order[start:end]
            try:
                self._scan_units(batch, deadline)
            except BudgetExhausted:
                for index in order[start:]:
                    self.units[index].withheld = "budget"
                return
            except DetectorFailed:
                for position, index in enumerate(batch):
                    try:
                        self._scan_units([index], deadline)
                    except BudgetExhausted:
                        for rest in batch[position:] + order[end:]:
                            self.units[rest].withheld = "budget"
                        return
                    except DetectorFailed:
                        self.units[index].withheld = "detector_error"
                        try:
                            self._read_key(index, deadline)
                        except BudgetExhausted:
                            for rest in batch[position + 1 :] + order[end:]:
                                self.units[rest].withheld = "budget"
                            return
            start = end

    def _read_key(self, index: int, deadline: Deadline) -> None:
        """After a field failed, read its key alone: a key the detectors can read is kept."""
        unit = self.units[index]
        if unit.key_item is None:
            return
        try:
            changed = self.scanner.scrub_many([self.texts[unit.key_item]], deadline)
        except DetectorFailed:
            return
        if changed:
            self.out.rename(self.ref_container[unit.key_item], unit.key, changed[0][0])
        unit.key_read = True

    def _parts(self, low: int, high: int) -> Iterator[tuple[int, int]]:
        """The texts ``[low, high)`` in consecutive parts of about :data:`BATCH_CHARS` characters.

        Sizes are summed a block of texts at a time, so a batch of millions
        of short texts costs no Python step per text.
        """
        texts = self.texts
        start = low
        while start < high:
            end = start
            size = 0
            while end < high and size < BATCH_CHARS:
                block = min(high, end + _SIZE_BLOCK)
                size += sum(map(len, texts[end:block]))
                end = block
            yield start, end
            start = end

    def _scan_units(self, batch: list[int], deadline: Deadline) -> None:
        low = self.units[batch[0]].first
        high = self.units[batch[-1]].end
        contexts = self.ref_context
        # A large batch (one large field) is read in parts, so what the scan
        # holds at once never grows with the step: a text's findings are the
        # same whichever texts it is read with, and nothing found is applied
        # until every part of the batch is read.
        changed: dict[int, tuple[str, Counter[str]]] = {}
        for start, end in self._parts(low, high):

            def context_of(index: int, start: int = start) -> str | None:
                context = contexts[start + index]
                return None if context is _KEY else context

            part = self.scanner.scrub_many(self.texts[start:end], deadline, context_of=context_of)
            for index, result in part.items():
                changed[start + index] = result
        firsts = [self.units[u].first for u in batch]
        for item, (new, counts) in sorted(changed.items()):
            container = self.ref_container[item]
            key = self.ref_key[item]
            source = self.ref_source[item]
            if self.ref_context[item] is _KEY:
                self.out.rename(container, key, new)
            else:
                self.writable(container)[key] = new
            owner = self.units[batch[bisect.bisect_right(firsts, item) - 1]]
            owner.counts.update(counts)
            if owner.source is None:
                owner.source = source

    # -- completion ---------------------------------------------------------

    def finish(self) -> dict[str, Any]:
        """Withhold failed units and apply key renames; returns the data to store."""
        withheld: list[Unit] = []
        for unit in self.units:
            if unit.withheld is None:
                continue
            for child in unit.children:
                # The whole object is withheld: nothing is written inside it.
                self.units[child].withheld = "parent"
            if unit.withheld == "parent":
                continue
            withheld.append(unit)
            unit.counts.clear()
            if unit.key_item is not None and not unit.key_read:
                # Its key was not read (or was, in a batch that failed): not kept either.
                self.out.rename(unit.container, unit.key, WITHHELD_KEY)
        self.out.apply_renames()
        # Last, so no copy made by a rename inside a withheld field puts its value back.
        for unit in withheld:
            self.set_field(unit, WITHHELD_PLACEHOLDER)
        return self.out.data()

    def release(self) -> None:
        """Let go of the texts and of every container's place the block will not name, once :meth:`finish` ran.

        Called while the garbage collector is still paused: lists of millions
        of references, still alive when it resumes, would make its first pass
        visit every object they name, at a cost that grows with the step.
        What is left is what :meth:`path` and :meth:`set_field` still need:
        the places of the fields, hash-only and unscanned positions.
        """
        self.texts = []
        self.ref_container = []
        self.ref_key = []
        self.ref_source = []
        self.ref_context = []
        chains = [unit.chain for unit in self.units] + [item.chain for item in self.hash_only]
        chains += [chain for chain, _, _ in self.unscanned]
        self.out.keep_only(position for chain in chains for position, _ in chain)

    def path(self, chain: Chain) -> str:
        """The final block path of a position (after :meth:`finish`)."""
        return self.out.spell(chain)

    @staticmethod
    def captured_path(chain: Chain) -> str:
        """The path of a position as captured, before any key was renamed."""
        return spell([key for _, key in chain])

    def set_field(self, unit: Unit, value: Any) -> None:
        """Store ``value`` for a unit's field in the output (after :meth:`finish`)."""
        self.writable(unit.container)[self.out.stored_key(unit.container, unit.key)] = value

    def withheld_units(self) -> list[Unit]:
        """The units withheld, their parents' children left out."""
        return [u for u in self.units if u.withheld and u.withheld != "parent"]

