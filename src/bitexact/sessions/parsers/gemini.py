"""Gemini adapter (UAS 7.4, T-UAS-039): flat stream-json JSONL records.

* ``message`` deltas join only when adjacent and their metadata envelopes are
  identical (differing timestamps or IDs keep separate fragments), by exact
  concatenation; ``" "`` and ``"\\n"`` chunks are text like any other.
* A non-delta message with an explicit ``message_id``/``messageId`` (or
  legacy ``message.id``) is a full snapshot: unchanged adds nothing,
  append-only adds its suffix, a rewrite retires the earlier fragments
  (keeping their source envelopes in ``data.observations``).  Without an
  explicit identity nothing is treated as a snapshot.
* ``result.stats`` is a cumulative snapshot: ``input_tokens``,
  ``output_tokens``, ``cached`` -> cache-read (included in input, recorded by
  ``input_tokens_include_cache: true``), ``duration_ms``; ``tool_calls`` stays
  in the retained ``stats`` and is never a turn count.
* ``error`` records become ``session.error``; severity ``error`` or none also
  goes into ``session.result.errors``; a warning stays a warning.
"""

from __future__ import annotations

from typing import Any, Mapping

from bitexact.sessions.convert import is_native_event, make_event
from bitexact.sessions.correlate import ToolTracker
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, parse_objects
from bitexact.sessions.streaming import FragmentJoiner, SnapshotTracker
from bitexact.sessions.usage import normalize_usage, valid_metric

ENGINE = "gemini"
CHANNELS = {"user": "user.message", "assistant": "assistant.message"}


def is_gemini_record(record: Mapping[str, Any]) -> bool:
    kind = record.get("type")
    if kind == "init":
        return "session_id" in record or "model" in record
    if kind == "message":
        nested = record.get("message")
        return record.get("role") in CHANNELS and "content" in record and (nested is None or isinstance(nested, dict))
    if kind in ("reasoning", "thinking"):
        return "content" in record or "thinking" in record
    if kind == "tool_use":
        return "tool_id" in record and "tool_name" in record
    if kind == "tool_result":
        return "tool_id" in record
    if kind == "result":
        return isinstance(record.get("stats"), dict) or "status" in record or "error" in record
    if kind == "error":
        return "message" in record or "error" in record
    if kind == "system":
        return isinstance(record.get("subtype"), str) and record.get("subtype") != "init"
    return False


def message_identity(record: Mapping[str, Any]) -> Any:
    """A message's id (``message_id``, ``messageId``, or its nested message's), or None."""
    for key in ("message_id", "messageId"):
        if key in record:
            return record[key]
    nested = record.get("message")
    if isinstance(nested, dict) and "id" in nested:
        return nested["id"]
    return None


def _visible_blocks(content: list[Any], role: str) -> list[tuple[str, Any]]:
    """(core type, content) per block of a legacy content array, in order."""
    out: list[tuple[str, Any]] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and "text" in block:
            out.append((CHANNELS[role], block["text"]))
        elif isinstance(block, dict) and block.get("type") == "thinking" and "thinking" in block:
            out.append(("assistant.reasoning", block["thinking"]))
        else:
            out.append((CHANNELS[role], [block]))
    return out


