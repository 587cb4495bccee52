"""OpenAI Chat Completions response mapping (Copilot debug blocks, T-UAS-069).

A response's ``choices[].message`` yields, in order: ``reasoning_text`` as
``assistant.reasoning``, ``content`` as ``assistant.message``, a refusal as
``assistant.refusal`` (``message.refusal``, a ``refusal`` content part, or
``finish_reason: "content_filter"`` even with null text), and
``tool_calls[]`` as ``tool.execution_start`` events.  A requested tool call is
only a start: no completion or success is invented.  Argument text that is
not valid JSON is kept as the exact string.

Usage ``prompt_tokens``/``completion_tokens`` of *distinct* responses (by
``id``) accumulate into input/output tokens.

Streaming chunks (``choices[].delta``) are joined exactly per response and
choice: ``delta.content`` into one ``assistant.message``, ``delta.refusal``
into one ``assistant.refusal`` with ``partial: true`` (partial evidence), and
``delta.tool_calls`` fragments into one start per call when the stream
finishes (argument text kept exactly when it is not valid JSON).
"""

from __future__ import annotations

from typing import Any, Mapping

from bitexact.sessions.convert import make_event
from bitexact.sessions.parsers.base import Session
from bitexact.sessions.records import decode_json
from bitexact.sessions.streaming import FragmentJoiner
from bitexact.sessions.usage import UsageAccumulator, valid_count


