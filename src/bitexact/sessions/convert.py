"""Shared conversion helpers: legacy entries <-> canonical events (UAS 3.3, 5.2, 4).

``LegacyConverter`` converts Claude-compatible legacy entries (``system``/
``init``, ``assistant``, ``user``, ``result`` and direct ``message``
envelopes) one record at a time, so mixed arrays of native events and legacy
entries keep both (T-UAS-018).  Native canonical events (a dot-namespaced
``type`` with an object ``data``) pass through unchanged, which is what makes
normalisation idempotent (T-UAS-025).

``convert_legacy_entries_to_events`` and ``convert_events_to_legacy`` are the
public pair (the spec's ``convertLegacyLogEntriesToCopilotEvents`` and
``convertCopilotEventsToLegacyLogEntries``).  Neither mutates its input.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable, Iterable, Mapping, cast

from bitexact.sessions.correlate import ToolTracker, split_mcp_name
from bitexact.sessions.usage import UsageAccumulator, normalize_usage, valid_count, valid_metric

Event = dict[str, Any]

ENVELOPE_KEYS: frozenset[str] = frozenset(
    {
        "uuid",
        "id",
        "parentId",
        "parentUuid",
        "timestamp",
        "session_id",
        "parent_tool_use_id",
        "isSidechain",
        "agentId",
        "requestId",
        "request_id",
    }
)
"""Top-level record keys treated as metadata of every event a record expands to."""

_TYPE_LABEL = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


STRUCTURED_MARK = "uasStructuredContent"
"""Set on a down-converted message whose canonical content was an array (4.3): converting it back
gives that one event with the array, not one event per block."""

UNTYPED_RESULT_MARK = "uasNoSourceType"
"""Set on a down-converted result whose canonical data had no ``sourceType`` (a derived partial result,
T-UAS-028): converting it back must not claim a terminal ``result`` record was observed."""


def is_native_event(record: Any) -> bool:
    """The canonical native-event signature: dot-namespaced ``type`` and object ``data``."""
    if not isinstance(record, dict):
        return False
    kind = record.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(record.get("data"), dict)


def safe_label(value: Any) -> str:
    """A record type for diagnostics, or '?' when it is not identifier-shaped."""
    return value if isinstance(value, str) and _TYPE_LABEL.match(value) else "?"


def metadata(record: Mapping[str, Any], consumed: Iterable[str]) -> dict[str, Any]:
    """Top-level keys of ``record`` not consumed by the mapping, kept as metadata.

    A legacy top-level ``data`` key would collide with the event payload, so it
    is kept as ``nativeData``.
    """
    skip = set(consumed)
    skip.add("type")
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in skip:
            continue
        out["nativeData" if key == "data" else key] = value
    return out


def make_event(kind: str, data: dict[str, Any], meta: Mapping[str, Any] | None = None) -> Event:
    """Build an event dict: ``type``, ``data``, then metadata in source order."""
    event: Event = {"type": kind, "data": data}
    if meta:
        if "type" not in meta and "data" not in meta:  # the usual metadata: copied in one C call, in its order
            event.update(meta)
            return event
        for key, value in meta.items():
            if key not in ("type", "data"):
                event[key] = value
    return event


def put(data: dict[str, Any], key: str, source: Mapping[str, Any], *names: str) -> None:
    """Copy the first present ``names`` from ``source`` into ``data[key]`` (presence, not truthiness)."""
    for name in names:
        if name in source:
            data[key] = source[name]
            return


INIT_ALIASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("model", ("model",)),
    ("sessionId", ("sessionId", "session_id")),
    ("cwd", ("cwd",)),
    ("tools", ("tools",)),
    ("mcpServers", ("mcpServers", "mcp_servers")),
    ("slashCommands", ("slashCommands", "slash_commands")),
    ("modelInfo", ("modelInfo", "model_info")),
)

RESULT_ALIASES: tuple[tuple[str, tuple[str, ...], Callable[[Any], bool]], ...] = (
    ("numTurns", ("numTurns", "num_turns"), valid_count),
    ("durationMs", ("durationMs", "duration_ms"), valid_metric),
    ("totalCostUsd", ("totalCostUsd", "total_cost_usd"), valid_metric),
)


def init_data(source: Mapping[str, Any], engine: str, skip: Iterable[str] = ()) -> dict[str, Any]:
    """``session.init`` data from an initialization record (4.1 legacy mappings).

    Known names map to their canonical keys; other fields stay as native additions.
    """
    data: dict[str, Any] = {"sourceEngine": engine}
    used = set(skip) | {"type", "subtype"}
    for key, names in INIT_ALIASES:
        for name in names:
            if name in source:
                data[key] = source[name]
                used.update(names)
                break
    for key, value in source.items():
        if key not in used and key not in data and key not in ENVELOPE_KEYS - {"session_id"}:
            data[key] = value
    return data


def result_data(
    source: Mapping[str, Any],
    *,
    skip: Iterable[str] = (),
    usage_mapping: Mapping[str, str] | None = None,
    include_cache: bool | None = None,
) -> dict[str, Any]:
    """``session.result`` data from a legacy result record (4.6 legacy mappings).

    Valid values map to canonical names; invalid ones stay under their native
    name (never replaced by zero).  Other fields remain native additions.
    """
    data: dict[str, Any] = {}
    used = set(skip) | {"type"}
    for key, names, valid in RESULT_ALIASES:
        for name in names:
            if name in source:
                if valid(source[name]):
                    data[key] = source[name]
                    used.add(name)
                break
    if isinstance(source.get("usage"), dict):
        data["usage"] = normalize_usage(source["usage"], usage_mapping, include_cache=include_cache)
        used.add("usage")
    for key, names in (("errors", ("errors",)), ("permissionDenials", ("permissionDenials", "permission_denials"))):
        for name in names:
            if name in source:
                data[key] = source[name]
                used.add(name)
                break
    for key, value in source.items():
        if key not in used and key not in data:
            data[key] = value
    return data


def _text_blocks(content: Any) -> list[tuple[int, Any]]:
    if isinstance(content, list):
        return list(enumerate(content))
    return [(0, {"type": "text", "text": content})] if isinstance(content, str) else []


class LegacyConverter:
    """Per-record conversion of Claude-compatible legacy entries (and native events).

    One instance converts one stream; it keeps the state needed for exact-ID
    name recovery, per-message usage, refusal merging and the derived partial
    result.  ``convert(record)`` returns the events of one record at its
    position; ``finish()`` returns the derived trailing events (a partial
    ``session.result`` when usage or errors were observed without a terminal
    result for that scope).
    """

    def __init__(self, engine: str) -> None:
        self.engine = engine
        self.tools = ToolTracker()
        self.message_usage: dict[Any, dict[Any, dict[str, Any]]] = {}
        self.anonymous_usage: dict[Any, UsageAccumulator] = {}
        self.results_seen: set[Any] = set()
        self.errors: dict[Any, list[Any]] = {}
        self.denials: dict[Any, list[Any]] = {}
        self.refusals: dict[Any, Event] = {}

    # -- classification -------------------------------------------------
    @staticmethod
    def recognizes(record: Mapping[str, Any]) -> bool:
        """True for the legacy shapes this converter supports."""
        kind = record.get("type")
        if kind == "system":
            return record.get("subtype") == "init"
        if kind in ("assistant", "user"):
            message = record.get("message")
            return isinstance(message, dict) and ("content" in message)
        if kind == "message":
            return record.get("role") in ("assistant", "user") and "content" in record
        if kind == "result":
            return any(
                k in record
                for k in (
                    "subtype", "num_turns", "numTurns", "usage", "duration_ms", "total_cost_usd",
                    "is_error", "errors", "permission_denials", "result",
                )
            )
        return False

    def convert(self, record: Mapping[str, Any]) -> list[Event]:
        """Events for one record (native events pass through unchanged)."""
        if is_native_event(record):
            self.observe_native(record)
            return [dict(record)]
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "init":
            return self._init(record)
        if kind in ("assistant", "user"):
            message = record.get("message")
            if isinstance(message, dict):
                return self._message(record, message, kind, metadata(record, ("message", STRUCTURED_MARK)))
        if kind == "message" and record.get("role") in ("assistant", "user"):
            meta = {k: record[k] for k in record if k in ENVELOPE_KEYS and k != "id"}
            return self._message(record, record, record["role"], meta)
        if kind == "result":
            return self._result(record)
        return []

    def observe_native(self, record: Mapping[str, Any]) -> None:
        """Note a retained native event: an existing result closes its scope."""
        if record.get("type") == "session.result":
            self.results_seen.add(self.scope(record))

    # -- mappings -------------------------------------------------------
    def _init(self, record: Mapping[str, Any]) -> list[Event]:
        meta = {k: record[k] for k in record if k in ENVELOPE_KEYS and k != "session_id"}
        return [make_event("session.init", init_data(record, self.engine, skip=meta), meta)]

    @staticmethod
    def scope(record: Mapping[str, Any]) -> Any:
        """Caller scope of a record: nested SDK sessions share the root session_id."""
        return (repr(record.get("parent_tool_use_id")), repr(record.get("agentId")))

    def _message(
        self, record: Mapping[str, Any], message: Mapping[str, Any], role: str, meta: dict[str, Any]
    ) -> list[Event]:
        scope = self.scope(record)
        if role == "assistant":
            return self._assistant(record, message, meta, scope)
        return self._user(message, meta, scope, record.get(STRUCTURED_MARK) is True)

    def _assistant(
        self, record: Mapping[str, Any], message: Mapping[str, Any], meta: dict[str, Any], scope: Any
    ) -> list[Event]:
        events: list[Event] = []
        message_id = message.get("id")
        common: dict[str, Any] = {}
        if "id" in message:
            common["messageId"] = message_id
        if "model" in message:
            common["model"] = message["model"]
        if isinstance(message.get("usage"), dict):
            self._message_usage(scope, message_id, message["usage"])
        if message.get("stop_reason") == "refusal":
            return self._refusal(message, meta, common)
        if record.get(STRUCTURED_MARK) is True and isinstance(message.get("content"), list):
            return [make_event("assistant.message", {"content": message["content"], **common}, meta)]
        for index, block in _text_blocks(message.get("content")):
            if not isinstance(block, dict):
                events.append(make_event("assistant.message", {"content": [block], **common, "contentIndex": index}, meta))
                continue
            btype = block.get("type")
            if btype == "text" and "text" in block:
                data = {"content": block["text"], **common, "contentIndex": index}
                events.append(make_event("assistant.message", data, meta))
            elif btype == "thinking" and "thinking" in block:
                data = {"content": block["thinking"], **common, "contentIndex": index}
                put(data, "signature", block, "signature")
                events.append(make_event("assistant.reasoning", data, meta))
            elif btype == "redacted_thinking":
                data = {"content": [block], **common, "contentIndex": index}
                events.append(make_event("assistant.reasoning", data, meta))
            elif btype in ("tool_use", "server_tool_use"):
                events.append(self._tool_use(block, meta, common, index, scope))
            elif isinstance(btype, str) and btype.endswith("_tool_result") and "tool_use_id" in block:
                events.append(self._tool_result(block, meta, scope))
            else:
                events.append(make_event("assistant.message", {"content": [block], **common, "contentIndex": index}, meta))
        if "content" in message and not isinstance(message["content"], (list, str)):
            # Structured non-list content stays as it was supplied (4.3).
            events.append(make_event("assistant.message", {"content": message["content"], **common}, meta))
        return events

    def _refusal(self, message: Mapping[str, Any], meta: dict[str, Any], common: dict[str, Any]) -> list[Event]:
        texts = [b.get("text") for _, b in _text_blocks(message.get("content")) if isinstance(b, dict) and b.get("type") == "text"]
        data: dict[str, Any] = {"reason": "refusal"}
        if texts and all(isinstance(t, str) for t in texts):
            # mypy does not narrow a list through all(isinstance(...))
            data["content"] = "".join(cast(list[str], texts))
        details = message.get("stop_details")
        if isinstance(details, dict):
            put(data, "policyCategory", details, "category")
            put(data, "explanation", details, "explanation")
        data.update(common)
        key = common.get("messageId")
        if key is not None and key in self.refusals:
            # Merge the later snapshot onto the refusal already emitted (4.3).
            self.refusals[key]["data"].update(data)
            return []
        event = make_event("assistant.refusal", data, meta)
        if key is not None:
            self.refusals[key] = event
        return [event]

    def _tool_use(
        self, block: Mapping[str, Any], meta: dict[str, Any], common: dict[str, Any], index: int, scope: Any
    ) -> Event:
        data: dict[str, Any] = {}
        put(data, "toolCallId", block, "id")
        name = block.get("name")
        split = split_mcp_name(name)
        if split is not None:
            data["toolName"] = split[1]
            data["mcpServerName"] = split[0]
            data["nativeToolName"] = name
        else:
            put(data, "toolName", block, "name")
        put(data, "input", block, "input")
        for key, value in block.items():
            if key not in ("type", "id", "name", "input"):
                data[key] = value
        if block.get("type") != "tool_use":
            data["blockType"] = block.get("type")
        if "messageId" in common:
            data["messageId"] = common["messageId"]
        data["contentIndex"] = index
        self.tools.started(scope, block.get("id"), data.get("toolName"))
        return make_event("tool.execution_start", data, meta)

    def _tool_result(self, block: Mapping[str, Any], meta: dict[str, Any], scope: Any) -> Event:
        data: dict[str, Any] = {}
        put(data, "toolCallId", block, "tool_use_id")
        name = self.tools.name_for(scope, block.get("tool_use_id"))
        if name is not None:
            data["toolName"] = name
        if isinstance(block.get("is_error"), bool):
            data["success"] = not block["is_error"]
        put(data, "output", block, "content")
        if "duration_ms" in block and valid_metric(block["duration_ms"]):
            data["durationMs"] = block["duration_ms"]
        for key, value in block.items():
            if key not in ("type", "tool_use_id", "content", "is_error") and not (
                key == "duration_ms" and "durationMs" in data
            ):
                data[key] = value
        if block.get("type") != "tool_result":
            data["blockType"] = block.get("type")
        self.tools.mark_complete(scope, block.get("tool_use_id"))
        return make_event("tool.execution_complete", data, meta)

    def _user(self, message: Mapping[str, Any], meta: dict[str, Any], scope: Any,
              structured: bool = False) -> list[Event]:
        content = message.get("content")
        if structured and isinstance(content, list):
            return [make_event("user.message", {"content": content}, meta)]
        if isinstance(content, str):
            return [make_event("user.message", {"content": content}, meta)]
        if not isinstance(content, list):
            return [make_event("user.message", {"content": content}, meta)]
        events: list[Event] = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                events.append(self._tool_result(block, meta, scope))
            elif isinstance(block, dict) and block.get("type") == "text" and "text" in block:
                events.append(make_event("user.message", {"content": block["text"]}, meta))
            else:
                events.append(make_event("user.message", {"content": [block]}, meta))
        return events

    def _message_usage(self, scope: Any, message_id: Any, usage: Mapping[str, Any]) -> None:
        normalized = normalize_usage(usage)
        if isinstance(message_id, str):
            # Several records of one response repeat its usage: keep the latest.
            self.message_usage.setdefault(scope, {})[message_id] = normalized
        else:
            self.anonymous_usage.setdefault(scope, UsageAccumulator()).add(normalized)

    def _result(self, record: Mapping[str, Any]) -> list[Event]:
        meta = {k: record[k] for k in record if k in ENVELOPE_KEYS}
        subtype = record.get("subtype")
        # A string subtype is the status, and kept as ``subtype`` below only where the status does not say it.
        skip = {*meta, UNTYPED_RESULT_MARK}
        data = result_data(record, skip=skip | {"subtype"} if isinstance(subtype, str) else skip)
        if record.get("is_error") is True or (isinstance(subtype, str) and subtype.startswith("error")):
            data["status"] = "error"
        elif isinstance(subtype, str):
            data["status"] = subtype
        if isinstance(subtype, str) and subtype != data["status"]:
            data["subtype"] = subtype  # native result metadata the status does not say (error_max_turns)
        if record.get(UNTYPED_RESULT_MARK) is not True:
            data.setdefault("sourceType", "result")  # a down-converted result keeps the source type it had
        scope = self.scope(record)
        if "errors" not in data and self.errors.get(scope):
            data["errors"] = list(self.errors[scope])
        observed = self.denials.get(scope)
        if observed:
            if "permissionDenials" not in data:
                data["permissionDenials"] = list(observed)
            elif isinstance(data["permissionDenials"], list):
                # The terminal snapshot wins for denials it covers (same tool
                # call identity); observed denials it does not cover are kept.
                covered = {_denial_identity(d) for d in data["permissionDenials"]}
                extra = [d for d in observed if _denial_identity(d) not in covered]
                if extra:
                    data["permissionDenials"] = [*data["permissionDenials"], *extra]
        self.results_seen.add(scope)
        return [make_event("session.result", data, meta)]

    # -- diagnostics fed by engine adapters ------------------------------
    def add_error(self, scope: Any, error: Any) -> None:
        self.errors.setdefault(scope, []).append(error)

    def add_denial(self, scope: Any, denial: Any) -> None:
        self.denials.setdefault(scope, []).append(denial)

    def finish(self) -> list[Event]:
        """Derived partial results for scopes without a terminal result (T-UAS-028)."""
        scopes: list[Any] = []
        for table in (self.message_usage, self.anonymous_usage, self.errors, self.denials):
            for scope in table:
                if scope not in scopes:
                    scopes.append(scope)
        events: list[Event] = []
        for scope in scopes:
            if scope in self.results_seen:
                continue
            acc = UsageAccumulator()
            for usage in self.message_usage.get(scope, {}).values():
                acc.add(usage)
            for usage in [self.anonymous_usage[scope].usage()] if scope in self.anonymous_usage else []:
                acc.add(usage)
            data: dict[str, Any] = {}
            if not acc.empty:
                data["usage"] = acc.usage()
            if self.errors.get(scope):
                data["errors"] = list(self.errors[scope])
            if self.denials.get(scope):
                data["permissionDenials"] = list(self.denials[scope])
            if not data:
                continue
            meta: dict[str, Any] = {}
            parent = scope_parent(scope)
            if parent is not None:
                meta["parent_tool_use_id"] = parent
            events.append(make_event("session.result", data, meta))
        return events


def _denial_identity(denial: Any) -> Any:
    if isinstance(denial, dict):
        return repr((denial.get("tool_use_id"), denial.get("tool_name"), denial.get("agentId")))
    return repr(denial)


def scope_parent(scope: Any) -> Any:
    """The parent tool-use ID encoded in a scope key (None for the root)."""
    parent_repr = scope[0] if isinstance(scope, tuple) else "None"
    if parent_repr == "None":
        return None
    return parent_repr[1:-1] if parent_repr[:1] in "'\"" else None


def convert_legacy_entries_to_events(entries: Iterable[Any], source_engine: str = "claude") -> list[Event]:
    """Per-record conversion of a mixed array of legacy entries and native events.

    Unsupported or non-object entries are skipped; supported records of both
    kinds are kept in order.  The input is deep-copied first, so nothing the
    caller holds can be mutated through the output (T-UAS-026).
    """
    converter = LegacyConverter(source_engine)
    events: list[Event] = []
    for entry in copy.deepcopy(list(entries)):
        if isinstance(entry, dict):
            events.extend(converter.convert(entry))
    events.extend(converter.finish())
    return events


def _legacy_meta(event: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k not in ("type", "data")}


def convert_events_to_legacy(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Down-convert canonical events to legacy entries (reversible for 4.1-4.6 fields).

    Extension events pass through unchanged.  Core events become legacy
    entries whose re-conversion restores the same supported fields and
    metadata.  The input is not mutated.
    """
    out: list[dict[str, Any]] = []
    # Canonical events are JSON objects, and the deep copy of one is a plain dict;
    # mypy keeps the parameter's Mapping type through deepcopy.
    for event in cast(list[Event], copy.deepcopy(list(events))):
        kind = event.get("type")
        data = event.get("data") if isinstance(event.get("data"), dict) else None
        if data is None:
            out.append(event)
            continue
        meta = _legacy_meta(event)
        if kind == "session.init":
            entry: dict[str, Any] = {"type": "system", "subtype": "init"}
            renames = {"sessionId": "session_id", "mcpServers": "mcp_servers", "slashCommands": "slash_commands", "modelInfo": "model_info"}
            for key, value in data.items():
                entry[renames.get(key, key)] = value
            entry.update(meta)
            out.append(entry)
        elif kind in ("user.message", "assistant.message", "assistant.reasoning"):
            out.append(_message_entry(kind, data, meta))
        elif kind == "tool.execution_start":
            block: dict[str, Any] = {"type": "tool_use"}
            if "toolCallId" in data:
                block["id"] = data["toolCallId"]
            if "nativeToolName" in data:
                block["name"] = data["nativeToolName"]
            elif data.get("mcpServerName") == "" and isinstance(data.get("toolName"), str):
                # An explicitly empty server (4.4) has no mcp__ spelling: the name and the empty server
                # travel apart, and come back as they were.
                block["name"] = data["toolName"]
                block["mcpServerName"] = ""
            elif "mcpServerName" in data and isinstance(data.get("toolName"), str):
                block["name"] = f"mcp__{data['mcpServerName']}__{data['toolName']}"
            elif "toolName" in data:
                block["name"] = data["toolName"]
            if "input" in data:
                block["input"] = data["input"]
            for key in ("command",):
                if key in data:
                    block[key] = data[key]
            entry = {"type": "assistant", "message": {"role": "assistant", "content": [block]}}
            entry.update(meta)
            out.append(entry)
        elif kind == "tool.execution_complete":
            block = {"type": "tool_result"}
            if "toolCallId" in data:
                block["tool_use_id"] = data["toolCallId"]
            if "output" in data:
                block["content"] = data["output"]
            if isinstance(data.get("success"), bool):
                block["is_error"] = not data["success"]
            for key in ("durationMs", "error", "result", "toolName", "exitCode"):
                if key in data:
                    block["duration_ms" if key == "durationMs" else key] = data[key]
            entry = {"type": "user", "message": {"role": "user", "content": [block]}}
            entry.update(meta)
            out.append(entry)
        elif kind == "session.result":
            entry = {"type": "result"}
            renames = {"numTurns": "num_turns", "durationMs": "duration_ms", "totalCostUsd": "total_cost_usd", "permissionDenials": "permission_denials"}
            for key, value in data.items():
                if key == "status" or (key == "sourceType" and value == "result"):
                    continue  # status is the subtype; "result" is what converting back says anyway
                entry[renames.get(key, key)] = value
            if "status" in data and "subtype" not in entry:  # a native subtype (error_max_turns) is kept
                entry["subtype"] = data["status"]
            if "sourceType" not in data:
                entry[UNTYPED_RESULT_MARK] = True
            entry.update(meta)
            out.append(entry)
        else:
            out.append(event)
    return out


def _message_entry(kind: str, data: Mapping[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    role = "user" if kind == "user.message" else "assistant"
    content = data.get("content")
    if kind == "assistant.reasoning":
        block: dict[str, Any] = {"type": "thinking", "thinking": content}
        if "signature" in data:
            block["signature"] = data["signature"]
        blocks: Any = [block]
    elif isinstance(content, str):
        blocks = [{"type": "text", "text": content}]
    else:
        blocks = content
    message: dict[str, Any] = {"role": role, "content": blocks}
    if "messageId" in data:
        message["id"] = data["messageId"]
    if "model" in data:
        message["model"] = data["model"]
    entry: dict[str, Any] = {"type": role, "message": message}
    if kind != "assistant.reasoning" and isinstance(content, list):
        # One event of structured content (4.3), not one event per block: said so, for the way back.
        entry[STRUCTURED_MARK] = True
    entry.update(meta)
    return entry
