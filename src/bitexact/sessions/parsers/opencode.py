"""OpenCode sample adapter (UAS 7.7): ``opencode run --format json`` records.

Signature: a string ``sessionID`` and a recognised event carrying an object
``part`` (``text``, ``reasoning``, ``tool_use``, ``step_start``,
``step_finish``) or a structured ``error``.  Unrelated JSON and prose are not
messages.

* The first recognised record of each ``sessionID`` supplies ``session.init``
  (``sourceEngine: "opencode"``, the observed session ID).
* A tool part in state ``completed``/``error`` expands into start +
  completion at its position; ``durationMs`` only from valid native
  ``time.start``/``time.end`` (milliseconds).  Duplicate parts are identified
  by part/call ID within their session.
* Distinct ``step_finish`` parts accumulate turns, cost and tokens
  (``total``, ``input``, ``output``, ``reasoning``, ``cache.read``/``write``)
  into the trailing ``session.result``; cache counts are separate from input.
* ``opencode.max_turns`` sets ``max_turns_hit``; ``opencode.mcp_failure`` and
  logfmt ``message="server unavailable"`` lines naming a server report
  ``mcp_failures``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from bitexact.sessions.convert import is_native_event, make_event
from bitexact.sessions.correlate import ToolTracker
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, map_record
from bitexact.sessions.records import KIND_OBJECT, KIND_TEXT, frame
from bitexact.sessions.usage import UsageAccumulator, valid_count, valid_metric

ENGINE = "opencode"
PART_EVENTS = frozenset({"text", "reasoning", "tool_use", "tool", "step_start", "step_finish"})
_SERVER_UNAVAILABLE = re.compile(r'message="server unavailable"')
_LOGFMT_NAME = re.compile(r'\b(?:key|server|name|mcp)=("(?:[^"\\]|\\.)*"|\S+)')


def is_opencode_record(record: Mapping[str, Any]) -> bool:
    if not isinstance(record.get("sessionID"), str):
        return False
    kind = record.get("type")
    if kind in PART_EVENTS:
        return isinstance(record.get("part"), dict)
    if kind == "error":
        return isinstance(record.get("error"), dict)
    return False


class OpenCodeMapper:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.sessions_seen: set[str] = set()
        self.tools = ToolTracker()
        self.steps: set[Any] = set()
        self.usage = UsageAccumulator()
        self.turns = 0
        self.cost: float | int | None = None
        self.errors: list[Any] = []
        self.accounting = False

    def map(self, record: dict[str, Any]) -> bool:
        if is_native_event(record):
            kind = record["type"]
            if kind == "opencode.max_turns":
                self.session.max_turns_hit = True
            elif kind == "opencode.mcp_failure":
                for key in ("serverName", "server", "name"):
                    if isinstance(record["data"].get(key), str):
                        self.session.mcp_failure(record["data"][key])
                        break
            self.session.emit(dict(record))
            return True
        if not is_opencode_record(record):
            return False
        session_id = record["sessionID"]
        meta = {k: v for k, v in record.items() if k not in ("type", "part", "error")}
        if session_id not in self.sessions_seen:
            self.sessions_seen.add(session_id)
            self.session.emit(make_event("session.init", {"sourceEngine": ENGINE, "sessionId": session_id}, meta))
        kind = record["type"]
        if kind == "error":
            error = record["error"]
            self.errors.append(error)
            self.accounting = True
            self.session.emit(make_event("session.error", {"error": error, **_error_fields(error)}, meta))
            return True
        part = record["part"]
        if kind in ("text", "reasoning"):
            core = "assistant.message" if kind == "text" else "assistant.reasoning"
            data: dict[str, Any] = {"content": part.get("text")} if "text" in part else {}
            data.update(_part_ids(part))
            _add_part_extras(data, part, ("text",))
            self.session.emit(make_event(core, data, meta))
        elif kind in ("tool_use", "tool"):
            self._tool(session_id, part, meta)
        elif kind == "step_finish":
            self._step_finish(session_id, part, meta)
        else:
            data = {"sourceType": kind, **_part_ids(part)}
            _add_part_extras(data, part, ())
            self.session.emit(make_event("session.info", data, meta))
        return True

    def _tool(self, session_id: str, part: Mapping[str, Any], meta: dict[str, Any]) -> None:
        raw_state = part.get("state")
        state = raw_state if isinstance(raw_state, dict) else {}
        call_id = part.get("callID")
        start: dict[str, Any] = {}
        if "callID" in part:
            start["toolCallId"] = call_id
        if "tool" in part:
            start["toolName"] = part["tool"]
        if "input" in state:
            start["input"] = state["input"]
        start.update(_part_ids(part))
        _add_part_extras(start, part, ("callID", "tool", "state"))
        if not self.tools.has_start(session_id, call_id):
            self.tools.started(session_id, call_id, part.get("tool"))
            self.session.emit(make_event("tool.execution_start", start, meta))
        status = state.get("status")
        if status not in ("completed", "error"):
            return
        if not self.tools.mark_complete(session_id, call_id):
            return
        data: dict[str, Any] = {k: start[k] for k in ("toolCallId", "toolName") if k in start}
        data["success"] = status == "completed"
        if "output" in state:
            data["output"] = state["output"]
        if "error" in state:
            data["error"] = state["error"]
        times = state.get("time")
        if isinstance(times, dict) and valid_metric(times.get("start")) and valid_metric(times.get("end")) and times["end"] >= times["start"]:
            data["durationMs"] = times["end"] - times["start"]
        # The rest of the final state (title, metadata, the native start/end times) survives as supplied.
        data.update({k: v for k, v in state.items() if k not in ("status", "input", "output", "error") and k not in data})
        data.update(_part_ids(part))
        self.session.emit(make_event("tool.execution_complete", data, meta))

    def _step_finish(self, session_id: str, part: Mapping[str, Any], meta: dict[str, Any]) -> None:
        identity = (session_id, part.get("id")) if "id" in part else None
        data = {k: v for k, v in part.items() if k != "type"}
        data["sourceType"] = "step_finish"
        if identity is not None and identity in self.steps:
            self.session.emit(make_event("session.info", {**data, "duplicate": True}, meta))
            return
        if identity is not None:
            self.steps.add(identity)
        self.turns += 1
        self.accounting = True
        if valid_metric(part.get("cost")):
            self.cost = (self.cost or 0) + part["cost"]
        tokens = part.get("tokens")
        if isinstance(tokens, dict):
            usage: dict[str, Any] = {}
            for source, target in (("total", "total_tokens"), ("input", "input_tokens"), ("output", "output_tokens"), ("reasoning", "reasoning_output_tokens")):
                if valid_count(tokens.get(source)):
                    usage[target] = tokens[source]
            cache = tokens.get("cache")
            if isinstance(cache, dict):
                if valid_count(cache.get("read")):
                    usage["cache_read_input_tokens"] = cache["read"]
                if valid_count(cache.get("write")):
                    usage["cache_creation_input_tokens"] = cache["write"]
            self.usage.add(usage)
        self.session.emit(make_event("session.info", data, meta))

    def text_line(self, line: str) -> bool:
        if not _SERVER_UNAVAILABLE.search(line):
            return False
        match = _LOGFMT_NAME.search(line)
        if not match:
            return False
        name = match.group(1)
        self.session.mcp_failure(name[1:-1] if name.startswith('"') else name)
        return True

    def finish(self) -> None:
        if not self.accounting:
            return
        data: dict[str, Any] = {}
        if self.turns:
            data["numTurns"] = self.turns
        if self.cost is not None:
            data["totalCostUsd"] = self.cost
        if not self.usage.empty:
            usage = self.usage.usage()
            usage["input_tokens_include_cache"] = False
            data["usage"] = usage
        if self.errors:
            data["errors"] = list(self.errors)
        self.session.emit(make_event("session.result", data))


def _part_ids(part: Mapping[str, Any]) -> dict[str, Any]:
    return {target: part[source] for source, target in (("id", "partId"), ("messageID", "messageId")) if source in part}


_PART_FRAMING = ("id", "messageID", "sessionID", "type")
"""Part keys the mapping reads for every part: the IDs (mapped), the record's own session ID and the part type."""


def _add_part_extras(data: dict[str, Any], part: Mapping[str, Any], consumed: tuple[str, ...]) -> None:
    """Add the part's other keys (``time``, ``synthetic``, ``metadata``, ...) to ``data``: native additions kept as
    supplied (T-UAS-027), never over a mapped field."""
    data.update({k: v for k, v in part.items() if k not in _PART_FRAMING and k not in consumed and k not in data})


def _error_fields(error: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "name" in error:
        out["errorType"] = error["name"]
    nested = error.get("data")
    if isinstance(nested, dict) and "message" in nested:
        out["message"] = nested["message"]
    elif "message" in error:
        out["message"] = error["message"]
    return out


def parse(text: str) -> ParseResult:
    """Parse ``opencode run --format json`` output."""
    session = Session(ENGINE)
    mapper = OpenCodeMapper(session)
    for item in frame(text):
        if item.kind == KIND_OBJECT and map_record(session, mapper, item):
            session.recognized += 1
        elif item.kind == KIND_TEXT and mapper.text_line(item.value):
            continue
        else:
            session.diagnostics.skipped(item)
    mapper.finish()
    return session.result(text)