class GeminiMapper:
    def __init__(self, session: Session, engine: str = ENGINE) -> None:
        self.session = session
        self.engine = engine
        self.joiner = FragmentJoiner()
        self.snapshots = SnapshotTracker()
        self.tools = ToolTracker()
        self.errors: list[Any] = []
        self.result_seen = False
        self.arrays: dict[str, tuple[list[tuple[str, Any]], list[dict[str, Any]], list[Any]]] = {}

    def map(self, record: dict[str, Any]) -> bool:
        if is_native_event(record):
            self.session.emit(dict(record))
            return True
        if not is_gemini_record(record):
            return False
        kind = record["type"]
        handler = getattr(self, f"_{kind}")
        handler(record)
        return True

    def _init(self, record: dict[str, Any]) -> None:
        meta: dict[str, Any] = {k: record[k] for k in ("timestamp", "id") if k in record}
        data: dict[str, Any] = {"sourceEngine": self.engine}
        for key, value in record.items():
            if key in ("type",) or key in meta:
                continue
            data["sessionId" if key == "session_id" else key] = value
        self.session.emit(make_event("session.init", data, meta))

    def _text_event(self, core: str, record: dict[str, Any], text_key: str = "content") -> None:
        consumed = {"type", "role", text_key}
        meta = {k: v for k, v in record.items() if k not in consumed and k not in ("delta",)}
        data: dict[str, Any] = {"content": record[text_key]}
        if "delta" in record:
            data["delta"] = record["delta"]
        event = make_event(core, data, meta)
        identity = message_identity(record)
        channel_key = (repr(identity), core)
        if identity is not None and record.get("delta") is not True:
            self.snapshots.reconcile(self.session.events, channel_key, event, record)
            self.joiner.reset()
            return
        # A delta joins by its envelope (compared without building its key); anything else never joins.
        holder = self.joiner.push(self.session.events, event, None if record.get("delta") is True else object())
        if identity is not None:
            self.snapshots.fragment(channel_key, holder, record)

    def _message(self, record: dict[str, Any]) -> None:
        if isinstance(record["content"], list) and message_identity(record) is not None:
            self._content_array(record)
            return
        self._text_event(CHANNELS[record["role"]], record)

    def _content_array(self, record: dict[str, Any]) -> None:
        """A full legacy content-array snapshot of an identified message (7.4).

        Unchanged adds nothing; growth of the last block or new trailing
        blocks add only what is new; any rewrite, removal, reordering or
        insertion replaces all visible fragments of the message with the
        authoritative blocks in array order (an empty array stays ``[]``).
        """
        identity = repr(message_identity(record))
        role = record["role"]
        blocks = _visible_blocks(record["content"], role)
        meta = {k: v for k, v in record.items() if k not in ("type", "role", "content", "delta")}
        previous = self.arrays.get(identity)
        self.joiner.reset()
        if previous is not None:
            old_blocks, events, sources = previous
            if blocks == old_blocks:
                sources.append(record)
                return
            grows = (
                len(blocks) >= len(old_blocks) > 0
                and blocks[: len(old_blocks) - 1] == old_blocks[:-1]
                and blocks[len(old_blocks) - 1][0] == old_blocks[-1][0]
                and isinstance(blocks[len(old_blocks) - 1][1], str)
                and isinstance(old_blocks[-1][1], str)
                and blocks[len(old_blocks) - 1][1].startswith(old_blocks[-1][1])
            )
            if grows:
                last = len(old_blocks) - 1
                suffix = blocks[last][1][len(old_blocks[-1][1]):]
                new_events = []
                if suffix:
                    new_events.append(make_event(blocks[last][0], {"content": suffix, "contentIndex": last}, meta))
                for index in range(len(old_blocks), len(blocks)):
                    new_events.append(make_event(blocks[index][0], {"content": blocks[index][1], "contentIndex": index}, meta))
                self.session.emit(*new_events)
                self.arrays[identity] = (blocks, events + new_events, sources + [record])
                return
            retired = {id(event) for event in events}
            self.session.events[:] = [event for event in self.session.events if id(event) not in retired]
            emitted = self._emit_blocks(blocks, meta, role)
            if emitted:
                emitted[0]["data"]["observations"] = list(sources)
            self.arrays[identity] = (blocks, emitted, [record])
            return
        emitted = self._emit_blocks(blocks, meta, role)
        self.arrays[identity] = (blocks, emitted, [record])

    def _emit_blocks(self, blocks: list[tuple[str, Any]], meta: dict[str, Any], role: str) -> list[dict[str, Any]]:
        if not blocks:
            event = make_event(CHANNELS[role], {"content": []}, meta)
            self.session.emit(event)
            return [event]
        events = [make_event(kind, {"content": text, "contentIndex": index}, meta) for index, (kind, text) in enumerate(blocks)]
        self.session.emit(*events)
        return events

    def _reasoning(self, record: dict[str, Any]) -> None:
        self._text_event("assistant.reasoning", record, "content" if "content" in record else "thinking")

    _thinking = _reasoning

    def _tool_use(self, record: dict[str, Any]) -> None:
        data: dict[str, Any] = {"toolCallId": record["tool_id"], "toolName": record["tool_name"]}
        if "parameters" in record:
            data["input"] = record["parameters"]
        meta = {k: v for k, v in record.items() if k not in ("type", "tool_id", "tool_name", "parameters")}
        self.tools.started(None, record["tool_id"], record["tool_name"])
        self.session.emit(make_event("tool.execution_start", data, meta))

    def _tool_result(self, record: dict[str, Any]) -> None:
        data: dict[str, Any] = {"toolCallId": record["tool_id"]}
        name = record.get("tool_name", self.tools.name_for(None, record["tool_id"]))
        if name is not None:
            data["toolName"] = name
        status = record.get("status")
        if status == "success":
            data["success"] = True
        elif status in ("error", "failed", "failure", "cancelled"):
            data["success"] = False
        if record.get("error") not in (None, "", False):  # a null, empty or false error is no failure (T-UAS-013)
            data["success"] = False
        for key in ("output", "error", "status"):
            if key in record:
                data[key] = record[key]
        meta = {k: v for k, v in record.items() if k not in ("type", "tool_id", "tool_name", "output", "error", "status")}
        self.tools.mark_complete(None, record["tool_id"])
        self.session.emit(make_event("tool.execution_complete", data, meta))

    def _error(self, record: dict[str, Any]) -> None:
        meta: dict[str, Any] = {k: record[k] for k in ("timestamp", "id") if k in record}
        data = {k: v for k, v in record.items() if k != "type" and k not in meta}
        self.session.emit(make_event("session.error", data, meta))
        if record.get("severity") in (None, "error"):
            self.errors.append(data)

    def _system(self, record: dict[str, Any]) -> None:
        meta: dict[str, Any] = {k: record[k] for k in ("timestamp", "id") if k in record}
        data = {k: v for k, v in record.items() if k not in ("type", "subtype") and k not in meta}
        data["sourceType"] = record["subtype"]
        self.session.emit(make_event("session.info", data, meta))

    def _result(self, record: dict[str, Any]) -> None:
        meta: dict[str, Any] = {k: record[k] for k in ("timestamp", "id") if k in record}
        data: dict[str, Any] = {}
        if "status" in record:
            data["status"] = record["status"]
        data["sourceType"] = "result"
        stats = record.get("stats")
        if isinstance(stats, dict):
            usage_source = {k: v for k, v in stats.items() if k in ("input_tokens", "output_tokens", "cached", "total_tokens")}
            if usage_source:
                data["usage"] = normalize_usage(usage_source, {"cached": "cache_read_input_tokens"}, include_cache=True)
                data["usage"].pop("cached", None)
            if "duration_ms" in stats and valid_metric(stats["duration_ms"]):
                data["durationMs"] = stats["duration_ms"]
        errors = list(self.errors)
        if "error" in record:
            errors.append(record["error"])
        elif record.get("status") not in (None, "success"):
            errors.append({"status": record["status"]})
        if errors:
            data["errors"] = errors
        for key, value in record.items():
            if key not in ("type", "status", "error") and key not in meta:
                data[key] = value
        self.result_seen = True
        self.session.emit(make_event("session.result", data, meta))

    def finish(self) -> None:
        if self.errors and not self.result_seen:
            self.session.emit(make_event("session.result", {"errors": list(self.errors)}))


def parse(text: str) -> ParseResult:
    """Parse Gemini CLI stream-json output."""
    session = Session(ENGINE)
    mapper = GeminiMapper(session)
    return parse_objects(session, mapper, text)
