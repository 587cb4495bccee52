"""Goose sample adapter (UAS 7.8, T-UAS-068): ``goose run --output-format stream-json``.

* ``message`` records with a string ``message.id``, a user/assistant role and
  a content array.  The first one supplies ``session.init``
  (``sourceEngine: "goose"``).  ``text``/``thinking`` chunks of the same
  message and channel concatenate exactly when adjacent.
* ``message.created`` is Unix seconds: the event gets a derived ISO
  ``timestamp``; the original seconds stay in ``data.created``.
* ``toolRequest`` (string ``id``, successful ``toolCall``) is a start;
  ``toolResponse`` (string ``id``, success/error ``toolResult``) a
  completion with its explicit outcome.  Repeated observations of one ID are
  suppressed; an error ``toolCall`` is a coverage warning, never an execution.
* ``complete`` is one cumulative snapshot: input/output/total/cache-read,
  cache-write -> cache-creation, ``cost_usd``; cache is included in input.
  Distinct assistant message IDs give the turn count (only here, because a
  terminal observation exists).  Invalid counts are warned about and omitted.
* ``error`` records are ``session.error`` plus result errors; recognised
  maximum-turn diagnostics set ``max_turns_hit``.  Extension start failures
  become ``mcp.event`` and ``mcp_failures``.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Mapping

from bitexact.sessions.convert import is_native_event, make_event
from bitexact.sessions.correlate import ToolTracker
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, map_record
from bitexact.sessions.records import KIND_OBJECT, KIND_TEXT, frame
from bitexact.sessions.streaming import FragmentJoiner
from bitexact.sessions.usage import valid_count, valid_metric

ENGINE = "goose"
TOKEN_FIELDS = (
    ("input_tokens", ("input_tokens",)),
    ("output_tokens", ("output_tokens",)),
    ("total_tokens", ("total_tokens",)),
    ("cache_read_input_tokens", ("cache_read_input_tokens", "cache_read_tokens", "cached_tokens")),
    ("cache_creation_input_tokens", ("cache_write_input_tokens", "cache_write_tokens", "cache_creation_input_tokens")),
)
MAX_TURN_CODES = frozenset({"max_turns", "max_turns_reached", "max_turns_exceeded", "MAX_TURNS"})
_MAX_TURNS_TEXT = re.compile(r"\bmax(?:imum)?[ _-]?turns\b", re.IGNORECASE)
_MESSAGE_READ = frozenset({"id", "role", "content", "created"})
"""The message keys a message record's mapping reads; any other is kept in each event's data."""
_RECORD_READ = frozenset({"type", "message"})
"""The record keys a message record's mapping reads; any other is kept in each event's metadata."""
_EXTENSION_FAILURE = re.compile(r"[Ff]ailed to start extension[: ]+['\"`]?([A-Za-z0-9_.-]+)")


def is_goose_message(record: Mapping[str, Any]) -> bool:
    message = record.get("message")
    return (
        record.get("type") == "message"
        and isinstance(message, dict)
        and isinstance(message.get("id"), str)
        and message.get("role") in ("assistant", "user")
        and isinstance(message.get("content"), list)
    )


def is_goose_complete(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "complete" and any(
        name in record for _, names in TOKEN_FIELDS for name in names
    ) or (record.get("type") == "complete" and "cost_usd" in record)


def is_goose_error(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "error" and isinstance(record.get("error"), str)


def iso_from_seconds(value: Any) -> str | None:
    """Exact ISO-8601 UTC form of valid Unix seconds, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not valid_metric(value):
        return None
    return _iso(value)


