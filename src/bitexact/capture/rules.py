"""Field rules: first match wins, on a kind (or ``*``), an optional ``where``, a path and a mode.

A rule's path is ``KEY`` (a top-level key and everything under it),
``KEY.SUBKEY`` (a committed path, bundle-format.md §4.1 spelling, escaped),
``*`` (everything) or ``*.NAME`` (every value whose key is NAME, at any
depth, and what is under it). The mode is ``keep``, ``scrub`` or
``hash-only``; a hash-only rule may be ``linkable``. A path no rule names is
kept. Among the rules of a step (its kind matches, its ``where`` holds on the
step's own top-level fields), the first that covers a position decides it.

A rule that could never match is refused at load, because the value it was
written for would be stored as captured (capture-controls.md): a kind the
policy does not govern, a path of another shape, a ``where`` field holding a
dot (a nested path, which ``where`` does not read), or a rule that an earlier
rule already covers entirely on every step it applies to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

from bitexact.canon import canonicalize
from bitexact.capture.errors import PolicyError
from bitexact.capture.paths import esc, unesc
from bitexact.errors import CanonicalizationError

Mode = Literal["keep", "scrub", "hash-only"]
MODES: Final[tuple[str, ...]] = ("keep", "scrub", "hash-only")
STRICTNESS: Final[dict[str, int]] = {"keep": 0, "scrub": 1, "hash-only": 2}

# The entry kinds whose data an agent or a tool provides (bundle-format.md §5).
# The product's own kinds (run_meta, run_end, fork, and the audit kinds
# redaction, repair, hold, hold_release) are not governed.
GOVERNED_KINDS: Final[tuple[str, ...]] = (
    "context",
    "decision_record",
    "http_call",
    "human_decision",
    "identity",
    "injected",
    "marker",
    "model",
    "nondet",
    "tool_call",
)
_RULE_KEYS: Final[frozenset[str]] = frozenset({"kind", "where", "path", "mode", "linkable"})

Shape = Literal["all", "key", "subkey", "name"]


@dataclass(frozen=True)
class FieldRule:
    """One rule of a policy's ``fields``, parsed and checked."""

    index: int
    kind: str
    where: tuple[tuple[str, Any], ...]
    path: str
    shape: Shape
    key: str | None
    subkey: str | None
    mode: Mode
    linkable: bool

    def to_json(self) -> dict[str, Any]:
        """The rule as the policy's normalized JSON (used in the digest)."""
        out: dict[str, Any] = {"kind": self.kind, "path": self.path, "mode": self.mode}
        if self.where:
            out["where"] = dict(self.where)
        if self.linkable:
            out["linkable"] = True
        return out

    def applies_to(self, kind: str, data: dict[str, Any]) -> bool:
        """Whether this rule is one of the step's rules (kind and ``where``)."""
        if self.kind != "*" and self.kind != kind:
            return False
        if not self.where:
            return True  # most rules: no generator to make for nothing
        return all(key in data and same_json(data[key], value) for key, value in self.where)

    def covers(self, other: "FieldRule") -> bool:
        """Whether every position ``other`` names is one this rule names too."""
        if self.shape == "all":
            return True
        if self.shape == "key":
            return other.shape in ("key", "subkey") and other.key == self.key
        if self.shape == "subkey":
            return other.shape == "subkey" and (other.key, other.subkey) == (self.key, self.subkey)
        # *.NAME: every position whose last key is NAME.
        if other.shape == "name":
            return other.key == self.key
        if other.shape == "key":
            return other.key == self.key
        # A top-level NAME and what is under it are NAME's positions too: KEY.SUBKEY with KEY = NAME included.
        return other.shape == "subkey" and self.key in (other.key, other.subkey)


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        # A str subclass (a StrEnum) is the plain text it is stored as.
        return isinstance(a, str) and isinstance(b, str) and str.__str__(a) == str.__str__(b)
    return type(a) is type(b) and a == b


def _segment(text: str, field: str) -> str:
    """Unescape one path segment, refusing a stray ``~``."""
    position = text.find("~")
    while position != -1:
        if position + 1 >= len(text) or text[position + 1] not in "01":
            raise PolicyError(field, f"{text!r}: a ~ in a path is written ~0 (and a dot in a key ~1)")
        position = text.find("~", position + 2)
    value = unesc(text)
    if value == "":
        raise PolicyError(field, "a path segment is empty")
    return value


def parse_path(path: object, field: str) -> tuple[Shape, str | None, str | None]:
    """The shape of a rule path, and its key and subkey (unescaped)."""
    if not isinstance(path, str) or path == "":
        raise PolicyError(field, "a path is KEY, KEY.SUBKEY, * or *.NAME")
    if path == "*":
        return "all", None, None
    top, dot, rest = path.partition(".")
    if top == "*":
        if "." in rest or rest == "*":
            raise PolicyError(field, f"{path!r} could never match: *.NAME names one key (a dot in it is ~1)")
        return "name", _segment(rest, field), None
    if "*" in path:
        raise PolicyError(field, f"{path!r} could never match: * stands alone or as *.NAME")
    if not dot:
        return "key", _segment(top, field), None
    if "." in rest:
        raise PolicyError(
            field, f"{path!r} could never match: a path is at most KEY.SUBKEY (a dot in a key is ~1)"
        )
    return "subkey", _segment(top, field), _segment(rest, field)


