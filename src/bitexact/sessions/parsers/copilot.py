"""Copilot adapter (UAS 7.2, T-UAS-037).

Four source forms, recognised per line and combined in source order:

* native ``events.jsonl`` records (dot-namespaced ``type`` + object ``data``),
  retained as they are; interrupted delta streams get a core message
  (``streaming.reconcile_native_deltas``); ``session.task_complete`` exposes a
  textual summary as an answer unless that answer was already observed;
  ``session.shutdown.data.agentMetrics`` becomes ``session.result.agentMetrics``;
* Claude-compatible legacy entries (``sourceEngine: "copilot"``);
* framed ``[DEBUG] data:`` chat-completion responses (possibly spread over
  several prefixed lines): content, ``reasoning_text``, ``tool_calls`` starts
  (no completion is invented), refusals, and per-response usage; OpenAI
  Responses API objects and ``response.*`` stream events in the same frames
  go to ``openai_responses.ResponsesMapper``;
* the pretty-print CLI layout: ``✓``/``✗``/``●`` tool lines with indented
  continuation output, and the ``Turns:``/``Model:``/token footer.
"""

from __future__ import annotations

import re
from typing import Any

from bitexact.sessions.convert import LegacyConverter, is_native_event, make_event
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session
from bitexact.sessions.parsers.openai_chat import ChatResponseMapper
from bitexact.sessions.parsers.openai_responses import ResponsesMapper, is_responses_payload
from bitexact.sessions.records import KIND_OBJECT, decode_json, frame, raw_decode_at
from bitexact.sessions.streaming import reconcile_native_deltas

ENGINE = "copilot"
_RAW_DECODE = raw_decode_at

DEBUG_DATA = "[DEBUG] data:"
_DEBUG_PREFIX = re.compile(r"^\S*\s*\[DEBUG\] ?")
_TOOL_LINE = re.compile(r"^([✓✗●]) (\S.*)$")
_CONTINUATION = re.compile(r"^ {2,}")
_CONNECTOR = re.compile(r"^ {2}(?:[└⎿] )?")
_TURNS = re.compile(r"^\s*Turns:\s*(\d+)\s*$")
# "Model: " is framing; the reported name after it is payload and is not trimmed (7.2).
_MODEL = re.compile(r"^\s*Model: (.*\S.*)$")
_TOKENS = re.compile(r"^\s*(Input|Output) tokens:\s*([\d,]+)\s*$")


def _json_end(text: str) -> int | None:
    """Index just past the first complete JSON object in ``text`` (string-aware)."""
    depth = 0
    in_string = escaped = False
    started = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
            started = True
        elif char in "}]":
            depth -= 1
            if started and depth == 0:
                return index + 1
    return None


