"""Text and streaming reconciliation (UAS 5.3, T-UAS-020/021).

Three tools, all exact: nothing is trimmed, no separator is inserted, and a
final snapshot never repeats text its deltas already supplied.

* ``FragmentJoiner`` joins *adjacent* delta fragments of one message/channel
  whose metadata envelopes are identical, by plain string concatenation.
  Any other event in between, or any difference in metadata, starts a new
  fragment (no merge across a tool/event boundary).
* ``SnapshotTracker`` reconciles full-message snapshots that carry a message
  identity with the fragments already emitted for it: unchanged adds
  nothing, append-only adds the unreported suffix, a rewrite retires the
  earlier fragments and emits the authoritative text at the snapshot's
  position, keeping the retired source envelopes in ``data.observations``.
* ``reconcile_native_deltas`` handles native ``assistant.message_delta`` /
  ``assistant.reasoning_delta`` events: deltas are retained as extensions,
  and a core message is synthesised only for a message whose final event
  never arrived (interrupted stream), so observed text is never lost.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

Event = dict[str, Any]


def envelope_key(event: Mapping[str, Any]) -> Hashable:
    """Everything about an event except its ``data.content``, as a comparable key."""
    return _Envelope(event).key()


class _Envelope:
    """An event's envelope as it was when pushed (shallow copies), compared with the next push's.

    Two envelopes are the same when their keys are: ``==`` (C speed) settles
    the usual differing case, an adjacent event of another message or time;
    envelopes ``==`` finds equal are then told apart where their keys would
    be and ``==`` is not (``1``, ``1.0`` and ``true``; ``0.0`` and ``-0.0``;
    key order in a nested object) without building either key.
    """

    __slots__ = ("meta", "rest")

    def __init__(self, event: Mapping[str, Any]) -> None:
        meta = dict(event)
        data = meta.pop("data", None)
        if isinstance(data, dict):
            data = dict(data)
            data.pop("content", None)
        self.meta = meta
        self.rest: Any = data

    def key(self) -> str:
        rest = sorted(self.rest.items()) if isinstance(self.rest, dict) else self.rest  # names differ: never values
        return repr((sorted(self.meta.items()), rest))

    def same(self, other: _Envelope) -> bool:
        # Values == tells apart have different keys too (JSON holds no NaN, the one exception).
        if self.meta != other.meta or self.rest != other.rest:
            return False
        if isinstance(self.rest, dict):
            return _members_identical(self.meta, other.meta) and _members_identical(self.rest, other.rest)
        return _members_identical(self.meta, other.meta) and _identical(self.rest, other.rest)


def _members_identical(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """For ``a == b``: whether each member's repr is its twin's (member order aside: keys sort it)."""
    for name, value in a.items():
        kind = type(value)
        if kind is str or value is None:
            continue
        twin = b[name]
        if kind is not type(twin) or not (kind is bool or kind is int or _identical(value, twin)):
            return False
    return True


def _identical(a: Any, b: Any) -> bool:
    """For ``a == b``: whether ``repr(a) == repr(b)``, without building either."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is str or a is None or kind is bool or kind is int:
        return True
    if kind is dict:
        return list(a) == list(b) and all(_identical(value, b[name]) for name, value in a.items())
    if kind is list:
        return all(_identical(x, y) for x, y in zip(a, b))
    return repr(a) == repr(b)  # a float (-0.0 is 0.0 to ==), or anything else


def _joined(before: str, after: str) -> str:
    """``before + after``, with a surrogate pair split between them (a UTF-16 engine cut a character in
    two deltas) joined into the one character it is."""
    if before and after and "\ud800" <= before[-1] <= "\udbff" and "\udc00" <= after[0] <= "\udfff":
        pair = before[-1] + after[0]
        return before[:-1] + pair.encode("utf-16-le", "surrogatepass").decode("utf-16-le") + after[1:]
    return before + after


class FragmentJoiner:
    """Join adjacent same-envelope string fragments in an output list."""

    def __init__(self) -> None:
        self._last: Event | None = None
        self._key: Hashable | _Envelope = None

    def push(self, out: list[Event], event: Event, key: Hashable | None = None) -> Event:
        """Append ``event`` to ``out`` or concatenate it onto the previous fragment.

        With no ``key``, the event's envelope (everything but ``data.content``)
        is its key; a key of its own (``object()``: join nothing) never equals
        an envelope. Returns the event that now holds the text.
        """
        held: Hashable | _Envelope = _Envelope(event) if key is None else key
        content = event.get("data", {}).get("content")
        last = self._last
        if (
            last is not None
            and out
            and out[-1] is last
            and isinstance(content, str)
            and isinstance(last["data"].get("content"), str)
            and (self._key.same(held) if isinstance(self._key, _Envelope) and isinstance(held, _Envelope)
                 else self._key == held)
        ):
            last["data"]["content"] = _joined(last["data"]["content"], content)
            return last
        out.append(event)
        self._last = event
        self._key = held
        return event

    def reset(self) -> None:
        self._last = None