def _scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def parse_rule(raw: object, index: int) -> FieldRule:
    """One entry of ``fields``; :class:`PolicyError` names the entry and what is wrong."""
    field = f"fields[{index}]"
    if not isinstance(raw, dict):
        raise PolicyError(field, "a rule is an object with kind, path and mode")
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise PolicyError(f"{field}.{unknown[0]}", "unknown rule key (kind, where, path, mode, linkable)")
    for required in ("kind", "path", "mode"):
        if required not in raw:
            raise PolicyError(f"{field}.{required}", "missing")
    kind = raw["kind"]
    if not isinstance(kind, str) or (kind != "*" and kind not in GOVERNED_KINDS):
        raise PolicyError(
            f"{field}.kind",
            f"{kind!r} could never match: the policy governs {', '.join(GOVERNED_KINDS)} (or *)",
        )
    shape, key, subkey = parse_path(raw["path"], f"{field}.path")
    mode = raw["mode"]
    if mode not in MODES:
        raise PolicyError(f"{field}.mode", f"{mode!r} is not keep, scrub or hash-only")
    linkable = raw.get("linkable", False)
    if not isinstance(linkable, bool):
        raise PolicyError(f"{field}.linkable", "must be true or false")
    if linkable and mode != "hash-only":
        raise PolicyError(f"{field}.linkable", "only a hash-only rule can be linkable")
    where: tuple[tuple[str, Any], ...] = ()
    if "where" in raw:
        clause = raw["where"]
        if not isinstance(clause, dict) or not clause:
            raise PolicyError(f"{field}.where", "an object of the step's fields and their values (leave it out to match every step)")
        for name, value in clause.items():
            if name == "":
                raise PolicyError(f"{field}.where", "a field name is empty")
            if "." in name:
                # A step's own fields are its top-level keys: no step has one named "request.method".
                raise PolicyError(
                    f"{field}.where.{esc(name)}",
                    f"{name!r} could never match: where reads the step's own top-level fields by name, "
                    "not a nested path",
                )
            if not _scalar(value):
                raise PolicyError(f"{field}.where.{esc(name)}", "a where value is a string, number, boolean or null")
            try:
                canonicalize(value)  # the digest holds it, and no step's recorded field can hold what it cannot
            except CanonicalizationError as exc:
                raise PolicyError(f"{field}.where.{esc(name)}", f"not a value a record can hold: {exc}") from None
        where = tuple(sorted(clause.items()))
    return FieldRule(index, kind, where, raw["path"], shape, key, subkey, mode, linkable)


def _implied(conditions: tuple[tuple[str, Any], ...], given: tuple[tuple[str, Any], ...]) -> bool:
    """Whether every step ``given`` holds on holds ``conditions`` too (each is one of ``given``'s)."""
    return all(any(name == other and same_json(value, stated) for other, stated in given)
               for name, value in conditions)


def parse_rules(raw: object) -> tuple[FieldRule, ...]:
    """The policy's ``fields``: every rule parsed, and no rule an earlier one shadows."""
    if not isinstance(raw, list):
        raise PolicyError("fields", "a list of rules")
    rules = tuple(parse_rule(item, i) for i, item in enumerate(raw))
    check_shadows(rules)
    return rules


# What a rule names, as the shadow check indexes it: ("all",), ("key", K), ("subkey", K, S) or ("name", N).
_Reach = tuple[str, ...]
_Condition = tuple[str, tuple[str, Any]]


def _reach(rule: FieldRule) -> _Reach:
    if rule.shape == "all":
        return ("all",)
    if rule.shape == "subkey":
        return ("subkey", rule.key or "", rule.subkey or "")
    return (rule.shape, rule.key or "")


def _reaches_covering(rule: FieldRule) -> list[_Reach]:
    """Every reach whose rule :meth:`FieldRule.covers` ``rule`` (as ``covers`` decides, case by case)."""
    key, subkey = rule.key or "", rule.subkey or ""
    if rule.shape == "all":
        return [("all",)]
    if rule.shape == "name":
        return [("all",), ("name", key)]
    if rule.shape == "key":
        return [("all",), ("key", key), ("name", key)]
    return [("all",), ("key", key), ("subkey", key, subkey), ("name", key), ("name", subkey)]


