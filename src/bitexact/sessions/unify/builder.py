"""Per-source event building: envelopes, provenance and collection warnings.

A ``SourceBuilder`` owns the normalized event array of one selected source.
It stamps every event with ``provenance`` (component, phase, the path
relative to the runtime root, and the index in the source's normalized
array; T-UAS-055), serializes it at once into its ``SpillStore`` with the
observed ordering key beside it for the interleaver, and collects warnings
that name the source and the cause but never quote the payload (T-UAS-063).
The decoded event trees are not kept: a source costs memory only up to the
store's spill threshold, whatever its size.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bitexact.canon import MAX_DEPTH, nested_deeper_than
from bitexact.sessions.unify.project import MISSING, Projection
from bitexact.sessions.unify.redact import Redactor
from bitexact.sessions.unify.spill import SpillStore
from bitexact.sessions.unify.write import event_line

RETAINED_TYPES = frozenset({"model.config"})
"""Event types kept as payloads beside their serialized line (one per run: the model config).

Other types a later collector step reads (the baseline estimate's
``firewall.token_usage`` / ``firewall.model_routing``) are decoded back from
the store on demand instead of being held for the whole collection."""


DEPTH_PLACEHOLDER = f"[omitted: nested deeper than {MAX_DEPTH} levels]"
"""What stands in a unified record for a value that would open level ``MAX_DEPTH + 1``.

The strict readers (validate, render, compact, import) refuse a record
nested deeper than ``MAX_DEPTH`` levels, the envelope being level 1; a
source value may be deeper (the engine parsers accept 400 levels, and a
native ``provenance`` moves one level down, under ``provenance.native``).
Each such value is replaced by this string and the source gets a
``nesting_too_deep`` warning; the source file itself keeps the value."""


def _nests_too_deep(line: bytes) -> bool:
    """Whether the serialized record ``line`` nests deeper than ``MAX_DEPTH`` (exact: the line is balanced)."""
    return nested_deeper_than(line.decode("utf-8"), MAX_DEPTH)


def _within_depth(value: Any, level: int, replaced: list[int]) -> Any:
    """A copy of ``value`` (a container opening ``level``) with every container past ``MAX_DEPTH`` replaced.

    The walk stops at the limit, so it recurses at most ``MAX_DEPTH + 1``
    frames however deep the value is; ``replaced[0]`` counts the replacements.
    """
    if not isinstance(value, (dict, list)):
        return value
    if level > MAX_DEPTH:
        replaced[0] += 1
        return DEPTH_PLACEHOLDER
    if isinstance(value, dict):
        return {key: _within_depth(item, level + 1, replaced) for key, item in value.items()}
    return [_within_depth(item, level + 1, replaced) for item in value]


@dataclass(frozen=True)
class CollectionWarning:
    """One collection diagnostic (rendered as ``session.collection_warning``)."""

    code: str
    source: str
    component: str
    message: str
    path: str | None = None
    line: int | None = None

    def data(self) -> dict[str, Any]:
        """The warning's ``session.collection_warning`` payload."""
        out: dict[str, Any] = {
            "code": self.code,
            "source": self.source,
            "component": self.component,
            "message": self.message,
        }
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        return out


