"""Per-source event building: envelopes, provenance and collection warnings.

A ``SourceBuilder`` owns the normalized event array of one selected source.
It stamps every event with ``provenance`` (component, phase, the path
relative to the runtime root, and the index in the source's normalized
array; T-UAS-055), keeps the observed ordering key beside it for the
interleaver, and collects warnings that name the source and the cause but
never quote the payload (T-UAS-063).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bitexact.sessions.unify.clock import to_ms
from bitexact.sessions.unify.project import MISSING, Projection
from bitexact.sessions.unify.redact import Redactor


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
