"""Local OTLP JSON mirrors expanded into ``otel.span``/``otel.span_event``/``otel.log``.

Each JSONL line is one export envelope.  ``resourceSpans[].scopeSpans[].spans[]``
and ``resourceLogs[].scopeLogs[].logRecords[]`` are expanded with their
resource and scope context; span events become separate observations and
are not duplicated inside the span.  OTLP batches are unordered, so each
observation is ordered by its own clock: ``startTimeUnixNano`` for a span,
``timeUnixNano`` for a span event, ``timeUnixNano`` (else a supplied
``observedTimeUnixNano``) for a log; a span event never borrows its span's
clock (T-UAS-058).  A malformed nested entry is warned about without
discarding its valid neighbours.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from bitexact.sessions import unified_model as um
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.clock import ordering_key
from bitexact.sessions.unify.decode import json_lines
from bitexact.sessions.unify.project import Projector

SPAN = Projector(um.OtelSpanData)
SPAN_EVENT = Projector(um.OtelSpanEventData)
LOG = Projector(um.OtelLogData)

_SPAN_KEYS = ("traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano",
              "endTimeUnixNano", "status", "attributes", "links")
_EVENT_KEYS = ("name", "timeUnixNano", "attributes")
_LOG_KEYS = ("traceId", "spanId", "timeUnixNano", "observedTimeUnixNano", "severityNumber",
             "severityText", "body", "attributes")


def _context(owner: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = owner.get(key)
    return {key: value} if key in owner and isinstance(value, dict) else {}


def _nested(builder: SourceBuilder, line: int, container: Any, key: str, label: str) -> Iterator[Mapping[str, Any]]:
    items = container.get(key, []) if isinstance(container, dict) else None
    if not isinstance(items, list):
        builder.warn("malformed_otlp", f"line {line}: {label} is not an array; skipped", line)
        return
    for position, item in enumerate(items):
        if isinstance(item, dict):
            yield item
        else:
            builder.warn("malformed_otlp", f"line {line}: {label}[{position}] is not an object; skipped", line)


def read_otlp(builder: SourceBuilder, payload: bytes) -> None:
    """Expand every export envelope of an ``otel.jsonl`` mirror."""
    index = 0
    for _ordinal, line, envelope in json_lines(builder, payload):
        for resource_spans in _nested(builder, line, envelope, "resourceSpans", "resourceSpans"):
            resource = _context(resource_spans, "resource")
            for scope_spans in _nested(builder, line, resource_spans, "scopeSpans", "scopeSpans"):
                scope = _context(scope_spans, "scope")
                for span in _nested(builder, line, scope_spans, "spans", "spans"):
                    data = {k: span[k] for k in _SPAN_KEYS if k in span}
                    data.update(resource)
                    data.update(scope)
                    key = ordering_key(span.get("startTimeUnixNano"), "unix_nano")
                    builder.add("otel.span", builder.project(SPAN(data)), index=index, key=key)
                    index += 1
                    for event in _nested(builder, line, span, "events", "span events"):
                        event_data = {k: span[k] for k in ("traceId", "spanId") if k in span}
                        event_data.update({k: event[k] for k in _EVENT_KEYS if k in event})
                        event_data.update(resource)
                        event_data.update(scope)
                        key = ordering_key(event.get("timeUnixNano"), "unix_nano")
                        builder.add("otel.span_event", builder.project(SPAN_EVENT(event_data)), index=index, key=key)
                        index += 1
        for resource_logs in _nested(builder, line, envelope, "resourceLogs", "resourceLogs"):
            resource = _context(resource_logs, "resource")
            for scope_logs in _nested(builder, line, resource_logs, "scopeLogs", "scopeLogs"):
                scope = _context(scope_logs, "scope")
                for record in _nested(builder, line, scope_logs, "logRecords", "logRecords"):
                    data = {k: record[k] for k in _LOG_KEYS if k in record}
                    data.update(resource)
                    data.update(scope)
                    clock = record["timeUnixNano"] if "timeUnixNano" in record else record.get("observedTimeUnixNano")
                    builder.add("otel.log", builder.project(LOG(data)), index=index, key=ordering_key(clock, "unix_nano"))
                    index += 1
