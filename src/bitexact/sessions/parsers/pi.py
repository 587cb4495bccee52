"""Pi adapter (UAS 7.5, T-UAS-040): flat JSONL and v3 streaming records.

v3 streams (``session``, ``message_start``/``message_update``/``message_end``,
``turn_end``, ``tool_execution_*``, ``agent_*``):

* Streaming text/thinking/tool-call deltas are buffered per content block;
  the finalized message (``message_end`` or ``turn_end.message``) is the
  authoritative snapshot and is emitted once, in content-block order.  If a
  stream stops before any finalized message, the observed fragments are
  emitted (``partial: true``) at the point where the stream moved on.
* A ``toolCall`` block is the one ``tool.execution_start`` for its ID;
  ``tool_execution_start`` adds a start only when no block announced it.
  ``tool_execution_end`` is the completion (orphans kept); updates are
  ``tool.execution_update`` with ``partial: true``.
* Usage of distinct finalized messages accumulates (``input``, ``output``,
  ``cacheRead``, ``cacheWrite``, ``reasoning``, ``totalTokens``); distinct
  ``turn_end`` records are the turn count.  ``errorMessage``, top-level
  ``error`` and RPC ``extension_error`` are session errors, once per message.
* Lifecycle records become ``session.<type>`` extensions with their payload.
* Historical ``pi.*`` observations are normalized without replaying usage.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from bitexact.sessions.convert import is_native_event, make_event
from bitexact.sessions.correlate import ToolTracker
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, parse_objects
from bitexact.sessions.streaming import FragmentJoiner
from bitexact.sessions.usage import UsageAccumulator, normalize_usage, valid_count, valid_metric

ENGINE = "pi"

PI_USAGE = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cacheRead": "cache_read_input_tokens",
    "cacheWrite": "cache_creation_input_tokens",
    "reasoning": "reasoning_output_tokens",
    "totalTokens": "total_tokens",
}
LIFECYCLE = frozenset(
    {
        "agent_start", "agent_end", "agent_settled", "turn_start", "auto_compaction_start",
        "auto_compaction_end", "auto_retry_start", "auto_retry_end", "retry", "compaction",
        "queue_update", "queue", "entry", "reasoning_effort", "thinking_level_change",
    }
)
AUXILIARY_EXCLUDED = frozenset({"agent_end", "agent_settled"})
"""Terminal accounting: a session snapshot, never an auxiliary contribution (7.5)."""
_STREAM_KINDS = frozenset({"message_update", "message_end", "turn_end"})
_BESIDE_A_STREAM = frozenset({"queue_update", "queue", "reasoning_effort", "thinking_level_change", "extension_error"})
"""Records a client or extension sends while a message streams (steering, a setting, an extension's
error): they do not end the stream, so its finalized message still replaces the fragments (5.3)."""
V3_TYPES = frozenset({"session", "message_start", "message_update", "message_end", "turn_end", "tool_execution_start", "tool_execution_update", "tool_execution_end", "extension_error"}) | LIFECYCLE
FLAT_TYPES = frozenset({"init", "assistant", "tool_use", "tool_result", "result"})


def is_v3_record(record: Mapping[str, Any]) -> bool:
    kind = record.get("type")
    if kind == "session":
        return isinstance(record.get("version"), (int, float)) and not isinstance(record.get("version"), bool) and "id" in record
    if kind in ("message_start", "message_end", "message_update", "turn_end"):
        return isinstance(record.get("message"), dict)
    if kind in ("tool_execution_start", "tool_execution_update", "tool_execution_end"):
        return "toolCallId" in record
    if kind == "extension_error":
        return "error" in record
    return kind in LIFECYCLE and "data" not in record


def is_flat_record(record: Mapping[str, Any]) -> bool:
    kind = record.get("type")
    if kind == "init":
        return "model" in record or "session_id" in record or "sessionId" in record
    if kind == "assistant":
        return "message" not in record and ("content" in record or "text" in record)
    if kind == "tool_use":
        return any(k in record for k in ("id", "toolCallId", "tool_call_id")) and any(k in record for k in ("name", "toolName", "tool_name"))
    if kind == "tool_result":
        return any(k in record for k in ("id", "toolCallId", "tool_call_id", "tool_use_id"))
    if kind == "result":
        return isinstance(record.get("stats"), dict)
    return False


def _message_identity(message: Mapping[str, Any]) -> str:
    return repr((message.get("role"), message.get("timestamp"), message.get("responseId")))


def _first(record: Mapping[str, Any], *keys: str) -> tuple[bool, Any]:
    for key in keys:
        if key in record:
            return True, record[key]
    return False, None


class PiMapper:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.tools = ToolTracker()
        self.usage = UsageAccumulator()
        self.auxiliary = UsageAccumulator()
        self.turns = 0
        self.turn_ids: set[str] = set()
        self.errors: list[Any] = []
        self.error_ids: set[str] = set()
        self.emitted: set[str] = set()
        self.stream: dict[int, dict[str, Any]] = {}
        self.stream_message: dict[str, Any] | None = None
        self.terminal: str | None = None
        self.joiner = FragmentJoiner()
        self.flat_result = False
        self.accounting = False

    # -- dispatch ---------------------------------------------------------
    def map(self, record: dict[str, Any]) -> bool:
        kind = record.get("type")
        # Each shape asked once (they read only the record, which nothing below changes), in this order.
        native = is_native_event(record)
        v3 = not native and is_v3_record(record)
        flat = not native and not v3 and is_flat_record(record)
        if not (native or v3 or flat) and not (kind == "error" and ("error" in record or "message" in record)):
            return False  # unrecognized (an RPC acknowledgement, say): it does not end a message's stream
        if kind not in _STREAM_KINDS and kind not in _BESIDE_A_STREAM:
            self.flush_stream()
        if native:
            if isinstance(kind, str) and kind.startswith("pi."):
                self.session.emit(self.historical(record))
            else:
                self.session.emit(dict(record))
            return True
        if v3:
            getattr(self, f"_v3_{kind}", self._lifecycle)(record)
            return True
        if flat:
            getattr(self, f"_flat_{kind}")(record)
            return True
        self._error_record(record)
        return True

    # -- v3 ---------------------------------------------------------------
    def _v3_session(self, record: dict[str, Any]) -> None:
        meta = {k: record[k] for k in ("timestamp",) if k in record}
        data: dict[str, Any] = {"sourceEngine": ENGINE, "sessionId": record["id"]}
        for key, value in record.items():
            if key not in ("type", "id", "timestamp"):
                data[key] = value
        self.session.emit(make_event("session.init", data, meta))

    def _v3_message_start(self, record: dict[str, Any]) -> None:
        message = record["message"]
        if message.get("role") == "user":
            self._user(message, record)
        elif message.get("role") == "assistant":
            self.stream = {}
            self.stream_message = message

    def _v3_message_update(self, record: dict[str, Any]) -> None:
        message = record["message"]
        if message.get("role") != "assistant":
            return
        self.stream_message = message
        event = record.get("assistantMessageEvent")
        if not isinstance(event, dict):
            return
        etype = event.get("type")
        index = event.get("contentIndex")
        if not isinstance(etype, str) or not isinstance(index, int):
            return
        block = self.stream.setdefault(index, {"parts": []})
        if etype.startswith("text_"):
            block["kind"] = "text"
        elif etype.startswith("thinking_"):
            block["kind"] = "thinking"
        elif etype.startswith("toolcall_"):
            block["kind"] = "toolCall"
        if etype.endswith("_delta") and isinstance(event.get("delta"), str):
            block["parts"].append(event["delta"])
        if etype.endswith("_end"):
            if isinstance(event.get("content"), str):
                block["final"] = event["content"]
            if isinstance(event.get("toolCall"), dict):
                block["toolCall"] = event["toolCall"]
        partial_content = message.get("content")
        if isinstance(partial_content, list) and index < len(partial_content) and isinstance(partial_content[index], dict):
            snapshot = partial_content[index]
            if snapshot.get("type") == "toolCall":
                block.setdefault("toolCallSnapshot", {}).update(snapshot)

    def flush_stream(self) -> None:
        """Emit observed streaming fragments of a message that never finalized."""
        if not self.stream:
            self.stream_message = None
            return
        message = self.stream_message or {}
        identity = _message_identity(message)
        stream, self.stream = self.stream, {}
        self.stream_message = None
        if identity in self.emitted:
            return
        self.emitted.add(identity)
        common = self._common(message)
        for index in sorted(stream):
            block = stream[index]
            text = block.get("final", "".join(block["parts"]))
            kind = block.get("kind")
            if kind == "text":
                self.session.emit(make_event("assistant.message", {"content": text, **common, "contentIndex": index, "partial": "final" not in block}))
            elif kind == "thinking":
                self.session.emit(make_event("assistant.reasoning", {"content": text, **common, "contentIndex": index, "partial": "final" not in block}))
            elif kind == "toolCall":
                call = block.get("toolCall") or block.get("toolCallSnapshot") or {}
                if "id" in call:
                    data = self._tool_call(call, common)
                    if "toolCall" not in block:
                        data["argumentsText"] = "".join(block["parts"])
                        data["partial"] = True
                    self._start(data, {})
                else:
                    self.session.emit(make_event("tool.execution_update", {"argumentsText": "".join(block["parts"]), "partial": True, **common, "contentIndex": index}))

    def _common(self, message: Mapping[str, Any]) -> dict[str, Any]:
        common: dict[str, Any] = {}
        for key in ("responseId", "model", "provider", "api", "responseModel", "timestamp"):
            if key in message:
                common["messageTimestamp" if key == "timestamp" else key] = message[key]
        if "responseModel" in message:
            common["requestedModel"] = common.get("model")
            common["model"] = message["responseModel"]
        return common

    def _tool_call(self, call: Mapping[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = {"toolCallId": call.get("id")}
        if "name" in call:
            data["toolName"] = call["name"]
        if "arguments" in call:
            data["input"] = call["arguments"]
        for key, value in common.items():
            data.setdefault(key, value)
        return data

    def _start(self, data: dict[str, Any], meta: Mapping[str, Any]) -> None:
        call_id = data.get("toolCallId")
        if self.tools.has_start(None, call_id):
            return
        self.tools.started(None, call_id, data.get("toolName"))
        self.session.emit(make_event("tool.execution_start", data, meta))

    def _finalized(self, message: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        identity = _message_identity(message)
        if self.stream and _message_identity(self.stream_message or {}) != identity:
            self.flush_stream()
        # The finalized message is the authoritative snapshot of its stream.
        self.stream = {}
        self.stream_message = None
        if message.get("role") == "user":
            self._user(message, meta)
            return
        if message.get("role") != "assistant":
            return
        common = self._common(message)
        if identity not in self.emitted:
            self.emitted.add(identity)
            content = message.get("content")
            blocks = content if isinstance(content, list) else ([{"type": "text", "text": content}] if isinstance(content, str) else [])
            for index, block in enumerate(blocks):
                if not isinstance(block, dict):
                    continue
                btype = block.get("type")
                if btype == "text" and "text" in block:
                    self.session.emit(make_event("assistant.message", {"content": block["text"], **common, "contentIndex": index}, meta))
                elif btype == "thinking" and "thinking" in block:
                    self.session.emit(make_event("assistant.reasoning", {"content": block["thinking"], **common, "contentIndex": index}, meta))
                elif btype == "toolCall" and "id" in block:
                    self._start(self._tool_call(block, common), meta)
                else:
                    self.session.emit(make_event("assistant.message", {"content": [dict(block)], **common, "contentIndex": index}, meta))
        usage = message.get("usage")
        usage_key = f"usage:{identity}"
        if isinstance(usage, dict) and usage_key not in self.usage.seen:
            self.usage.add(normalize_usage(usage, PI_USAGE), identity=usage_key)
            self.accounting = True
        if isinstance(message.get("errorMessage"), str) and identity not in self.error_ids:
            self.error_ids.add(identity)
            data = {"message": message["errorMessage"], **common}
            if "stopReason" in message:
                data["stopReason"] = message["stopReason"]
            self.session.emit(make_event("session.error", data, meta))
            self.errors.append(data)
            self.accounting = True

    def _user(self, message: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        identity = _message_identity(message)
        if identity in self.emitted:
            return
        self.emitted.add(identity)
        content = message.get("content")
        out_meta = {k: v for k, v in meta.items() if k not in ("type", "message")}
        if isinstance(content, str):
            self.session.emit(make_event("user.message", {"content": content}, out_meta))
            return
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "text" and "text" in block:
                self.session.emit(make_event("user.message", {"content": block["text"]}, out_meta))
            else:
                self.session.emit(make_event("user.message", {"content": [block]}, out_meta))

    def _v3_message_end(self, record: dict[str, Any]) -> None:
        self._finalized(record["message"], {})

    def _v3_turn_end(self, record: dict[str, Any]) -> None:
        message = record["message"]
        self._finalized(message, {})
        identity = f"turn:{_message_identity(message)}"
        if identity not in self.turn_ids:
            self.turn_ids.add(identity)
            self.turns += 1
            self.accounting = True
        extra = {k: v for k, v in record.items() if k not in ("type", "message")}
        if extra:
            self.session.emit(make_event("session.turn_end", extra))

    def _v3_tool_execution_start(self, record: dict[str, Any]) -> None:
        data: dict[str, Any] = {"toolCallId": record["toolCallId"]}
        if "toolName" in record:
            data["toolName"] = record["toolName"]
        if "args" in record:
            data["input"] = record["args"]
        self._start(data, {k: v for k, v in record.items() if k not in ("type", "toolCallId", "toolName", "args")})

    def _v3_tool_execution_update(self, record: dict[str, Any]) -> None:
        data: dict[str, Any] = {"toolCallId": record["toolCallId"]}
        if "toolName" in record:
            data["toolName"] = record["toolName"]
        if "args" in record:
            data["input"] = record["args"]
        if "partialResult" in record:
            data["output"] = record["partialResult"]
        data["partial"] = True
        # The record's other fields (timestamp, ...) stay as metadata, as on the start (T-UAS-007).
        meta = {k: v for k, v in record.items() if k not in ("type", "toolCallId", "toolName", "args", "partialResult")}
        self.session.emit(make_event("tool.execution_update", data, meta))

    def _v3_tool_execution_end(self, record: dict[str, Any]) -> None:
        call_id = record["toolCallId"]
        data: dict[str, Any] = {"toolCallId": call_id}
        name = record.get("toolName", self.tools.name_for(None, call_id))
        if name is not None:
            data["toolName"] = name
        if isinstance(record.get("isError"), bool):
            data["success"] = not record["isError"]
        if "result" in record:
            data["result"] = record["result"]
        mapped = {"type", "toolCallId", "toolName", "result"} | ({"isError"} if "success" in data else set())
        meta = {k: v for k, v in record.items() if k not in mapped}
        self.tools.mark_complete(None, call_id)
        self.session.emit(make_event("tool.execution_complete", data, meta))

    def _v3_extension_error(self, record: dict[str, Any]) -> None:
        self._error_record(record)

    def _error_record(self, record: dict[str, Any]) -> None:
        data = {k: v for k, v in record.items() if k != "type"}
        data["sourceType"] = record["type"]
        self.session.emit(make_event("session.error", data))
        self.errors.append(data)
        self.accounting = True

    def _lifecycle(self, record: dict[str, Any]) -> None:
        kind = record["type"]
        if kind == "agent_end":
            self.terminal = "agent_end"
        data = {k: v for k, v in record.items() if k != "type"}
        self.session.emit(make_event(f"session.{kind}", data))
        if kind not in AUXILIARY_EXCLUDED:
            self._auxiliary_usage(record)

    def _auxiliary_usage(self, record: Mapping[str, Any]) -> None:
        """Inference outside the conversation turns (e.g. a compaction summary), counted once.

        The spec names no source field; we read a top-level ``usage`` object
        in Pi's own token names on a non-terminal lifecycle record.  It joins
        the session total once (identity: the record's ``id``, else the whole
        record) and is also totalled on its own as ``auxiliaryUsage``.
        Reported zero counts stay zero, not absent.
        """
        usage = record.get("usage")
        if not isinstance(usage, dict) or not any(valid_count(usage.get(k)) for k in PI_USAGE):
            return
        identity = ("auxiliary", record["type"], repr(record["id"]) if "id" in record else json.dumps(record, sort_keys=True))
        mapped = normalize_usage(usage, PI_USAGE)
        if self.auxiliary.add(mapped, identity=identity):
            self.usage.add(mapped, identity=identity)
            self.accounting = True

    # -- flat ---------------------------------------------------------------
    def _flat_init(self, record: dict[str, Any]) -> None:
        data: dict[str, Any] = {"sourceEngine": ENGINE}
        meta = {k: record[k] for k in ("timestamp",) if k in record}
        for key, value in record.items():
            if key not in ("type", "timestamp"):
                data["sessionId" if key == "session_id" else key] = value
        self.session.emit(make_event("session.init", data, meta))

    def _flat_assistant(self, record: dict[str, Any]) -> None:
        key = "content" if "content" in record else "text"
        data: dict[str, Any] = {"content": record[key]}
        if "delta" in record:
            data["delta"] = record["delta"]
        meta = {k: v for k, v in record.items() if k not in ("type", key, "delta")}
        event = make_event("assistant.message", data, meta)
        if record.get("delta") is True:
            self.joiner.push(self.session.events, event)
        else:
            self.session.emit(event)

    def _flat_tool_use(self, record: dict[str, Any]) -> None:
        data: dict[str, Any] = {}
        _, data["toolCallId"] = _first(record, "id", "toolCallId", "tool_call_id")
        _, data["toolName"] = _first(record, "name", "toolName", "tool_name")
        found, value = _first(record, "input", "arguments", "args", "parameters")
        if found:
            data["input"] = value
        used = {"type", "id", "toolCallId", "tool_call_id", "name", "toolName", "tool_name", "input", "arguments", "args", "parameters"}
        self._start(data, {k: v for k, v in record.items() if k not in used})

    def _flat_tool_result(self, record: dict[str, Any]) -> None:
        _, call_id = _first(record, "id", "toolCallId", "tool_call_id", "tool_use_id")
        data: dict[str, Any] = {"toolCallId": call_id}
        name = self.tools.name_for(None, call_id)
        found, value = _first(record, "name", "toolName", "tool_name")
        if found:
            data["toolName"] = value
        elif name is not None:
            data["toolName"] = name
        found, flag = _first(record, "is_error", "isError")
        if isinstance(flag, bool):
            data["success"] = not flag
        for key in ("output", "result", "content", "error"):
            if key in record:
                # ``content`` is the output only when no ``output`` is supplied; beside one it stays itself.
                data["output" if key == "content" and "output" not in record else key] = record[key]
        used = {"type", "id", "toolCallId", "tool_call_id", "tool_use_id", "name", "toolName", "tool_name", "is_error", "isError", "output", "result", "content", "error"}
        self.tools.mark_complete(None, call_id)
        self.session.emit(make_event("tool.execution_complete", data, {k: v for k, v in record.items() if k not in used}))

    def _flat_result(self, record: dict[str, Any]) -> None:
        stats = record["stats"]
        data: dict[str, Any] = {"sourceType": "result"}
        if valid_count(stats.get("turns")):
            data["numTurns"] = stats["turns"]
        if valid_metric(stats.get("duration_ms")):
            data["durationMs"] = stats["duration_ms"]
        usage_source = {k: v for k, v in stats.items() if k in ("input_tokens", "output_tokens", "input", "output", "cacheRead", "cacheWrite", "cache_read_input_tokens", "cache_creation_input_tokens", "total_tokens")}
        if usage_source:
            data["usage"] = normalize_usage(usage_source, {k: v for k, v in PI_USAGE.items() if k in usage_source})
        data["stats"] = stats
        if self.errors:
            data["errors"] = list(self.errors)
        for key, value in record.items():
            if key not in ("type", "stats"):
                data[key] = value
        self.flat_result = True
        self.session.emit(make_event("session.result", data))

    # -- historical ---------------------------------------------------------
    def historical(self, record: dict[str, Any]) -> dict[str, Any]:
        kind = record["type"][3:]
        data = dict(record["data"])
        meta = {k: v for k, v in record.items() if k not in ("type", "data")}
        if kind == "message_snapshot":
            if "usage" in data:
                data["usageSnapshot"] = data.pop("usage")
            return make_event("session.info", {"sourceType": "message_snapshot", **data}, meta)
        if kind == "message_update":
            if "usage" in data:
                data["usageSnapshot"] = data.pop("usage")
            sub = data.get("assistantMessageEvent", {}).get("type") if isinstance(data.get("assistantMessageEvent"), dict) else data.get("updateType")
            if isinstance(sub, str) and sub.startswith("toolcall"):
                return make_event("tool.execution_update", {"updateType": sub, **data}, meta)
            return make_event("assistant.message_update", data, meta)
        if kind == "tool_execution_update":
            return make_event("tool.execution_update", {"partial": True, **data}, meta)
        if kind == "error":
            return make_event("session.error", data, meta)
        if kind in LIFECYCLE:
            return make_event(f"session.{kind}", data, meta)
        if kind.startswith("subagent_"):
            return make_event(f"subagent.{kind[len('subagent_'):]}", data, meta)
        return dict(record)

    def finish(self) -> None:
        self.flush_stream()
        if self.flat_result or not self.accounting:
            return
        data: dict[str, Any] = {}
        if self.turns:
            data["numTurns"] = self.turns
        if not self.usage.empty:
            data["usage"] = self.usage.usage()
        if not self.auxiliary.empty:
            data["auxiliaryUsage"] = self.auxiliary.usage()
        if self.errors:
            data["errors"] = list(self.errors)
        if self.terminal:
            data["sourceType"] = self.terminal
        if data:
            self.session.emit(make_event("session.result", data))


def parse(text: str) -> ParseResult:
    """Parse Pi flat JSONL or v3 streaming output."""
    session = Session(ENGINE)
    mapper = PiMapper(session)
    return parse_objects(session, mapper, text)

