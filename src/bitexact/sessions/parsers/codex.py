"""Codex adapter (UAS 7.3, T-UAS-038).

JSONL ``thread.*`` / ``turn.*`` / ``item.*`` records, plus the older
timestamp-framed text layout (``[ts] thinking``, ``[ts] exec ...``,
``[ts] tool server.tool(args)``, ``[ts] codex``, ``ERROR:``...).

* Items keep their native ``id`` as ``toolCallId``/``itemId``.  A completed
  tool item with no observed start expands to start + completion at its
  position; ``item.updated`` and repeated completions are
  ``tool.execution_update`` (never another execution or an inferred end).
* Distinct ``turn.completed.usage`` reports accumulate field by field
  (``cached_input_tokens`` -> cache-read, ``cache_write_input_tokens`` ->
  cache-creation); a ``token_count`` record's ``total_token_usage`` is a
  cumulative snapshot that replaces, never adds.
* ``turn.failed``, top-level ``error`` and error items are session errors,
  kept apart from tool failures.  The derived ``session.result`` is appended
  after the observations it accounts for.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Mapping, cast

from bitexact.sessions.convert import ENVELOPE_KEYS, is_native_event, make_event
from bitexact.sessions.correlate import ToolTracker
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, map_record
from bitexact.sessions.records import KIND_OBJECT, KIND_TEXT, decode_json, frame
from bitexact.sessions.usage import UsageAccumulator, normalize_usage

ENGINE = "codex"

USAGE_MAPPING = {"cached_input_tokens": "cache_read_input_tokens", "cache_write_input_tokens": "cache_creation_input_tokens"}
MESSAGE_ITEMS = {"agent_message": "assistant.message", "reasoning": "assistant.reasoning", "user_message": "user.message"}
TOOL_ITEMS = frozenset({"command_execution", "mcp_tool_call", "web_search", "collab_tool_call"})
RECORD_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started", "item.updated", "item.completed", "error", "token_count"})


def is_codex_record(record: Mapping[str, Any]) -> bool:
    """A supported Codex JSONL signature (payload, not just the namespace)."""
    kind = record.get("type")
    if kind == "thread.started":
        return isinstance(record.get("thread_id"), str)
    if kind in ("item.started", "item.updated", "item.completed"):
        item = record.get("item")
        return isinstance(item, dict) and isinstance(item.get("type"), str)
    if kind == "turn.completed":
        return isinstance(record.get("usage"), dict)
    if kind == "turn.failed":
        return "error" in record
    if kind == "turn.started":
        return "data" not in record
    if kind == "token_count":
        return isinstance(record.get("info"), dict)
    return False


class CodexJsonMapper:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.tools = ToolTracker()
        # Item IDs ("item_0", ...) restart with each run: every observed thread.started opens a new scope for
        # tool and message correlation, so a later run's items are never taken for an earlier run's.
        self.thread = 0
        self.usage = UsageAccumulator()
        self.turns = 0
        self.turn_ids: set[Any] = set()
        self.errors: list[Any] = []
        self.status: str | None = None
        self.source_type: str | None = None
        self.accounting = False
        # Unfinished message items: (core type, data, metadata, text, the update event that last held the text).
        self.pending_text: dict[Any, tuple[str, dict[str, Any], dict[str, Any], Any, dict[str, Any]]] = {}

    def map(self, record: dict[str, Any]) -> bool:
        kind = record.get("type")
        if is_native_event(record):
            self.session.emit(dict(record))
            return True
        if kind == "error" and ("message" in record or "error" in record):
            self._error(record, "error")
            return True
        if not is_codex_record(record):
            return False
        meta = {k: v for k, v in record.items() if k not in ("type", "item", "usage", "thread_id", "error", "info")}
        if kind == "thread.started":
            self.thread += 1
            data = {"sourceEngine": ENGINE, "sessionId": record["thread_id"]}
            for key in ("model", "cwd", "workdir"):
                if key in record:
                    data["cwd" if key == "workdir" else key] = record[key]
                    meta.pop(key, None)
            self.session.emit(make_event("session.init", data, meta))
        elif kind == "turn.started":
            self.session.emit(make_event("turn.started", {}, meta))
        elif kind == "turn.completed":
            self._turn_completed(record, meta)
        elif kind == "turn.failed":
            self._error(record, "turn.failed")
            self.status, self.source_type = "failed", "turn.failed"
        elif kind == "token_count":
            total = record["info"].get("total_token_usage")
            if isinstance(total, dict):
                self.usage.snapshot(normalize_usage(total, USAGE_MAPPING))
                self.accounting = True
            self.session.emit(make_event("session.info", {"sourceType": "token_count", "info": record["info"]}, meta))
        else:
            # is_codex_record() admitted only the RECORD_TYPES strings, so ``kind`` is an item.* str here
            self._item(cast(str, kind), record["item"], meta)
        return True

    def _turn_completed(self, record: dict[str, Any], meta: dict[str, Any]) -> None:
        identity = record.get("turn_id", meta.get("id"))
        if identity is not None and identity in self.turn_ids:
            self.session.emit(make_event("turn.completed", {"usage": record["usage"], "duplicate": True}, meta))
            return
        if identity is not None:
            self.turn_ids.add(identity)
        self.turns += 1
        self.accounting = True
        self.usage.add(normalize_usage(record["usage"], USAGE_MAPPING))
        self.status, self.source_type = "completed", "turn.completed"
        self.session.emit(make_event("turn.completed", {"usage": record["usage"]}, meta))

    def _error(self, record: dict[str, Any], source: str) -> None:
        # Envelope fields (id, timestamp, ...) stay the event's metadata, as on every other record.
        payload = {k: v for k, v in record.items() if k != "type" and k not in ENVELOPE_KEYS}
        meta = {k: v for k, v in record.items() if k in ENVELOPE_KEYS}
        error = record.get("error", record.get("message"))
        self.errors.append(error)
        self.accounting = True
        data = {"sourceType": source}
        data.update(payload)
        self.session.emit(make_event("session.error", data, meta))

    # -- items ------------------------------------------------------------
    def _item(self, kind: str, item: dict[str, Any], meta: dict[str, Any]) -> None:
        phase = kind.split(".", 1)[1]
        itype = item["type"]
        if itype in MESSAGE_ITEMS:
            self._message_item(phase, item, meta)
        elif itype in TOOL_ITEMS:
            self._tool_item(phase, item, meta)
        elif itype == "file_change":
            self._file_change(phase, item, meta)
        elif itype == "todo_list":
            data = {"sourceType": "todo_list", "content": item.get("items")}
            if "id" in item:
                data["itemId"] = item["id"]
            self.session.emit(make_event("session.info", data, meta))
        elif itype == "error" and phase == "completed":
            self.errors.append(item.get("message", item))
            self.accounting = True
            data = {"sourceType": "item.error", **{k: v for k, v in item.items() if k != "type"}}
            self.session.emit(make_event("session.error", data, meta))
        else:
            self.session.emit(make_event(kind, {"item": item}, meta))

    def _message_item(self, phase: str, item: dict[str, Any], meta: dict[str, Any]) -> None:
        core = MESSAGE_ITEMS[item["type"]]
        text = item.get("text")
        base: dict[str, Any] = {}
        if "id" in item:
            base["itemId"] = item["id"]
        extras = {k: v for k, v in item.items() if k not in ("id", "type", "text")}
        if phase == "completed":
            self.pending_text.pop((self.thread, item.get("id")), None)
            data = {"content": text, **base, **extras} if "text" in item else {**base, **extras}
            self.session.emit(make_event(core, data, meta))
            return
        data = {**base, "itemType": item["type"], "sourceType": f"item.{phase}", **extras}
        update = make_event("assistant.message_update", data, meta)
        if "text" in item:
            data["content"] = text
            data["partial"] = True
            self.pending_text[(self.thread, item.get("id"))] = (core, {**base, **extras}, dict(meta), text, update)
        self.session.emit(update)

    def _tool_fields(self, item: dict[str, Any]) -> dict[str, Any]:
        itype = item["type"]
        data: dict[str, Any] = {}
        if "id" in item:
            data["toolCallId"] = item["id"]
        if itype == "mcp_tool_call":
            if "tool" in item:
                data["toolName"] = item["tool"]
            if "server" in item:
                data["mcpServerName"] = item["server"]
            if "arguments" in item:
                data["input"] = item["arguments"]
        elif itype == "command_execution":
            data["toolName"] = itype
            if "command" in item:
                data["command"] = item["command"]
        elif itype == "collab_tool_call":
            data.update(_collab_fields(item))
        else:
            data["toolName"] = itype
            supplied = {k: v for k, v in item.items() if k not in ("id", "type", "status", "result", "error", "aggregated_output")}
            if supplied:
                data["input"] = supplied
        return data

    def _tool_item(self, phase: str, item: dict[str, Any], meta: dict[str, Any]) -> None:
        call_id = item.get("id")
        start = self._tool_fields(item)
        if phase == "started":
            if self.tools.has_start(self.thread, call_id):
                self.session.emit(make_event("tool.execution_update", {**start, "partial": True, "status": item.get("status")}, meta))
                return
            self.tools.started(self.thread, call_id, start.get("toolName"))
            self.session.emit(make_event("tool.execution_start", start, meta))
            return
        if phase == "updated" or self.tools.is_complete(self.thread, call_id):
            update = dict(start)
            for key in ("aggregated_output", "result", "agents_states", "error", "status", "exit_code"):
                if key in item:
                    update["output" if key in ("aggregated_output", "result", "agents_states") else ("exitCode" if key == "exit_code" else key)] = item[key]
            update["partial"] = True
            self.session.emit(make_event("tool.execution_update", update, meta))
            return
        if not self.tools.has_start(self.thread, call_id):
            # A completed item carrying the whole invocation expands at its position.
            self.tools.started(self.thread, call_id, start.get("toolName"))
            self.session.emit(make_event("tool.execution_start", start, meta))
        self.tools.mark_complete(self.thread, call_id)
        self.session.emit(make_event("tool.execution_complete", self._completion(item, start), meta))

    @staticmethod
    def _completion(item: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {k: start[k] for k in ("toolCallId", "toolName", "mcpServerName", "command", "itemType") if k in start}
        if item["type"] == "collab_tool_call":
            # The completing item's thread identities win (a spawn learns its receiver late).
            data.update({k: v for k, v in _collab_fields(item).items() if k in COLLAB_IDENTITIES.values()})
            if "agents_states" in item:
                data["output"] = item["agents_states"]
        status = item.get("status")
        if "aggregated_output" in item:
            data["output"] = item["aggregated_output"]
        if "result" in item:
            data["output"] = item["result"]
        if "error" in item:
            data["error"] = item["error"]
        if "exit_code" in item:
            data["exitCode"] = item["exit_code"]
        if status is not None:
            data["status"] = status
        exit_code = item.get("exit_code")
        failed = (
            status in ("failed", "declined", "error")
            or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0)
            or item.get("error") not in (None, "", False)  # a null, empty or false error is no failure (T-UAS-013)
        )
        if failed:
            data["success"] = False
        elif status == "completed" and (item["type"] != "command_execution" or exit_code == 0):
            data["success"] = True
        return data

    def _file_change(self, phase: str, item: dict[str, Any], meta: dict[str, Any]) -> None:
        data: dict[str, Any] = {}
        if "id" in item:
            data["toolCallId"] = item["id"]
        data["toolName"] = "apply_patch"
        if "changes" in item:
            data["output"] = item["changes"]
        if "status" in item:
            data["status"] = item["status"]
        if phase != "completed" or self.tools.is_complete(self.thread, item.get("id")):
            self.session.emit(make_event("tool.execution_update", {**data, "partial": True}, meta))
            return
        self.tools.mark_complete(self.thread, item.get("id"))
        if item.get("status") == "completed":
            data["success"] = True
        elif item.get("status") == "failed":
            data["success"] = False
        self.session.emit(make_event("tool.execution_complete", data, meta))

    def finish(self) -> None:
        # The observed text of a message that never completed stays where it was observed (T-UAS-019):
        # right after its last update, not after the tools and turns that followed it.
        events = self.session.events
        for core, data, meta, text, update in self.pending_text.values():
            position = next(index for index, event in enumerate(events) if event is update)
            events.insert(position + 1, make_event(core, {"content": text, **data, "partial": True}, meta))
        if not self.accounting:
            return
        result: dict[str, Any] = {}
        if self.turns:
            result["numTurns"] = self.turns
        if not self.usage.empty:
            result["usage"] = self.usage.usage()
        if self.status is not None:
            result["status"] = self.status
            result["sourceType"] = self.source_type
        if self.errors:
            result["errors"] = list(self.errors)
        if result:
            self.session.emit(make_event("session.result", result))


# -- legacy text layout ------------------------------------------------------
_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\dT[^\]]+)\] (.*)$")
_EXEC = re.compile(r"^exec (.+?) in (\S.*)$")
# Codex prints a duration as "250ms", "1.21s" (below a minute, two decimals) or "1m 05s" (format_duration).
_DURATION = r"(\d+(?:\.\d+)?ms|\d+(?:\.\d+)?s|\d+m \d+s)"
_EXEC_DONE = re.compile(r"^(.+?) (succeeded|exited (-?\d+)) in " + _DURATION + ":$")
_TOOL = re.compile(r"^tool ([\w.-]+)\.([\w-]+)\((.*)\)$")
_TOOL_DONE = re.compile(r"^([\w.-]+)\.([\w-]+)\((.*)\) (success|failed) in " + _DURATION + ":$")
_TOKENS = re.compile(r"^tokens used: ([\d,]+)$")
_INIT = re.compile(r"^(workdir|model|provider|approval|sandbox|reasoning effort|session id): (.*)$")


COLLAB_IDENTITIES = {"sender_thread_id": "senderThreadId", "receiver_thread_ids": "receiverThreadIds"}
"""Collaboration item thread identities (7.3: identities retained on the tool observation)."""


def _collab_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    """Start fields of a ``collab_tool_call``: the native collaboration tool as the
    tool name, the supplied ``prompt`` as input, the thread identities, and
    any other supplied field unchanged (``agents_states`` is the output)."""
    data: dict[str, Any] = {"toolName": item["tool"] if isinstance(item.get("tool"), str) else "collab_tool_call", "itemType": "collab_tool_call"}
    if "prompt" in item:
        data["input"] = {"prompt": item["prompt"]}
    for source, name in COLLAB_IDENTITIES.items():
        if source in item:
            data[name] = item[source]
    known = {"id", "type", "tool", "prompt", "status", "agents_states", "error", *COLLAB_IDENTITIES}
    data.update({k: v for k, v in item.items() if k not in known and k not in data})
    return data


def _arguments(text: str) -> Any:
    try:
        return decode_json(text)
    except (ValueError, RecursionError):
        return text


class CodexTextMapper:
    """The timestamp-framed legacy text layout; bodies run to the next header."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.usage_total: int | None = None
        self.errors: list[Any] = []
        self.init: dict[str, Any] = {}

    def run(self, lines: list[str]) -> None:
        index = 0
        headers: list[tuple[int, str, str]] = []
        for number, line in enumerate(lines):
            match = _HEADER.match(line.rstrip("\r"))
            if match:
                headers.append((number, match.group(1), match.group(2)))
            elif line.startswith("ERROR: "):
                headers.append((number, "", line.rstrip("\r")))
            elif _only_banner(headers) and (m := _INIT.match(line.rstrip("\r"))):
                self.init[m.group(1)] = m.group(2)
        for position, (number, stamp, head) in enumerate(headers):
            end = headers[position + 1][0] if position + 1 < len(headers) else len(lines)
            body_lines = [l[:-1] if l.endswith("\r") else l for l in lines[number + 1:end]]
            while body_lines and body_lines[-1] == "" and end == len(lines):
                body_lines.pop()
            body = "\n".join(body_lines)
            meta = {"timestamp": stamp} if stamp else {}
            self.header(head, body, meta)
            index = end
        del index

    def header(self, head: str, body: str, meta: dict[str, Any]) -> None:
        session = self.session
        emit = session.emit
        if head == "thinking":
            emit(make_event("assistant.reasoning", {"content": body}, meta))
        elif head == "codex":
            emit(make_event("assistant.message", {"content": body}, meta))
        elif m := _EXEC.match(head):
            emit(make_event("tool.execution_start", {"toolName": "exec", "command": m.group(1), "cwd": m.group(2)}, meta))
        elif m := _EXEC_DONE.match(head):
            data: dict[str, Any] = {"toolName": "exec", "command": m.group(1)}
            code = 0 if m.group(2) == "succeeded" else int(m.group(3))
            data["exitCode"] = code
            data["success"] = code == 0
            data["durationMs"] = _duration_ms(m.group(4))
            data["output"] = body
            emit(make_event("tool.execution_complete", data, meta))
        elif m := _TOOL.match(head):
            emit(make_event("tool.execution_start", {"toolName": m.group(2), "mcpServerName": m.group(1), "input": _arguments(m.group(3))}, meta))
        elif m := _TOOL_DONE.match(head):
            data = {"toolName": m.group(2), "mcpServerName": m.group(1), "success": m.group(4) == "success", "durationMs": _duration_ms(m.group(5)), "output": body}
            emit(make_event("tool.execution_complete", data, meta))
        elif m := _TOKENS.match(head):
            self.usage_total = int(m.group(1).replace(",", ""))
        elif head.startswith("ERROR: ") or head.startswith("stream error:"):
            message = head[len("ERROR: "):] if head.startswith("ERROR: ") else head
            self.errors.append(message)
            emit(make_event("session.error", {"message": message, "sourceType": "ERROR" if head.startswith("ERROR: ") else "stream_error"}, meta))
        else:
            return
        session.recognized += 1

    def start(self) -> None:
        if not self.init:
            return
        data: dict[str, Any] = {"sourceEngine": ENGINE}
        if "model" in self.init:
            data["model"] = self.init["model"]
        if "workdir" in self.init:
            data["cwd"] = self.init["workdir"]
        if "session id" in self.init:
            data["sessionId"] = self.init["session id"]
        for key, value in self.init.items():
            if key not in ("model", "workdir", "session id"):
                data[key.replace(" ", "_")] = value
        self.session.events.insert(0, make_event("session.init", data))

    def finish(self) -> None:
        result: dict[str, Any] = {}
        if self.usage_total is not None:
            result["usage"] = {"total_tokens": self.usage_total}
        if self.errors:
            result["errors"] = list(self.errors)
        if result:
            self.session.emit(make_event("session.result", result))


