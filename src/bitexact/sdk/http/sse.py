"""Server-sent events: reading a reassembled ``text/event-stream`` body.

A streamed response reaches the agent chunk by chunk as it arrives and is
recorded once, reassembled, so an event (or a card number) split across
chunks is read whole. The record keeps the body as text; this module reads
the events back out of it, for the model name an OpenAI-compatible stream
carries and for readers of the record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

import orjson

from bitexact.canon import nested_deeper_than

MEDIA_TYPE: Final[str] = "text/event-stream"


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event (the WHATWG event-stream interpretation)."""

    data: str
    event: str = "message"
    id: str | None = None


def is_event_stream(media_type: str | None) -> bool:
    """Whether a content type names an event stream."""
    return bool(media_type) and media_type.split(";", 1)[0].strip().lower() == MEDIA_TYPE  # type: ignore[union-attr]


def parse_events(text: str) -> list[ServerSentEvent]:
    """The events in an event-stream body, as a browser would dispatch them."""
    events: list[ServerSentEvent] = []
    data: list[str] = []
    event = ""
    last_id: str | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data:
                events.append(ServerSentEvent("\n".join(data), event or "message", last_id))
            data, event = [], ""
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\0" not in value:
            last_id = value
    return events


def model_of_events(events: list[ServerSentEvent]) -> str | None:
    """The ``model`` an OpenAI-compatible stream names in its JSON events, if any."""
    for item in events:
        if not item.data.startswith("{"):
            continue
        doc = json_document(item.data)
        if isinstance(doc, dict) and isinstance(doc.get("model"), str):
            return doc["model"]
    return None


def json_document(text: str) -> Any:
    """``text`` read as one JSON document, or ``None`` when it is not one (or is nested too deep to read).

    Read in the agent's own process, so never by recursing deep on its
    stack: orjson reads without it; what orjson refuses but Python's json
    module reads (NaN, a lone surrogate escape, a number past a double) is
    read by json, unless nested deeper than json may safely go.
    """
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    if nested_deeper_than(text):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: a caller already deep in its own stack
        return None
