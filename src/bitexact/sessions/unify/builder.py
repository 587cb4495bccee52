"""Per-source event building: envelopes, provenance and collection warnings.

A ``SourceBuilder`` owns the normalized event array of one selected source.
It stamps every event with ``provenance`` (component, phase, the path
relative to the runtime root, and the index in the source's normalized
array; T-UAS-055), keeps the observed ordering key beside it for the
interleaver, and collects warnings that name the source and the cause but
never quote the payload (T-UAS-063).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from bitexact.sessions.unify.clock import to_ms
from bitexact.sessions.unify.project import MISSING, Projection
from bitexact.sessions.unify.redact import Redactor
from bitexact.sessions.unify.write import event_line

RETAINED_TYPES = frozenset({"firewall.token_usage", "firewall.model_routing", "model.config"})
"""Event types later collector steps read back as payloads (baseline estimate, model config)."""


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
    events: list[dict[str, Any]] = field(default_factory=list)
    keys: list[int | None] = field(default_factory=list)
    warnings: list[CollectionWarning] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    usable: bool = True
    empty: bool = False
    redactor: Redactor | None = field(default=None, repr=False)
    """Applied to every decoded source value before projection (T-UAS-060)."""
    sealed: bool = True
    """Events are kept only as serialized JSONL lines (``RETAINED_TYPES`` also as
    payloads).  Sources are sealed from the start: nothing reads a source's
    events back except those types, and a decoded object tree costs several
    times its compact JSON.  ``sealed=False`` keeps ``events`` as dicts until
    ``seal()``."""
    retained: list[dict[str, Any]] = field(default_factory=list, repr=False)
    """After ``seal()``: the events of ``RETAINED_TYPES``, still as payloads."""
    _buffer: bytearray = field(default_factory=bytearray, repr=False)
    _ends: array = field(default_factory=lambda: array("Q"), repr=False)

    @property
    def count(self) -> int:
        """Number of events added so far (sealed or not)."""
        return len(self._ends) if self.sealed else len(self.events)

    def _append_line(self, event: dict[str, Any]) -> None:
        # One shared buffer per source: orjson's result objects are freed at
        # once (each holds a large allocation), only the exact bytes stay.
        self._buffer += event_line(event)
        self._ends.append(len(self._buffer))

    def seal(self) -> None:
        """Serialize the events now and drop their object trees.

        A finished source keeps only its compact lines (a fraction of the
        memory of the decoded dicts) until interleaving writes them; events
        added later are serialized as they come.
        """
        if not self.sealed:
            self.sealed = True
            for event in self.events:
                self._append_line(event)
            self.retained = [e for e in self.events if e["type"] in RETAINED_TYPES]
            self.events = []

    def event_at(self, index: int) -> Any:
        """Event ``index`` in source order: its dict, or (sealed) a view of its serialized line."""
        if not self.sealed:
            return self.events[index]
        start = self._ends[index - 1] if index else 0
        return memoryview(self._buffer)[start:self._ends[index]]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        """Events of one type as payload-bearing dicts (``RETAINED_TYPES`` only once sealed)."""
        pool = self.retained if self.sealed else self.events
        return [e for e in pool if e["type"] == event_type]

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
            provenance["timestampMs"] = to_ms(key)
        if native is not MISSING:
            provenance["native"] = native
        event["provenance"] = provenance
        if self.sealed:
            self._append_line(event)
            if event_type in RETAINED_TYPES:
                self.retained.append(event)
        else:
            self.events.append(event)
        self.keys.append(key)
        return event

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