def _json_key(value: Any) -> tuple[str, Any]:
    """A hashable key equal for two scalars exactly when :func:`same_json` holds (1 and 1.0 hash alike)."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("str", str.__str__(value))
    return ("null", None)


def _conditions(rule: FieldRule) -> frozenset[_Condition]:
    return frozenset((name, _json_key(value)) for name, value in rule.where)


def check_shadows(rules: tuple[FieldRule, ...]) -> None:
    """Refuse the first rule an earlier one shadows, naming the first such earlier rule.

    An earlier rule shadows a later one when it applies to every step the later does (the same kind
    or ``*``, and a ``where`` whose every condition the later's also states) and covers every position
    it names. Comparing every pair took 12-19 s for 4,000 rules at each process start (audit17 F5):
    the rules seen so far are indexed by kind, by what they reach and by their ``where``, so a rule is
    compared only with those that could shadow it. The refusal is the one the pairwise check gave.
    """
    # kind -> reach -> where's conditions -> the first rule with them.
    seen: dict[str, dict[_Reach, dict[frozenset[_Condition], FieldRule]]] = {}
    for later in rules:
        conditions = _conditions(later)
        first: FieldRule | None = None
        for kind in {"*", later.kind}:
            by_reach = seen.get(kind, {})
            for reach in _reaches_covering(later):
                for earlier in _implied_in(by_reach.get(reach, {}), conditions):
                    # The index finds candidates; the pairwise test decides, so it never refuses more.
                    if ((first is None or earlier.index < first.index) and earlier.covers(later)
                            and _implied(earlier.where, later.where)):
                        first = earlier
        if first is not None:
            raise PolicyError(
                f"fields[{later.index}]",
                f"could never match: fields[{first.index}] ({first.kind} {first.path}) "
                "comes first and covers every value it names",
            )
        seen.setdefault(later.kind, {}).setdefault(_reach(later), {}).setdefault(conditions, later)


def _implied_in(by_where: dict[frozenset[_Condition], FieldRule], given: frozenset[_Condition]) -> list[FieldRule]:
    """The rules of ``by_where`` whose every condition is one of ``given``.

    Looks up each subset of ``given`` when there are fewer of those than entries, else tests each entry.
    """
    if not by_where:
        return []
    if len(given) < 20 and 1 << len(given) <= len(by_where):
        items = list(given)
        found = []
        for mask in range(1 << len(items)):
            subset = frozenset(item for bit, item in enumerate(items) if mask >> bit & 1)
            rule = by_where.get(subset)
            if rule is not None:
                found.append(rule)
        return found
    return [rule for conditions, rule in by_where.items() if conditions <= given]


NONE: Final[int] = 1 << 30
"""The rule index of a position no rule covers."""


@dataclass(frozen=True)
class StepRules:
    """The rules of one step, indexed for the walk."""

    rules: tuple[FieldRule, ...]
    star: int
    by_key: dict[str, int]
    by_subkey: dict[tuple[str, str], int]
    by_name: dict[str, int]

    @classmethod
    def select(cls, rules: tuple[FieldRule, ...], kind: str, data: dict[str, Any]) -> "StepRules":
        """The rules that apply to a step of ``kind`` holding ``data``."""
        star = NONE
        by_key: dict[str, int] = {}
        by_subkey: dict[tuple[str, str], int] = {}
        by_name: dict[str, int] = {}
        for rule in rules:
            if not rule.applies_to(kind, data):
                continue
            if rule.shape == "all":
                star = min(star, rule.index)
            elif rule.shape == "key":
                by_key.setdefault(rule.key or "", rule.index)
            elif rule.shape == "subkey":
                by_subkey.setdefault((rule.key or "", rule.subkey or ""), rule.index)
            else:
                by_name.setdefault(rule.key or "", rule.index)
        return cls(rules, star, by_key, by_subkey, by_name)

    def strictness_at(self, path: tuple[str, ...]) -> int:
        """How strictly these rules keep the value at ``path`` (keys from the step's top): the first matching
        rule in the order the walk applies them (``*``, then ``KEY`` and ``*.NAME`` at the top,
        ``KEY.SUBKEY`` and ``*.NAME`` below). The walk resolves the same order level by level, as it goes."""
        return self.mode(self.rule_at(path))

    def rule_at(self, path: tuple[str, ...]) -> int:
        """The index of the rule that decides the value at ``path`` (:data:`NONE` when no rule names it)."""
        rule = self.star
        for depth, key in enumerate(path):
            rule = min(rule, self.by_name.get(key, NONE))
            if depth == 0:
                rule = min(rule, self.by_key.get(key, NONE))
            elif depth == 1:
                rule = min(rule, self.by_subkey.get((path[0], key), NONE))
        return rule

    def mode(self, index: int) -> int:
        """The strictness of the rule at ``index`` (keep when none)."""
        return 0 if index >= NONE else STRICTNESS[self.rules[index].mode]

    def rule(self, index: int) -> FieldRule | None:
        """The rule at ``index``, or ``None``."""
        return None if index >= NONE else self.rules[index]
