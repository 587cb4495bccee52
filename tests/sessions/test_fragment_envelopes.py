"""FragmentJoiner joins adjacent fragments whose envelopes (everything but ``data.content``) are identical
(UAS 5.3). It compares envelopes with ``==`` first and tells apart, without building keys, what ``==``
conflates; the verdict must be the one the envelope keys give, which this checks on generated pairs."""

from __future__ import annotations

import copy
import random
from typing import Any

from bitexact.sessions.streaming import FragmentJoiner, envelope_key


def _reference_key(event: dict[str, Any]) -> str:
    """The envelope key as first defined: the sorted members, data's without its content, as repr."""
    data = event.get("data")
    rest = {k: v for k, v in data.items() if k != "content"} if isinstance(data, dict) else data
    meta = {k: v for k, v in event.items() if k != "data"}
    return repr((sorted(meta.items()), sorted(rest.items()) if isinstance(rest, dict) else rest))


_ALIKE = [1, 1.0, True, 0, 0.0, -0.0, False, None, "1", 2**70]


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth == 0 or roll < 0.5:
        return rng.choice(_ALIKE)
    if roll < 0.75:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": _value(rng, depth - 1) for i in rng.sample(range(4), rng.randint(0, 3))}


def _twin(rng: random.Random, value: Any) -> Any:
    """``value``, perhaps with one member swapped for one ``==`` finds equal (or not), or reordered."""
    if isinstance(value, dict):
        items = list(value.items())
        if items and rng.random() < 0.3:
            rng.shuffle(items)
        return {k: _twin(rng, v) for k, v in items}
    if isinstance(value, list):
        return [_twin(rng, v) for v in value]
    if rng.random() < 0.3:
        return rng.choice([x for x in _ALIKE if x == value] or [value])
    return value


def _event(rng: random.Random) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "assistant.message", "data": {"content": "a", "messageId": "m"}}
    for name in rng.sample(["timestamp", "meta", "x"], rng.randint(0, 3)):
        event[name] = _value(rng, 2)
    for name in rng.sample(["created", "metadata", "extra"], rng.randint(0, 3)):
        event["data"][name] = _value(rng, 3)
    return event


def _joins(first: dict[str, Any], second: dict[str, Any]) -> bool:
    out: list[dict[str, Any]] = []
    joiner = FragmentJoiner()
    joiner.push(out, copy.deepcopy(first))
    joiner.push(out, copy.deepcopy(second))
    return len(out) == 1


def test_envelopes_join_exactly_when_their_keys_are_equal() -> None:
    rng = random.Random(5)
    joined = apart = 0
    for _ in range(3000):
        first = _event(rng)
        second = _twin(rng, first)
        second["data"]["content"] = "b"
        same = _reference_key(first) == _reference_key(second)
        assert _joins(first, second) is same, (first, second)
        assert (envelope_key(first) == envelope_key(second)) is same
        joined, apart = joined + same, apart + (not same)
    assert joined > 300 and apart > 300  # both verdicts are exercised


def test_what_equality_conflates_keeps_fragments_apart() -> None:
    base = {"type": "assistant.message", "data": {"content": "a", "created": 1, "metadata": {"a": 1, "b": 2}}}
    for changed in ({"created": 1.0}, {"created": True}, {"metadata": {"b": 2, "a": 1}}):
        other = copy.deepcopy(base)
        other["data"].update(changed)
        other["data"]["content"] = "b"
        assert other == {**base, "data": {**base["data"], **changed, "content": "b"}}
        assert not _joins(base, other), changed
    negative = {"type": "x", "data": {"content": "a", "n": 0.0}}
    assert not _joins(negative, {"type": "x", "data": {"content": "b", "n": -0.0}})
    # Top-level member order is no difference: the keys sort it.
    assert _joins({"type": "x", "t": 1, "data": {"content": "a", "m": 1, "n": 2}},
                  {"t": 1, "type": "x", "data": {"n": 2, "content": "b", "m": 1}})
