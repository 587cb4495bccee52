"""The shadow check is indexed (audit17 F5), and refuses exactly what comparing every pair refused."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bitexact.capture import PolicyError
from bitexact.capture.rules import FieldRule, _implied, parse_rule, parse_rules


def pairwise(raw: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The check as it was before the index (every pair): the refusal's field and message, or None."""
    rules: tuple[FieldRule, ...] = tuple(parse_rule(item, i) for i, item in enumerate(raw))
    for later in rules:
        for earlier in rules[: later.index]:
            if earlier.kind not in ("*", later.kind) or not _implied(earlier.where, later.where):
                continue
            if earlier.covers(later):
                error = PolicyError(
                    f"fields[{later.index}]",
                    f"could never match: fields[{earlier.index}] ({earlier.kind} {earlier.path}) "
                    "comes first and covers every value it names",
                )
                return error.field, str(error)
    return None


def indexed(raw: list[dict[str, Any]]) -> tuple[str, str] | None:
    try:
        parse_rules(raw)
    except PolicyError as exc:
        return exc.field, str(exc)
    return None


KINDS = ["*", "tool_call", "model", "tool_call"]
PATHS = ["*", "a", "b", "a.b", "b.a", "a.c", "*.a", "*.b", "*.c", "c"]
WHERE_VALUES: list[Any] = ["x", "y", 1, 1.0, True, None, 0, False]


def random_rule(rng: random.Random) -> dict[str, Any]:
    rule: dict[str, Any] = {"kind": rng.choice(KINDS), "path": rng.choice(PATHS),
                            "mode": rng.choice(["keep", "scrub", "hash-only"])}
    names = rng.sample(["tool", "name", "id"], rng.choice([0, 0, 1, 1, 2, 3]))
    if names:
        rule["where"] = {name: rng.choice(WHERE_VALUES) for name in names}
    return rule


@pytest.mark.parametrize("seed", range(8))
def test_random_rule_sets_are_refused_exactly_as_the_pairwise_check_refused(seed: int) -> None:
    rng = random.Random(seed)
    refused = accepted = 0
    for _ in range(1000):
        raw = [random_rule(rng) for _ in range(rng.randint(1, 12))]
        expected = pairwise(raw)
        assert indexed(raw) == expected, raw
        refused += expected is not None
        accepted += expected is None
    assert refused > 100 and accepted > 100  # both outcomes exercised


def test_a_large_generated_set_refuses_the_same_rule_with_the_same_message() -> None:
    # The audit's shape (one rule per tool), with shadowed rules placed late among thousands.
    raw: list[dict[str, Any]] = [
        {"kind": "tool_call", "where": {"tool": f"t{i}", "n": i % 7}, "path": f"k{i % 13}", "mode": "hash-only"}
        for i in range(1000)
    ]
    assert indexed(raw) is None and pairwise(raw) is None
    late = [*raw, {"kind": "tool_call", "where": {"tool": "t234", "n": 3, "x": True}, "path": "k0.sub",
                   "mode": "scrub"}]
    assert indexed(late) == pairwise(late) == (
        "fields[1000]",
        "capture policy: fields[1000]: could never match: fields[234] (tool_call k0) comes first and covers "
        "every value it names",
    )
    # A where-less *.NAME rule early on shadows it first: the first earlier rule is named, as before.
    early_name = [*raw[:5], {"kind": "*", "path": "*.sub", "mode": "keep"}, *raw[5:], late[-1]]
    assert indexed(early_name) == pairwise(early_name) == (
        "fields[1001]",
        "capture policy: fields[1001]: could never match: fields[5] (* *.sub) comes first and covers "
        "every value it names",
    )