def _only_banner(headers: list[tuple[int, str, str]]) -> bool:
    return not headers or (len(headers) == 1 and headers[0][2].startswith("OpenAI Codex"))


def _duration_ms(text: str) -> int | float:
    """A printed duration in milliseconds: ``12ms`` -> 12, ``1.21s`` -> 1210, ``1m 05s`` -> 65000 (exact decimals)."""
    if text.endswith("ms"):
        return _number(text[:-2])
    if " " in text:
        minutes, seconds = text[:-1].split("m ")
        return (int(minutes) * 60 + int(seconds)) * 1000
    return _number(str(Decimal(text[:-1]) * 1000))


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def parse(text: str) -> ParseResult:
    """Parse Codex JSONL or legacy text output."""
    session = Session(ENGINE)
    items = frame(text)
    json_mapper = CodexJsonMapper(session)
    any_json = False
    unused = []
    for item in items:
        if item.kind == KIND_OBJECT and map_record(session, json_mapper, item):
            session.recognized += 1
            any_json = True
        elif item.kind != KIND_TEXT:
            unused.append(item)
    json_mapper.finish()
    if any_json:
        for item in unused:
            session.diagnostics.skipped(item)
        for item in items:
            if item.kind == KIND_TEXT:
                session.diagnostics.skipped(item)
    else:
        text_mapper = CodexTextMapper(session)
        text_mapper.run(text.split("\n"))
        if session.recognized:
            text_mapper.start()
            text_mapper.finish()
    return session.result(text)
