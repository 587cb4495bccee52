"""Claude SDK partial-message stream reconciliation (UAS 7.1, 5.3).

With partial messages enabled the Claude SDK writes ``stream_event``
records (``message_start``, ``content_block_start``/``_delta``/``_stop``,
``message_delta``, ``message_stop``) before the finalized ``assistant``
snapshot of the same ``message.id``.  Each stream record is kept as an
``assistant.message_update`` observation; the finalized snapshot supplies the
core message events, so nothing is counted twice.  When a stream never
reaches its snapshot (interrupted log), the observed text, thinking and
tool-argument fragments become core events (``partial: true``) right after
the last observed stream record of that message.  A ``message_delta`` with
``stop_reason: "refusal"`` emits ``assistant.refusal`` with the text seen so
far; the later snapshot's fields merge onto that same event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bitexact.sessions.convert import LegacyConverter, make_event
from bitexact.sessions.records import decode_json

Event = dict[str, Any]


@dataclass
class _Stream:
    message_id: Any
    meta: dict[str, Any]
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    last: Event | None = None
    finalized: bool = False
    covered: set[int] = field(default_factory=set)
    """Indices of streamed blocks a finalized snapshot holds."""
    refused: bool = False
    model: Any = None


class ClaudeStreams:
    def __init__(self, legacy: LegacyConverter) -> None:
        self.legacy = legacy
        self.streams: dict[tuple[Any, Any], _Stream] = {}
        self.current: dict[Any, _Stream] = {}

    def observe(self, record: dict[str, Any], update: Event, meta: dict[str, Any], out: list[Event]) -> None:
        """Track one ``stream_event`` record whose update event was just emitted."""
        scope = LegacyConverter.scope(record)
        event = record["event"]
        etype = event.get("type")
        if etype == "message_start" and isinstance(event.get("message"), dict):
            message = event["message"]
            started = _Stream(message.get("id"), dict(meta), model=message.get("model"))
            self.streams[(scope, repr(message.get("id")))] = started
            self.current[scope] = started
        stream = self.current.get(scope)
        if stream is None:
            return
        stream.last = update
        index = event.get("index")
        if etype == "content_block_start" and isinstance(index, int) and isinstance(event.get("content_block"), dict):
            block = event["content_block"]
            stream.blocks[index] = {"type": block.get("type"), "text": [], "json": [], "id": block.get("id"), "name": block.get("name")}
        elif etype == "content_block_delta" and isinstance(index, int) and isinstance(event.get("delta"), dict):
            delta = event["delta"]
            block = stream.blocks.setdefault(index, {"type": None, "text": [], "json": [], "id": None, "name": None})
            if isinstance(delta.get("text"), str):
                block["type"] = block["type"] or "text"
                block["text"].append(delta["text"])
            elif isinstance(delta.get("thinking"), str):
                block["type"] = block["type"] or "thinking"
                block["text"].append(delta["thinking"])
            elif isinstance(delta.get("partial_json"), str):
                block["json"].append(delta["partial_json"])
        elif etype == "message_delta" and isinstance(event.get("delta"), dict) and event["delta"].get("stop_reason") == "refusal":
            self._refusal(stream, event["delta"], out)

    def _refusal(self, stream: _Stream, delta: dict[str, Any], out: list[Event]) -> None:
        if stream.refused:
            return
        stream.refused = True
        data: dict[str, Any] = {"reason": "refusal"}
        texts = ["".join(b["text"]) for _, b in sorted(stream.blocks.items()) if b["type"] == "text"]
        if texts:
            data["content"] = "".join(texts)
        details = delta.get("stop_details")
        if isinstance(details, dict):
            if "category" in details:
                data["policyCategory"] = details["category"]
            if "explanation" in details:
                data["explanation"] = details["explanation"]
        if stream.message_id is not None:
            data["messageId"] = stream.message_id
        event = make_event("assistant.refusal", data, stream.meta)
        out.append(event)
        stream.last = event
        if isinstance(stream.message_id, str):
            self.legacy.refusals[stream.message_id] = event

    def snapshot_seen(self, record: dict[str, Any]) -> None:
        """An ``assistant`` snapshot arrived: the streamed blocks it holds are finalized.

        An SDK snapshot can hold a single finalized block (7.1): each of its blocks covers the first
        uncovered streamed block of the same type (and tool ID); the other streamed blocks stay
        pending, so a stream cut off before their own snapshot keeps its observed fragments (5.3).
        """
        message = record.get("message")
        if not isinstance(message, dict):
            return
        stream = self.streams.get((LegacyConverter.scope(record), repr(message.get("id"))))
        if stream is None:
            return
        content = message.get("content")
        if not isinstance(content, list):
            stream.finalized = True
            return
        for snapshot in content:
            if not isinstance(snapshot, dict):
                continue
            for index, block in sorted(stream.blocks.items()):
                if index in stream.covered or block["type"] != snapshot.get("type"):
                    continue
                if block["id"] is not None and snapshot.get("id") != block["id"]:
                    continue
                stream.covered.add(index)
                break

    def finish(self, out: list[Event]) -> list[Event]:
        """Insert core events for streams that never reached their snapshot."""
        inserts: dict[int, list[Event]] = {}
        for stream in self.streams.values():
            if stream.finalized or stream.refused or stream.last is None or not stream.blocks:
                continue
            events = self._partial_events(stream)
            if events:
                inserts[id(stream.last)] = events
        if not inserts:
            return out
        result: list[Event] = []
        for event in out:
            result.append(event)
            result.extend(inserts.get(id(event), ()))
        return result

    @staticmethod
    def _partial_events(stream: _Stream) -> list[Event]:
        events: list[Event] = []
        common: dict[str, Any] = {}
        if stream.message_id is not None:
            common["messageId"] = stream.message_id
        if stream.model is not None:
            common["model"] = stream.model
        for index, block in sorted(stream.blocks.items()):
            if index in stream.covered:
                continue
            text = "".join(block["text"])
            if block["type"] == "text":
                events.append(make_event("assistant.message", {"content": text, **common, "contentIndex": index, "partial": True}, stream.meta))
            elif block["type"] == "thinking":
                events.append(make_event("assistant.reasoning", {"content": text, **common, "contentIndex": index, "partial": True}, stream.meta))
            elif block["type"] in ("tool_use", "server_tool_use") and block["id"] is not None:
                data: dict[str, Any] = {"toolCallId": block["id"]}
                if block["name"] is not None:
                    data["toolName"] = block["name"]
                arguments = "".join(block["json"])
                try:
                    data["input"] = decode_json(arguments)
                except (ValueError, RecursionError):
                    data["argumentsText"] = arguments
                data.update(common)
                data["contentIndex"] = index
                data["partial"] = True
                events.append(make_event("tool.execution_start", data, stream.meta))
        return events
