"""Cursor sample adapter (UAS 7.9): ``--output-format stream-json`` and historical text.

Stream-json records share Claude's ``system``/``init``, ``user``,
``assistant`` and ``result`` shapes (mapped by ``convert.LegacyConverter``
with ``sourceEngine: "cursor"``) and add:

* ``tool_call`` ``started``/``completed`` with ``call_id`` and a
  ``tool_call`` object whose single key names the tool (``readToolCall``,
  ``function``...): start with ``args``; completion with ``result.success``
  (success) or ``result.error``/``rejected`` (failure).  Repeated snapshots of
  one call are updates, never another execution.
* ``thinking`` ``delta`` records joined exactly into one reasoning event.
* Partial assistant text (``--stream-partial-output``): adjacent text chunks
  join; a following full snapshot equal to what was streamed adds nothing.

Historical text output is only the captured final answer: its exact text
(blank lines and final newlines kept) after leading CLI-version lines.  It
never yields ``session.init``, tools, turns or accounting.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from bitexact.sessions.convert import LegacyConverter, is_native_event, make_event
from bitexact.sessions.correlate import ToolTracker
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, map_record
from bitexact.sessions.records import KIND_OBJECT, frame
from bitexact.sessions.streaming import FragmentJoiner

ENGINE = "cursor"
_VERSION_LINE = re.compile(
    r"^(?:(?:cursor-agent|cursor|Cursor Agent|Cursor CLI)\b.*|\d{4}\.\d{2}\.\d{2}-[0-9a-f]{6,}|[Vv]ersion:? \S+)\s*$"
)


def is_cursor_record(record: Mapping[str, Any]) -> bool:
    kind = record.get("type")
    if kind == "tool_call":
        return "call_id" in record and isinstance(record.get("tool_call"), dict) and record.get("subtype") in ("started", "completed")
    if kind == "thinking":
        return record.get("subtype") in ("delta", "completed")
    return False


class CursorMapper:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.legacy = LegacyConverter(ENGINE)
        self.tools = ToolTracker()
        self.joiner = FragmentJoiner()
        self.streamed: dict[str, Any] | None = None

    def map(self, record: dict[str, Any]) -> bool:
        if is_native_event(record):
            self.session.emit(dict(record))
            return True
        kind = record.get("type")
        if kind == "assistant" and self._partial_text(record):
            return True
        if LegacyConverter.recognizes(record):
            self.session.emit(*self.legacy.convert(record))
            return True
        if not is_cursor_record(record):
            return False
        if kind == "thinking":
            self._thinking(record)
        else:
            self._tool_call(record)
        return True

    def _partial_text(self, record: dict[str, Any]) -> bool:
        """Join streamed assistant text; drop a final snapshot that repeats it."""
        message = record.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            return False
        if "stop_reason" in message or "usage" in message or "id" in message:
            return False  # a full response envelope: the shared mapping keeps refusals and usage
        blocks = message["content"]
        if not blocks or not all(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in blocks):
            return False
        text = "".join(b["text"] for b in blocks)
        meta = {k: v for k, v in record.items() if k not in ("type", "message", "timestamp_ms")}
        last = self.session.events[-1] if self.session.events else None
        if last is not None and last is self.streamed and last["data"].get("content") == text:
            return True
        data: dict[str, Any] = {"content": text}
        if "timestamp_ms" in record:
            data["timestampMs"] = record["timestamp_ms"]
        event = make_event("assistant.message", data, meta)
        key = ("assistant", repr(sorted(meta.items())))
        self.streamed = self.joiner.push(self.session.events, event, key)
        if self.streamed is not event:
            self.streamed["data"].pop("timestampMs", None)
        return True

    def _thinking(self, record: dict[str, Any]) -> None:
        meta = {k: v for k, v in record.items() if k not in ("type", "subtype", "text", "timestamp_ms")}
        if record["subtype"] == "delta" and isinstance(record.get("text"), str):
            event = make_event("assistant.reasoning", {"content": record["text"]}, meta)
            self.joiner.push(self.session.events, event, ("thinking", repr(sorted(meta.items()))))

    def _tool_call(self, record: dict[str, Any]) -> None:
        call_id = record["call_id"]
        payload = record["tool_call"]
        name, body = next(iter(payload.items())) if len(payload) == 1 else (None, payload)
        body = body if isinstance(body, dict) else {}
        meta = {k: v for k, v in record.items() if k not in ("type", "subtype", "call_id", "tool_call")}
        start: dict[str, Any] = {"toolCallId": call_id}
        if name == "function" and isinstance(body.get("name"), str):
            start["toolName"] = body["name"]
            if "arguments" in body:
                start["input"] = body["arguments"]
        else:
            if name is not None:
                start["toolName"] = name
            if "args" in body:
                start["input"] = body["args"]
        if not self.tools.has_start(None, call_id):
            self.tools.started(None, call_id, start.get("toolName"))
            self.session.emit(make_event("tool.execution_start", start, meta))
        if record["subtype"] != "completed":
            return
        data: dict[str, Any] = {k: start[k] for k in ("toolCallId", "toolName") if k in start}
        result = body.get("result")
        if "result" in body:
            data["result"] = result
        if isinstance(result, dict):
            if "success" in result:
                data["success"] = True
                data["output"] = result["success"]
            if "error" in result or "rejected" in result or "failure" in result:
                data["success"] = False
                for key in ("error", "rejected", "failure"):
                    if key in result:
                        data["error"] = result[key]
                        break
        if not self.tools.mark_complete(None, call_id):
            self.session.emit(make_event("tool.execution_update", {**data, "partial": True}, meta))
            return
        self.session.emit(make_event("tool.execution_complete", data, meta))

    def finish(self) -> None:
        self.session.emit(*self.legacy.finish())


def plaintext_answer(text: str) -> str | None:
    """The captured final answer of historical text output, exactly, or None."""
    lines = text.split("\n")
    start = 0
    while start < len(lines) and (not lines[start].strip() or _VERSION_LINE.match(lines[start].rstrip("\r"))):
        start += 1
    answer = "\n".join(lines[start:])
    return answer if answer.strip() else None


def parse(text: str) -> ParseResult:
    """Parse Cursor stream-json output, or historical plain-text output."""
    session = Session(ENGINE)
    mapper = CursorMapper(session)
    items = frame(text)
    for item in items:
        if item.kind == KIND_OBJECT and map_record(session, mapper, item):
            session.recognized += 1
        else:
            session.diagnostics.skipped(item)
    mapper.finish()
    if session.recognized == 0 and not any(item.kind == KIND_OBJECT for item in items):
        answer = plaintext_answer(text)
        if answer is not None:
            session.diagnostics = type(session.diagnostics)()
            session.emit(make_event("assistant.message", {"content": answer}))
            session.recognized = 1
    return session.result(text)
