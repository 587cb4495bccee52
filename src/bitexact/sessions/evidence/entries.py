"""What one imported event entry holds: the event, its metadata, its source."""

from __future__ import annotations

import json
import math
from typing import Any, Final

from bitexact.canon import canonicalize
from bitexact.errors import CanonicalizationError
from bitexact.evidence.entry import MAX_DATA_DEPTH
from bitexact.sessions.evidence.errors import SessionInputError
from bitexact.sessions.evidence.mapping import MAX_SAFE_INTEGER, kind_for
from bitexact.sessions.evidence.source import SessionSource, SourceEvent

_SPLIT: Final[frozenset[str]] = frozenset({"type", "data"})


class _TooDeep(Exception):
    """Internal: a value nests deeper than an entry may hold."""


def _pointer_part(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def _fit(value: Any, pointer: str, depth: int, coerced: dict[str, list[str]], *, text: bool = False) -> Any:
    """``value`` with unsafe numbers written as strings; raises :class:`_TooDeep` (never with ``text``).

    Canonical JSON refuses integers past ±(2^53-1) and negative zero (bundle
    spec §1.2); the spec's advice is to record them as strings, and
    ``coerced`` lists where that was done, as JSON Pointers into the event.
    Containers are copied only when something under them changed. ``depth``
    is the level ``value`` sits at inside the entry's data (data itself is
    level 1), which may nest at most 125 levels (bundle spec §1.1). For a part kept as ``text``,
    any depth is fitted and only non-finite numbers are rewritten (the text writes the others exactly).
    """
    if isinstance(value, dict):
        if not text and depth > MAX_DATA_DEPTH:
            raise _TooDeep
        out = None
        for key, item in value.items():
            fitted = _fit(item, f"{pointer}/{_pointer_part(key)}", depth + 1, coerced, text=text)
            if fitted is not item:
                out = dict(value) if out is None else out
                out[key] = fitted
        return value if out is None else out
    if isinstance(value, list):
        if not text and depth > MAX_DATA_DEPTH:
            raise _TooDeep
        items = None
        for index, item in enumerate(value):
            fitted = _fit(item, f"{pointer}/{index}", depth + 1, coerced, text=text)
            if fitted is not item:
                items = list(value) if items is None else items
                items[index] = fitted
        return value if items is None else items
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if text and not (isinstance(value, float) and not math.isfinite(value)):
        return value
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        coerced.setdefault("unsafe_integer", []).append(pointer)
        return str(value)
    if isinstance(value, float):
        if value == 0.0 and math.copysign(1.0, value) < 0:
            coerced.setdefault("negative_zero", []).append(pointer)
            return "-0.0"
        if value != value or value in (float("inf"), float("-inf")):
            coerced.setdefault("non_finite", []).append(pointer)
            return str(value)
        return value
    return value


def _as_text(value: Any) -> tuple[str, str]:
    """``value`` as canonical JSON text, else (numbers or depth canon refuses) compact sorted JSON."""
    try:
        return canonicalize(value).decode("utf-8"), "canonical-json"
    except CanonicalizationError:
        pass
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False), "json"
    except (RecursionError, ValueError, TypeError) as exc:
        raise SessionInputError(f"an event cannot be written even as JSON text: {exc}") from exc


def _source_block(source: SessionSource, item: SourceEvent) -> dict[str, Any]:
    block: dict[str, Any] = {"sha256": source.sha256, "name": source.name, "engine": source.engine,
                             "format": source.format}
    if item.line is not None:
        block["line"] = item.line
    return block


_PHASES: Final[dict[str, str]] = {"tool.execution_start": "started", "tool.execution_update": "update"}


def _display_keys(kind: str, event_type: str, data: Any) -> dict[str, Any]:
    """The bundle spec's guidance keys for the kind, derived from the event (for ``bitexact show``)."""
    if kind == "tool_call":
        keys: dict[str, Any] = {}
        if isinstance(data, dict) and isinstance(data.get("toolName"), str):
            keys["tool"] = data["toolName"]
        if event_type == "tool.execution_complete" and isinstance(data, dict):
            success = data.get("success")  # absent means unknown, never ok (T-UAS-014)
            keys["status"] = "ok" if success is True else "failed" if success is False else "unknown"
        else:
            keys["status"] = _PHASES.get(event_type, event_type.rsplit(".", 1)[-1])
        return keys
    if kind == "context":
        return {"name": event_type}
    if kind == "marker":
        return {"note": f"engine event {event_type}"}
    return {}


def entry_data(source: SessionSource, item: SourceEvent, *, as_text: bool = False) -> dict[str, Any]:
    """The data of the entry recording ``item``: ``{type, data, meta, index, source}`` and guidance keys.

    ``meta`` holds every top-level field of the event other than ``type`` and
    ``data`` (id, parentId, timestamp, provenance, ...), unchanged, so
    ``{"type": type, "data": data, **meta}`` is the event as read. A part
    nesting deeper than an entry may hold, or ``as_text``, is kept as JSON
    text under ``data_json`` / ``meta_json`` and named in ``as_text``.
    """
    event = item.event
    event_type = event["type"]
    kind = kind_for(event_type)
    parts = {"data": event["data"], "meta": {k: v for k, v in event.items() if k not in _SPLIT}}
    body: dict[str, Any] = {"type": event_type}
    coerced: dict[str, list[str]] = {}
    encoded: dict[str, str] = {}
    for part, value in parts.items():
        pointer = "/data" if part == "data" else ""
        if not as_text:
            found: dict[str, list[str]] = {}
            try:
                body[part] = _fit(value, pointer, 2, found)
            except _TooDeep:
                pass
            else:
                for cause, pointers in found.items():
                    coerced.setdefault(cause, []).extend(pointers)
                continue
        # As text too, non-finite numbers are written as strings and declared: no JSON writes
        # them, and refusing the event would refuse the import.
        found = {}
        try:
            value = _fit(value, pointer, 2, found, text=True)
        except RecursionError:
            found = {}  # nesting Python cannot walk: _as_text refuses it below
        for cause, pointers in found.items():
            coerced.setdefault(cause, []).extend(pointers)
        body[f"{part}_json"], encoded[part] = _as_text(value)
    body["index"] = item.index
    body["source"] = _source_block(source, item)
    if coerced:
        body["coerced"] = coerced
    if encoded:
        body["as_text"] = encoded
    for key, value in _display_keys(kind, event_type, event["data"]).items():
        body.setdefault(key, value)
    return body