class CopilotParser:
    def __init__(self) -> None:
        self.session = Session(ENGINE)
        self.legacy = LegacyConverter(ENGINE)
        self.chat = ChatResponseMapper(self.session, ENGINE)
        # Both APIs feed one accounting: distinct responses of either kind add once.
        self.responses = ResponsesMapper(self.session, self.chat.accumulator)
        self.footer: dict[str, Any] = {}
        self.footer_usage: dict[str, int] = {}
        self.pretty_records = 0

    # -- native -----------------------------------------------------------
    def native(self, record: dict[str, Any]) -> None:
        self.session.emit(dict(record))

    # -- debug blocks -----------------------------------------------------
    def debug_block(self, lines: list[str], start: int) -> int:
        """Collect a framed debug JSON block; returns the index of the next unread line."""
        first = lines[start]
        body = [first.split(DEBUG_DATA, 1)[1].lstrip(" ")]
        index = start + 1
        while True:
            joined = "\n".join(body)
            end = _json_end(joined)
            if end is not None:
                break
            if index >= len(lines):
                self.session.diagnostics.add(f"line {start + 1}: truncated debug response block skipped")
                return index
            line = lines[index]
            if DEBUG_DATA in line:
                self.session.diagnostics.add(f"line {start + 1}: truncated debug response block skipped")
                return index
            body.append(_DEBUG_PREFIX.sub("", line, count=1))
            index += 1
        try:
            value = decode_json(joined[:end])
        except ValueError:
            self.session.diagnostics.add(f"line {start + 1}: malformed debug response block skipped")
            return index
        if isinstance(value, dict) and isinstance(value.get("choices"), list):
            self.chat.response(value, {})
            self.session.recognized += 1
        elif is_responses_payload(value):
            self.responses.payload(value)
            self.session.recognized += 1
        else:
            self.session.diagnostics.add(f"line {start + 1}: debug data block is neither a chat completion nor a Responses API payload; skipped")
        return index

    # -- pretty print -----------------------------------------------------
    def tool_line(self, lines: list[str], start: int, marker: str, title: str) -> int:
        index = start + 1
        output: list[str] = []
        while index < len(lines) and _CONTINUATION.match(lines[index].rstrip("\r")):
            output.append(_CONNECTOR.sub("", lines[index].rstrip("\r"), count=1))
            index += 1
        self.session.emit(make_event("tool.execution_start", {"toolName": title}))
        data: dict[str, Any] = {"toolName": title}
        if marker == "✓":
            data["success"] = True
        elif marker == "✗":
            data["success"] = False
        if output:
            data["output"] = "\n".join(output)
        self.session.emit(make_event("tool.execution_complete", data))
        self.session.recognized += 1
        self.pretty_records += 1
        return index

    def footer_line(self, line: str) -> bool:
        if match := _TURNS.match(line):
            self.footer["numTurns"] = int(match.group(1))
        elif match := _MODEL.match(line):
            self.footer["model"] = match.group(1)
        elif match := _TOKENS.match(line):
            field = "input_tokens" if match.group(1) == "Input" else "output_tokens"
            self.footer_usage[field] = int(match.group(2).replace(",", ""))
        else:
            return False
        return True

    # -- driver -----------------------------------------------------------
    def run(self, text: str) -> ParseResult:
        session = self.session
        if text.lstrip().startswith("["):
            items = frame(text)
            if items and items[0].in_array:
                for item in items:
                    if item.kind == KIND_OBJECT:
                        self.record(item.value)
                    else:
                        session.diagnostics.skipped(item)
                return self.finish(text)
        lines = text.split("\n")
        index = 0
        while index < len(lines):
            line = lines[index]
            if DEBUG_DATA in line:
                index = self.debug_block(lines, index)
                continue
            located = line.strip()
            if located.startswith("{"):
                try:
                    value = decode_json(located)
                except ValueError:
                    session.diagnostics.add(f"line {index + 1}: malformed or truncated JSON record skipped")
                else:
                    if isinstance(value, dict):
                        self.record(value, index + 1)
                    else:
                        session.diagnostics.add(f"line {index + 1}: non-object JSON entry skipped")
                index += 1
                continue
            if located.startswith("[") and (located == "[" or located[1:].lstrip().startswith("{")):
                resumed = self.embedded_array(text, lines, index)
                if resumed is not None:
                    index = resumed
                    continue
            match = _TOOL_LINE.match(line.rstrip("\r"))
            if match:
                index = self.tool_line(lines, index, match.group(1), match.group(2))
                continue
            self.footer_line(line.rstrip("\r"))
            index += 1
        return self.finish(text)

    def embedded_array(self, text: str, lines: list[str], index: int) -> int | None:
        """Decode a JSON array opening on line ``index``; the next line index, or None."""
        offset = sum(len(line) + 1 for line in lines[:index])
        line = lines[index]
        start = offset + len(line) - len(line.lstrip())
        try:
            value, end = _RAW_DECODE(text, start)
        except ValueError:
            return None
        if not isinstance(value, list):
            return None
        for element in value:
            if isinstance(element, dict):
                self.record(element, index + 1)
            else:
                self.session.diagnostics.add(f"line {index + 1}: non-object JSON entry skipped")
        while index < len(lines) and offset <= end:
            offset += len(lines[index]) + 1
            index += 1
        return index

    def record(self, record: dict[str, Any], line: int | None = None) -> None:
        session = self.session
        if is_native_event(record):
            self.native(record)
        elif LegacyConverter.recognizes(record):
            session.emit(*self.legacy.convert(record))
        else:
            where = f"line {line}" if line is not None else "record"
            session.diagnostics.add(f"{where}: unrecognized record skipped")
            return
        session.recognized += 1

    def finish(self, text: str) -> ParseResult:
        session = self.session
        self.chat.finish()
        session.emit(*self.legacy.finish())
        events = reconcile_native_deltas(session.events)
        events = _task_complete_summaries(events)
        events = _shutdown_metrics(events)
        session.events = events
        if "numTurns" not in self.footer and not self.pretty_records:
            # A lone "Model:"/token line is not a recognized CLI layout.
            self.footer.clear()
            self.footer_usage.clear()
        elif self.footer or self.footer_usage:
            session.recognized += 1
        result: dict[str, Any] = {}
        usage = self.chat.usage()
        if self.footer_usage:
            usage = {**usage, **self.footer_usage}
        if self.footer.get("numTurns") is not None:
            result["numTurns"] = self.footer["numTurns"]
        if usage:
            result["usage"] = usage
        if "model" in self.footer:
            result["model"] = self.footer["model"]
        errors = [*self.chat.errors, *self.responses.errors]
        if errors:
            result["errors"] = errors
        if result:
            session.emit(make_event("session.result", result))
        return session.result(text)


def _task_complete_summaries(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Expose a textual task-complete summary as an answer, once (7.2)."""
    out: list[dict[str, Any]] = []
    last_answer: Any = None
    for index, event in enumerate(events):
        out.append(event)
        kind = event.get("type")
        raw_data = event.get("data")
        data = raw_data if isinstance(raw_data, dict) else {}
        if kind == "assistant.message":
            last_answer = data.get("content")
        if kind == "session.task_complete" and isinstance(data.get("summary"), str):
            summary = data["summary"]
            following = events[index + 1] if index + 1 < len(events) else None
            already_next = (
                following is not None
                and following.get("type") == "assistant.message"
                and isinstance(following.get("data"), dict)
                and following["data"].get("content") == summary
            )
            if summary != last_answer and not already_next:
                out.append({"type": "assistant.message", "data": {"content": summary, "sourceType": "session.task_complete"}})
                last_answer = summary
    return out


def _shutdown_metrics(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``session.shutdown.data.agentMetrics`` as a session.result snapshot (7.2)."""
    out: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        out.append(event)
        data = event.get("data")
        if event.get("type") != "session.shutdown" or not isinstance(data, dict) or "agentMetrics" not in data:
            continue
        later_result = any(e.get("type") == "session.result" for e in events[index + 1:])
        if not later_result:
            out.append({"type": "session.result", "data": {"agentMetrics": data["agentMetrics"], "sourceType": "session.shutdown"}})
    return out


def parse(text: str) -> ParseResult:
    """Parse a Copilot events.jsonl, legacy, debug or pretty-print log."""
    return CopilotParser().run(text)