@lru_cache(maxsize=4096)
def _iso(value: int | float) -> str | None:
    try:
        moment = datetime.fromtimestamp(value, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    if isinstance(value, int) or float(value).is_integer():
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return moment.isoformat().replace("+00:00", "Z")


class GooseMapper:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.joiner = FragmentJoiner()
        self.tools = ToolTracker()
        self.requests_seen: set[str] = set()
        self.assistant_ids: list[str] = []
        self.assistant_seen: set[str] = set()
        self.errors: list[Any] = []
        self.initialized = False
        self.complete_seen = False
        self.last_created: int | None = None
        """The last integer ``message.created`` and its ISO stamp (:func:`iso_from_seconds`), asked again only
        when the second changes."""
        self.last_stamp: str | None = None

    def map(self, record: dict[str, Any]) -> bool:
        if is_native_event(record):
            if record["type"] == "goose.mcp_failure":
                for key in ("serverName", "server", "name"):
                    if isinstance(record["data"].get(key), str):
                        self.session.mcp_failure(record["data"][key])
                        break
            self.session.emit(dict(record))
            return True
        if is_goose_message(record):
            self._message(record)
        elif is_goose_complete(record):
            self._complete(record)
        elif is_goose_error(record):
            self._error(record)
        elif record.get("type") == "notification":
            data = {k: v for k, v in record.items() if k != "type"}
            self.session.emit(make_event("session.info", {"sourceType": "notification", **data}))
        else:
            return False
        return True

    def _message(self, record: dict[str, Any]) -> None:
        message = record["message"]
        message_id = message["id"]
        role = message["role"]
        meta: dict[str, Any] = {}
        created = message.get("created")
        if type(created) is int and created == self.last_created:  # a message's records share their second
            stamp = self.last_stamp
        else:
            stamp = iso_from_seconds(created)
            if type(created) is int:
                self.last_created, self.last_stamp = created, stamp
        if stamp is not None:
            meta["timestamp"] = stamp
        common: dict[str, Any] = {"messageId": message_id}
        if "created" in message:
            common["created"] = message["created"]
        # The rest of the envelope survives (UAS 7.8): message keys the mapping does not read (metadata:
        # whether the user or the model saw it) in each event's data, record keys in its metadata.
        if not message.keys() <= _MESSAGE_READ:  # asked in C first: most messages hold nothing else
            common.update({k: v for k, v in message.items() if k not in ("id", "role", "content", "created")})
        if not record.keys() <= _RECORD_READ:
            meta.update({k: v for k, v in record.items() if k not in ("type", "message") and k not in meta})
        if not self.initialized:
            self.initialized = True
            init: dict[str, Any] = {"sourceEngine": ENGINE}
            model = _requested_model(message.get("metadata"))
            if model is not None:
                init["model"] = model
            self.session.emit(make_event("session.init", init, meta))
        if role == "assistant" and message_id not in self.assistant_seen:
            self.assistant_seen.add(message_id)
            self.assistant_ids.append(message_id)
        for block in message["content"]:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            # Chunks join only when their whole envelope is identical (type, message id, created, metadata and
            # record keys): joining chunks that differ would keep the first chunk's envelope only (5.3).
            if btype == "text" and isinstance(block.get("text"), str):
                core = "user.message" if role == "user" else "assistant.message"
                data = {"content": block["text"], **_block_extras(block, "text"), **common}
                self.joiner.push(self.session.events, make_event(core, data, meta))
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                data = {"content": block["thinking"], **_block_extras(block, "thinking"), **common}
                self.joiner.push(self.session.events, make_event("assistant.reasoning", data, meta))
            elif btype == "toolRequest":
                self._tool_request(block, common, meta)
            elif btype == "toolResponse":
                self._tool_response(block, common, meta)
            else:
                core = "user.message" if role == "user" else "assistant.message"
                self.session.emit(make_event(core, {"content": [dict(block)], **common}, meta))

    def _tool_request(self, block: Mapping[str, Any], common: dict[str, Any], meta: dict[str, Any]) -> None:
        call_id = block.get("id")
        call = block.get("toolCall")
        value = call.get("value") if isinstance(call, dict) else None
        if not isinstance(call_id, str) or not isinstance(call, dict) or call.get("status") != "success" or not isinstance(value, dict):
            self.session.diagnostics.add("goose toolRequest without a string id and successful toolCall: no execution recorded")
            return
        if call_id in self.requests_seen:
            return
        self.requests_seen.add(call_id)
        data: dict[str, Any] = {"toolCallId": call_id}
        if "name" in value:
            data["toolName"] = value["name"]
        if "arguments" in value:
            data["input"] = value["arguments"]
        data.update(common)
        self.tools.started(None, call_id, value.get("name"))
        self.session.emit(make_event("tool.execution_start", data, meta))

    def _tool_response(self, block: Mapping[str, Any], common: dict[str, Any], meta: dict[str, Any]) -> None:
        call_id = block.get("id")
        result = block.get("toolResult")
        if not isinstance(call_id, str) or not isinstance(result, dict) or result.get("status") not in ("success", "error"):
            self.session.diagnostics.add("goose toolResponse without a string id and valid toolResult: skipped")
            return
        if not self.tools.mark_complete(None, call_id):
            return
        data: dict[str, Any] = {"toolCallId": call_id}
        name = self.tools.name_for(None, call_id)
        if name is not None:
            data["toolName"] = name
        data["success"] = result["status"] == "success"
        if "value" in result:
            data["output"] = result["value"]
        if "error" in result:
            data["error"] = result["error"]
        data.update(common)
        self.session.emit(make_event("tool.execution_complete", data, meta))

    def _complete(self, record: dict[str, Any]) -> None:
        usage: dict[str, Any] = {}
        for target, names in TOKEN_FIELDS:
            for name in names:
                if name in record:
                    if valid_count(record[name]):
                        usage[target] = record[name]
                    else:
                        self.session.diagnostics.add(f"goose complete: invalid {name} value omitted")
                    break
        self.complete_seen = True
        data: dict[str, Any] = {"sourceType": "complete"}
        if self.assistant_ids:
            data["numTurns"] = len(self.assistant_ids)
        if usage:
            usage["input_tokens_include_cache"] = True
            data["usage"] = usage
        if "cost_usd" in record:
            if valid_metric(record["cost_usd"]):
                data["totalCostUsd"] = record["cost_usd"]
            else:
                self.session.diagnostics.add("goose complete: invalid cost_usd value omitted")
        if self.errors:
            data["errors"] = list(self.errors)
        for key, value in record.items():
            if key != "type" and key not in data and not any(key in names for _, names in TOKEN_FIELDS) and key != "cost_usd":
                data[key] = value
        self.session.emit(make_event("session.result", data))

    def _error(self, record: dict[str, Any]) -> None:
        data = {"message": record["error"]}
        data.update({k: v for k, v in record.items() if k not in ("type", "error")})
        code = record.get("code")
        if code in MAX_TURN_CODES or _MAX_TURNS_TEXT.search(record["error"]):
            self.session.max_turns_hit = True
        self.errors.append(record["error"])
        self.session.emit(make_event("session.error", data))

    def finish(self) -> None:
        """A terminal error-only result when errors were seen but no ``complete``."""
        if self.errors and not self.complete_seen:
            self.session.emit(make_event("session.result", {"errors": list(self.errors)}))

    def text_line(self, line: str) -> bool:
        match = _EXTENSION_FAILURE.search(line)
        if not match:
            return False
        server = match.group(1)
        self.session.mcp_failure(server)
        self.session.emit(make_event("mcp.event", {"event": "extension_start_failure", "serverName": server, "status": "error"}))
        return True


def _block_extras(block: Mapping[str, Any], text_key: str) -> dict[str, Any]:
    """A content block's keys besides its type and text (a thinking ``signature``, text ``annotations``): native
    additions kept as supplied (T-UAS-027)."""
    if len(block) <= 2:  # its type and its text: nothing to keep (most blocks, so asked first)
        return {}
    return {k: v for k, v in block.items() if k not in ("type", text_key, "content")}


def _requested_model(metadata: Any) -> str | None:
    if isinstance(metadata, dict):
        for key in ("model", "requested_model", "model_name"):
            if isinstance(metadata.get(key), str):
                return metadata[key]
    return None


def parse(text: str) -> ParseResult:
    """Parse Goose stream-json output."""
    session = Session(ENGINE)
    mapper = GooseMapper(session)
    for item in frame(text):
        if item.kind == KIND_OBJECT and map_record(session, mapper, item):
            session.recognized += 1
        elif item.kind == KIND_TEXT and mapper.text_line(item.value):
            session.recognized += 1
        else:
            session.diagnostics.skipped(item)
    mapper.finish()
    return session.result(text)