@dataclass
class SourceBuilder:
    """The normalized events, ordering keys and warnings of one source."""

    source: str
    component: str
    phase: str
    path: str
    sequential: bool = True
    warnings: list[CollectionWarning] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    usable: bool = True
    empty: bool = False
    redactor: Redactor | None = field(default=None, repr=False)
    """Applied to every decoded source value before projection (T-UAS-060)."""
    spill_dir: Path | None = field(default=None, repr=False)
    """Where the store's temporary file goes (``None``: the system temporary directory)."""
    count: int = 0
    """Number of events added so far."""
    reading_line: int | None = None
    """The 1-based source line of the record being projected, while a JSONL reader knows it (warnings name it)."""
    untimed: int = 0
    """Events added without a valid observed timestamp."""
    first_key: int | None = None
    """The first valid ordering key in source order (a sequential source's first anchor)."""
    retained: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """Events of ``RETAINED_TYPES``, still as payloads."""
    _store: SpillStore | None = field(default=None, repr=False)
    _tail: int = 0
    """Store position of the first untimed record of a sealed unordered source."""
    _sealed: bool = False
    _pending: bytearray = field(default_factory=bytearray, repr=False)
    _ends: array = field(default_factory=lambda: array("Q"), repr=False)
    _keys: list[int | None] = field(default_factory=list, repr=False)

    @property
    def store(self) -> SpillStore:
        """The source's serialized records (created on first use)."""
        if self._store is None:
            self._store = SpillStore(self.spill_dir)
        return self._store

    def seal(self) -> None:
        """Finish adding unordered events: write them to the store in their merge order.

        An unordered batch (OTLP) is held in memory until it is complete,
        then stored sorted by ``(own key, index)`` with its untimed
        observations last, so every store reads back as one sorted run.
        Sequential events go to the store as they are added; sealing them is
        a no-op, and a sequential source accepts events after ``seal()``.
        """
        if self.sequential or self._sealed:
            return
        self._sealed = True
        ends, pending = self._ends, self._pending
        timed = [(k, i) for i, k in enumerate(self._keys) if k is not None]
        timed.sort()  # (own key, index): ties keep source-local order
        store = self.store
        for key, index in timed:
            store.append(key, pending[ends[index - 1] if index else 0:ends[index]])
        self._tail = store.mark()
        for index, maybe in enumerate(self._keys):
            if maybe is None:
                store.append(None, pending[ends[index - 1] if index else 0:ends[index]])
        self._pending, self._ends, self._keys = bytearray(), array("Q"), []

    def anchored(self) -> Iterator[tuple[int, bytes]]:
        """``(merge anchor, line)`` of the events that take part in timestamp interleaving.

        A sequential source yields every event with its nondecreasing anchor
        (``interleave.sequential_anchors``) unless it is wholly untimed; an
        unordered source yields its timed observations by their own keys.
        """
        self.seal()
        if not self.sequential:
            for key, line in self.store.records():
                if key is None:
                    return
                yield key, line
            return
        if self.first_key is None:
            return
        latest = self.first_key
        for key, line in self.store.records():
            if key is not None and key > latest:
                latest = key
            yield latest, line

    def unanchored(self) -> Iterator[bytes]:
        """Lines that follow every anchored observation, in source-local order."""
        self.seal()
        if not self.sequential:
            yield from (line for _key, line in self.store.records(self._tail))
        elif self.first_key is None:
            yield from (line for _key, line in self.store.records())

    def of_type(self, event_type: str) -> Iterator[dict[str, Any]]:
        """Events of one type as payload-bearing dicts, in source order.

        ``RETAINED_TYPES`` come from memory; any other type is decoded back
        from the store (only the baseline estimate asks, and only for a
        routed run), so payloads are not held for the whole collection.
        """
        if event_type in RETAINED_TYPES:
            yield from (e for e in self.retained if e["type"] == event_type)
            return
        # decode imports this module; the exact (strict-equivalent) reader is
        # needed because a stored line may hold integers past 64 bits.
        from bitexact.sessions.unify.decode import loads

        self.seal()
        prefix = b'{"type":' + orjson.dumps(event_type) + b","
        for _key, line in self.store.records():
            if line.startswith(prefix):
                yield loads(line)

    def close(self) -> None:
        """Release the stored records."""
        if self._store is not None:
            self._store.close()

    def add(
        self,
        event_type: str,
        data: dict[str, Any],
        *,
        index: int,
        key: int | None = None,
        timestamp: Any = MISSING,
        event_id: Any = MISSING,
        parent_id: Any = MISSING,
        native: Any = MISSING,
        component: str | None = None,
        phase: str | None = None,
    ) -> dict[str, Any]:
        """Append one envelope and return it."""
        event: dict[str, Any] = {"type": event_type, "data": data}
        if event_id is not MISSING:
            event["id"] = event_id
        if parent_id is not MISSING:
            event["parentId"] = parent_id
        if timestamp is not MISSING:
            if isinstance(timestamp, (str, int, float)) and not isinstance(timestamp, bool):
                event["timestamp"] = timestamp
            else:
                self.refused.add("timestamp")
        provenance: dict[str, Any] = {
            "component": component or self.component,
            "phase": phase or self.phase,
            "path": self.path,
            "index": index,
        }
        if key is not None:
            provenance["timestampMs"] = key // 1_000_000  # to_ms(key), inline: once per collected event
        if native is not MISSING:
            provenance["native"] = native
        event["provenance"] = provenance
        try:  # event_line(event), inline: once per collected event
            line = orjson.dumps(event, option=orjson.OPT_APPEND_NEWLINE)
        except (TypeError, orjson.JSONEncodeError):
            line = event_line(event)
        # Two C-speed counts settle almost every record (fewer brackets than levels cannot nest past them),
        # inline: this runs once per collected event.
        if line.count(b"{") + line.count(b"[") > MAX_DEPTH and _nests_too_deep(line):
            event, line = self._within_depth(event, index)
        if self.sequential:
            self.store.append(key, line)
        elif self._sealed:
            raise RuntimeError(f"{self.source}: unordered source already sealed")
        else:
            self._pending += line
            self._ends.append(len(self._pending))
            self._keys.append(key)
        if event_type in RETAINED_TYPES:
            self.retained.append(event)
        self.count += 1
        if key is None:
            self.untimed += 1
        elif self.first_key is None:
            self.first_key = key
        return event

    def _within_depth(self, event: dict[str, Any], index: int) -> tuple[dict[str, Any], bytes]:
        """``event`` with its too-deep values replaced by ``DEPTH_PLACEHOLDER``, its line, and a warning."""
        replaced = [0]
        clipped = _within_depth(event, 1, replaced)
        # A parsed engine log keeps no line numbers: its event's position in the parsed array is named instead.
        where = f"line {self.reading_line}" if self.reading_line is not None else f"event {index}"
        self.warn("nesting_too_deep", f"{where}: {replaced[0]} value(s) nested deeper than {MAX_DEPTH} levels "
                  "replaced by the depth placeholder", self.reading_line)
        return clipped, event_line(clipped)

    def redact(self, value: Any, raw_json: bytes | None = None) -> Any:
        """A redacted copy of a decoded source value (``raw_json``: its source text)."""
        if self.redactor is None:
            return value
        return self.redactor.checked(value, raw_json)

    def may_redact(self, payload: bytes) -> bool:
        """False proves no JSON value decoded from any part of ``payload`` needs redaction."""
        return self.redactor is not None and self.redactor.may_match(payload)

    def project(self, projection: Projection) -> dict[str, Any]:
        """Record refused keys of a projection and return its data."""
        if projection.refused:
            self.refused.update(projection.refused)
        return projection.data

    def warn(self, code: str, message: str, line: int | None = None) -> None:
        """Add a warning about this source (``message`` must not quote payloads)."""
        self.warnings.append(
            CollectionWarning(code, self.source, self.component, message, self.path, line)
        )

    def finish(self) -> None:
        """Turn refused field values into one warning naming the keys, not values."""
        if self.refused:
            keys = ", ".join(sorted(self.refused))
            self.warn("invalid_field", f"omitted field values of unexpected type: {keys}")
            self.refused.clear()
