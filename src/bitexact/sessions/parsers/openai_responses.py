"""OpenAI Responses API mapping (Copilot debug blocks, T-UAS-069).

Two shapes are recognized inside framed debug blocks:

* a response object (``object: "response"`` with an ``output`` array), and
* a streaming event (``type: "response.<...>"``).

Refusal evidence (UAS 4.3): output-message content parts ``type: "refusal"``
with a string ``refusal``; ``response.refusal.delta`` (partial evidence,
joined exactly) and ``response.refusal.done``; refusal-bearing
``response.content_part.*`` / ``response.output_item.*`` events; and terminal
response snapshots (``response.completed`` / ``response.incomplete`` /
``response.failed`` carry ``response``).  ``incomplete_details.reason:
"content_filter"`` is a ``content_filter`` refusal carrying the available
filtered text; any other incomplete reason (``max_output_tokens``) is token
truncation and never a refusal.

One logical refusal is identified by (output item id, content index); a
later observation of it completes the first event in place (exact final text,
``partial`` dropped) instead of emitting a duplicate.  A content filter is
identified by its response id.  ``output_text`` parts map to
``assistant.message``, ``function_call`` items to ``tool.execution_start``
(no completion is invented), reasoning ``summary`` text to
``assistant.reasoning``; parts already observed through streaming events are
not emitted again by the terminal snapshot.  Usage ``input_tokens`` /
``output_tokens`` of distinct responses (by ``id``) accumulate.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

from bitexact.sessions.convert import make_event
from bitexact.sessions.parsers.base import Session
from bitexact.sessions.records import decode_json
from bitexact.sessions.streaming import FragmentJoiner
from bitexact.sessions.usage import UsageAccumulator, valid_count

Event = dict[str, Any]

_SNAPSHOT_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def is_responses_payload(value: Any) -> bool:
    """True for a Responses API response object or streaming event."""
    if not isinstance(value, dict):
        return False
    if value.get("object") == "response" and isinstance(value.get("output"), list):
        return True
    kind = value.get("type")
    return isinstance(kind, str) and kind.startswith("response.") and "data" not in value


class ResponsesMapper:
    """Maps Responses API objects and stream events of one session."""

    def __init__(self, session: Session, accumulator: UsageAccumulator) -> None:
        self.session = session
        self.accumulator = accumulator
        self.joiner = FragmentJoiner()
        self.refusals: dict[Hashable, Event] = {}
        self.observed_parts: set[Hashable] = set()
        self.filtered: set[Any] = set()
        self.seen_snapshots: set[Any] = set()
        self.errors: list[Any] = []
        self.stream_texts: dict[Hashable, list[Event]] = {}

    # -- dispatch ---------------------------------------------------------
    def payload(self, value: Mapping[str, Any]) -> None:
        if value.get("object") == "response":
            self.snapshot(value)
            return
        kind = value["type"]
        if kind == "response.refusal.delta":
            self._refusal_delta(value)
        elif kind == "response.refusal.done":
            if isinstance(value.get("refusal"), str):
                self._refusal_final(_part_key(value), value["refusal"], {})
        elif kind == "response.output_text.delta":
            self._text_delta(value)
        elif kind == "response.output_text.done":
            self._text_done(value)
        elif kind in ("response.content_part.added", "response.content_part.done"):
            part = value.get("part")
            if isinstance(part, dict):
                self._part(part, _part_key(value), {}, streamed=True)
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = value.get("item")
            if isinstance(item, dict):
                self._item(item, {}, streamed=True)
        elif kind in _SNAPSHOT_EVENTS and isinstance(value.get("response"), dict):
            self.snapshot(value["response"])
        # Other stream events (created, in_progress, ...) carry no refusal or content.

    # -- snapshots --------------------------------------------------------
    def snapshot(self, response: Mapping[str, Any]) -> None:
        response_id = response.get("id")
        common: dict[str, Any] = {}
        if "id" in response:
            common["responseId"] = response_id
        if "model" in response:
            common["model"] = response["model"]
        output = response.get("output")
        filtered = _incomplete_reason(response) == "content_filter"
        if isinstance(output, list):
            for item in output:
                if isinstance(item, dict):
                    self._item(item, common, streamed=False, filtered=filtered)
        if filtered:
            self._content_filter(response_id, output, common)
        # A terminal snapshot closes the stream of this response.
        self.stream_texts = {}
        fresh = not (isinstance(response_id, str) and response_id in self.seen_snapshots)
        if isinstance(response_id, str):
            self.seen_snapshots.add(response_id)
        usage = response.get("usage")
        if fresh and isinstance(usage, dict):
            mapped = {k: int(usage[k]) for k in ("input_tokens", "output_tokens") if valid_count(usage.get(k))}
            if mapped:
                self.accumulator.add(mapped)
        error = response.get("error")
        if fresh and isinstance(error, (dict, str)):
            self.errors.append(error)
            self.session.emit(make_event("session.error", {"error": error, **common}))

    def _item(self, item: Mapping[str, Any], common: dict[str, Any], *, streamed: bool, filtered: bool = False) -> None:
        kind = item.get("type")
        item_id = item.get("id")
        if kind == "message":
            content = item.get("content")
            if isinstance(content, list):
                for index, part in enumerate(content):
                    if isinstance(part, dict):
                        self._part(part, (repr(item_id), repr(index)), common, streamed=streamed, filtered=filtered)
        elif kind == "function_call" and item.get("status") != "in_progress" and ("call_id" in item or "name" in item):
            key: tuple[str, ...] = ("call", repr(item_id), repr(item.get("call_id")))
            if key in self.observed_parts:
                return
            self.observed_parts.add(key)
            data: dict[str, Any] = {}
            if "call_id" in item:
                data["toolCallId"] = item["call_id"]
            if "name" in item:
                data["toolName"] = item["name"]
            if "arguments" in item:
                data["input"] = _arguments(item["arguments"])
            self.session.emit(make_event("tool.execution_start", {**data, **common}))
        elif kind == "reasoning" and not streamed:
            key = ("reasoning", repr(item_id))
            summary = item.get("summary")
            if key in self.observed_parts or not isinstance(summary, list):
                return
            self.observed_parts.add(key)
            for part in summary:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    self.session.emit(make_event("assistant.reasoning", {"content": part["text"], **common}))

    def _part(self, part: Mapping[str, Any], key: Hashable, common: dict[str, Any], *, streamed: bool, filtered: bool = False) -> None:
        kind = part.get("type")
        if kind == "refusal" and isinstance(part.get("refusal"), str):
            self._refusal_final(key, part["refusal"], common)
        elif kind == "output_text" and isinstance(part.get("text"), str) and not filtered:
            if key in self.observed_parts:
                return
            if streamed and part["text"] == "":
                # ``content_part.added`` opens an empty part; its text arrives as deltas.
                return
            self.observed_parts.add(key)
            self.session.emit(make_event("assistant.message", {"content": part["text"], **common}))

    # -- refusals ---------------------------------------------------------
    def _refusal_delta(self, event: Mapping[str, Any]) -> None:
        delta = event.get("delta")
        if not isinstance(delta, str):
            return
        key = _part_key(event)
        held = self.refusals.get(key)
        if held is not None and held is self.session.events[-1] and held["data"].get("partial") is True:
            held["data"]["content"] += delta
            return
        if held is not None:
            # Already finalized, or interrupted by another observation: keep one event.
            return
        refusal = make_event("assistant.refusal", {"reason": "refusal", "content": delta, "partial": True})
        self.session.emit(refusal)
        self.refusals[key] = refusal
        self.observed_parts.add(key)

    def _refusal_final(self, key: Hashable, text: str, common: dict[str, Any]) -> None:
        held = self.refusals.get(key)
        self.observed_parts.add(key)
        if held is not None:
            data = held["data"]
            data["content"] = text
            data.pop("partial", None)
            for name, value in common.items():
                data.setdefault(name, value)
            return
        refusal = make_event("assistant.refusal", {"reason": "refusal", "content": text, **common})
        self.session.emit(refusal)
        self.refusals[key] = refusal

    def _content_filter(self, response_id: Any, output: Any, common: dict[str, Any]) -> None:
        key = repr(response_id)
        if key in self.filtered:
            return
        self.filtered.add(key)
        data: dict[str, Any] = {"reason": "content_filter"}
        texts = _filtered_text(output)
        streamed = [e for events in self.stream_texts.values() for e in events if any(e is x for x in self.session.events)]
        if texts is not None:
            data["content"] = texts
        elif streamed:
            data["content"] = "".join(e["data"]["content"] for e in streamed)
        # Streamed text of a filtered response was filtered output, not an answer.
        for event in streamed:
            self.session.events[:] = [e for e in self.session.events if e is not event]
        self.session.emit(make_event("assistant.refusal", {**data, **common}))

    # -- streamed text ----------------------------------------------------
    def _text_delta(self, event: Mapping[str, Any]) -> None:
        delta = event.get("delta")
        if not isinstance(delta, str):
            return
        key = _part_key(event)
        self.observed_parts.add(key)
        message = make_event("assistant.message", {"content": delta, "partial": True})
        held = self.joiner.push(self.session.events, message, ("text", key))
        if held is message:
            self.stream_texts.setdefault(key, []).append(message)

    def _text_done(self, event: Mapping[str, Any]) -> None:
        """``output_text.done`` completes the streamed part: exact final text, no ``partial``."""
        key = _part_key(event)
        text = event.get("text")
        held = self.stream_texts.get(key)
        if not isinstance(text, str):
            return
        self.observed_parts.add(key)
        if held and len(held) == 1:
            held[0]["data"]["content"] = text
            held[0]["data"].pop("partial", None)
        elif not held:
            message = make_event("assistant.message", {"content": text})
            self.session.emit(message)
            self.stream_texts[key] = [message]
        # Several interrupted fragments stay as observed (no rewrite across boundaries).

    def usage(self) -> dict[str, Any]:
        return self.accumulator.usage() if not self.accumulator.empty else {}


def _part_key(event: Mapping[str, Any]) -> Hashable:
    return (repr(event.get("item_id")), repr(event.get("content_index")))


def _incomplete_reason(response: Mapping[str, Any]) -> Any:
    details = response.get("incomplete_details")
    return details.get("reason") if isinstance(details, dict) else None


def _filtered_text(output: Any) -> str | None:
    """The output text a content filter cut short, when the snapshot carries any."""
    if not isinstance(output, list):
        return None
    texts = [
        part["text"]
        for item in output if isinstance(item, dict) and item.get("type") == "message" and isinstance(item.get("content"), list)
        for part in item["content"] if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)
    ]
    return "".join(texts) if texts else None


def _arguments(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return decode_json(arguments)
    except (ValueError, RecursionError):
        return arguments