class SnapshotTracker:
    """Fragments emitted per (message identity, channel) and snapshot reconciliation."""

    def __init__(self) -> None:
        self._events: dict[Hashable, list[Event]] = {}
        self._sources: dict[Hashable, list[Any]] = {}

    def fragment(self, identity: Hashable, event: Event, source: Any) -> None:
        """Record the source record of a fragment held by ``event`` (joined or new)."""
        events = self._events.setdefault(identity, [])
        if not any(held is event for held in events):
            events.append(event)
        self._sources.setdefault(identity, []).append(source)

    def text(self, identity: Hashable) -> str | None:
        events = self._events.get(identity)
        if not events:
            return None
        pieces = []
        for event in events:
            content = event["data"].get("content")
            if not isinstance(content, str):
                return None
            pieces.append(content)
        return "".join(pieces)

    def reconcile(self, out: list[Event], identity: Hashable, snapshot: Event, source: Any) -> Event | None:
        """Apply a full snapshot; returns the event appended to ``out``, if any."""
        content = snapshot["data"].get("content")
        known = self.text(identity)
        if known is None or not isinstance(content, str):
            out.append(snapshot)
            self.fragment(identity, snapshot, source)
            return snapshot
        if content == known:
            return None
        if content.startswith(known):
            snapshot["data"]["content"] = content[len(known):]
            out.append(snapshot)
            self.fragment(identity, snapshot, source)
            return snapshot
        retired = self._events.pop(identity, [])
        sources = self._sources.pop(identity, [])
        retired_ids = {id(event) for event in retired}
        out[:] = [event for event in out if id(event) not in retired_ids]
        snapshot["data"]["observations"] = sources
        out.append(snapshot)
        self.fragment(identity, snapshot, source)
        return snapshot


_DELTA_TYPES = {
    "assistant.message_delta": ("assistant.message", "messageId"),
    "assistant.reasoning_delta": ("assistant.reasoning", "reasoningId"),
}

_CHANNELS: dict[str, tuple[str, str, bool]] = {
    **{core: (core, id_key, False) for core, id_key in _DELTA_TYPES.values()},
    **{delta: (core, id_key, True) for delta, (core, id_key) in _DELTA_TYPES.items()},
}
"""Each of the four types :func:`reconcile_native_deltas` reads: its channel's core type, identity key, and
whether it is the delta."""


def reconcile_native_deltas(events: list[Event]) -> list[Event]:
    """Keep native delta events and add a core message for uncovered deltas.

    A delta run is covered when a core event of the same channel with the same
    identity exists anywhere in the stream (the final snapshot), in which case
    nothing is added.  Otherwise the deltas' ``deltaContent`` strings are
    concatenated exactly and a core event carrying the identity is inserted
    right after the last delta of that identity.  Running this on its own
    output adds nothing (idempotent).
    """
    covered: set[tuple[str, Any]] = set()
    last_delta: dict[tuple[str, Any], int] = {}
    texts: dict[tuple[str, Any], list[str]] = {}
    channels = _CHANNELS
    for index, event in enumerate(events):
        kind = event.get("type")
        # One look-up per event: most events are of none of the four types (a str; an odd native type is not).
        channel = channels.get(kind) if isinstance(kind, str) else None
        if channel is None:
            continue
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        core, id_key, delta = channel
        if not delta:
            if id_key in data:
                covered.add((core, repr(data[id_key])))
        elif id_key in data and isinstance(data.get("deltaContent"), str):
            key = (core, repr(data[id_key]))
            last_delta[key] = index
            texts.setdefault(key, []).append(data["deltaContent"])
    inserts: dict[int, list[Event]] = {}
    for key, index in last_delta.items():
        if key in covered:
            continue
        core = key[0]
        id_key = _DELTA_TYPES[f"{core}_delta"][1]
        identity = events[index]["data"][id_key]
        data = {"content": "".join(texts[key]), id_key: identity, "partial": True}
        inserts.setdefault(index, []).append({"type": core, "data": data})
    if not inserts:
        return events
    out: list[Event] = []
    for index, event in enumerate(events):
        out.append(event)
        out.extend(inserts.get(index, ()))
    return out