class ChatResponseMapper:
    def __init__(self, session: Session, engine: str) -> None:
        self.session = session
        self.engine = engine
        self.accumulator = UsageAccumulator()
        self.seen_responses: set[Any] = set()
        self.errors: list[Any] = []
        self.joiner = FragmentJoiner()
        self.pending_calls: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
        # A streamed response may repeat its usage on several chunks (a running snapshot): the latest
        # per response id is its usage, counted once (7.2: distinct response contributions).
        self.chunk_usage: dict[str, dict[str, Any]] = {}

    def response(self, response: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        response_id = response.get("id")
        choices = response.get("choices")
        if isinstance(choices, list) and any(isinstance(c, dict) and isinstance(c.get("delta"), dict) for c in choices):
            self._chunk(response, meta)
            return
        if isinstance(response_id, str):
            if response_id in self.seen_responses:
                return
            self.seen_responses.add(response_id)
        common: dict[str, Any] = {}
        if "id" in response:
            common["responseId"] = response_id
        if "model" in response:
            common["model"] = response["model"]
        for choice in response.get("choices", []):
            if isinstance(choice, dict):
                self._choice(choice, common, meta)
        usage = response.get("usage")
        if isinstance(usage, dict):
            self._add_usage(usage)
        if isinstance(response.get("error"), (dict, str)):
            self.errors.append(response["error"])
            self.session.emit(make_event("session.error", {"error": response["error"], **common}, meta))

    def _choice(self, choice: Mapping[str, Any], common: dict[str, Any], meta: Mapping[str, Any]) -> None:
        emit = self.session.emit
        message = choice.get("message")
        if not isinstance(message, dict):
            message = {}
        if isinstance(message.get("reasoning_text"), str):
            emit(make_event("assistant.reasoning", {"content": message["reasoning_text"], **common}, meta))
        refusal = self._refusal(choice, message)
        content = message.get("content")
        if refusal is not None:
            emit(make_event("assistant.refusal", {**refusal, **common}, meta))
        elif isinstance(content, str):
            emit(make_event("assistant.message", {"content": content, **common}, meta))
        elif isinstance(content, list):
            emit(make_event("assistant.message", {"content": content, **common}, meta))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                emit(make_event("tool.execution_start", self._tool_call(call, common), meta))

    @staticmethod
    def _refusal(choice: Mapping[str, Any], message: Mapping[str, Any]) -> dict[str, Any] | None:
        if isinstance(message.get("refusal"), str):
            return {"reason": "refusal", "content": message["refusal"]}
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                    return {"reason": "refusal", "content": part["refusal"]}
        if choice.get("finish_reason") == "content_filter":
            data: dict[str, Any] = {"reason": "content_filter"}
            if isinstance(content, str):
                data["content"] = content
            return data
        return None

    @staticmethod
    def _tool_call(call: Mapping[str, Any], common: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if "id" in call:
            data["toolCallId"] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            if "name" in function:
                data["toolName"] = function["name"]
            if "arguments" in function:
                arguments = function["arguments"]
                if isinstance(arguments, str):
                    try:
                        data["input"] = decode_json(arguments)
                    except (ValueError, RecursionError):
                        data["input"] = arguments
                else:
                    data["input"] = arguments
        data.update(common)
        return data

    def _chunk(self, chunk: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        response_id = chunk.get("id")
        common: dict[str, Any] = {}
        if "id" in chunk:
            common["responseId"] = response_id
        if "model" in chunk:
            common["model"] = chunk["model"]
        for choice in chunk["choices"]:
            if not isinstance(choice, dict):
                continue
            raw_delta = choice.get("delta")
            delta = raw_delta if isinstance(raw_delta, dict) else {}
            index = choice.get("index")
            key = repr((response_id, index))
            if isinstance(delta.get("content"), str):
                event = make_event("assistant.message", {"content": delta["content"], **common}, meta)
                self.joiner.push(self.session.events, event, ("content", key))
            if isinstance(delta.get("refusal"), str):
                event = make_event("assistant.refusal", {"reason": "refusal", "content": delta["refusal"], **common, "partial": True}, meta)
                self.joiner.push(self.session.events, event, ("refusal", key))
            for call in delta.get("tool_calls") or []:
                if isinstance(call, dict):
                    self._call_fragment(response_id, index, call, common)
            reason = choice.get("finish_reason")
            if reason == "content_filter":
                self.session.emit(make_event("assistant.refusal", {"reason": "content_filter", **common, "partial": True}, meta))
            if reason is not None:
                self._flush_calls(response_id, index, meta)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            if response_id is None:
                self._add_usage(usage)  # nothing tells its chunks apart from another response's
            else:
                mapped = _mapped_usage(usage)
                if mapped:
                    self.chunk_usage[repr(response_id)] = mapped

    def _settle_chunk_usage(self) -> None:
        for key, mapped in self.chunk_usage.items():
            self.accumulator.add(mapped, identity=("chunk", key))
        self.chunk_usage.clear()

    def _call_fragment(self, response_id: Any, index: Any, call: dict[str, Any], common: dict[str, Any]) -> None:
        key = (repr(response_id), repr(index), repr(call.get("index")))
        pending = self.pending_calls.setdefault(key, {"id": None, "name": None, "arguments": [], "common": common})
        if call.get("id") is not None:
            pending["id"] = call["id"]
        raw_function = call.get("function")
        function = raw_function if isinstance(raw_function, dict) else {}
        if isinstance(function.get("name"), str):
            pending["name"] = function["name"]
        if isinstance(function.get("arguments"), str):
            pending["arguments"].append(function["arguments"])

    def _flush_calls(self, response_id: Any, index: Any, meta: Mapping[str, Any]) -> None:
        prefix = (repr(response_id), repr(index))
        for key in [k for k in self.pending_calls if k[:2] == prefix]:
            pending = self.pending_calls.pop(key)
            data: dict[str, Any] = {}
            if pending["id"] is not None:
                data["toolCallId"] = pending["id"]
            if pending["name"] is not None:
                data["toolName"] = pending["name"]
            text = "".join(pending["arguments"])
            try:
                data["input"] = decode_json(text)
            except (ValueError, RecursionError):
                data["input"] = text
            data.update(pending["common"])
            self.session.emit(make_event("tool.execution_start", data, meta))

    def finish(self) -> None:
        """Starts for streamed tool calls whose stream never finished (``partial``); streamed usage counted."""
        self._settle_chunk_usage()
        for key in list(self.pending_calls):
            pending = self.pending_calls.pop(key)
            data: dict[str, Any] = {}
            if pending["id"] is not None:
                data["toolCallId"] = pending["id"]
            if pending["name"] is not None:
                data["toolName"] = pending["name"]
            data["argumentsText"] = "".join(pending["arguments"])
            data.update(pending["common"])
            data["partial"] = True
            self.session.emit(make_event("tool.execution_start", data))

    def _add_usage(self, usage: Mapping[str, Any]) -> None:
        mapped = _mapped_usage(usage)
        if mapped:
            self.accumulator.add(mapped)

    def usage(self) -> dict[str, Any]:
        self._settle_chunk_usage()
        return self.accumulator.usage() if not self.accumulator.empty else {}


def _mapped_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """A chat completion's usage in canonical names."""
    mapped: dict[str, Any] = {}
    if valid_count(usage.get("prompt_tokens")):
        mapped["input_tokens"] = int(usage["prompt_tokens"])
    if valid_count(usage.get("completion_tokens")):
        mapped["output_tokens"] = int(usage["completion_tokens"])
    return mapped
