"""Claude adapter (UAS 7.1, T-UAS-036).

Accepts a JSON array, JSONL (with debug lines between records) and native
canonical events, converting each record on its own.  The Claude-compatible
core shapes live in ``convert.LegacyConverter``; this module adds Claude's
system subtypes, error records, sub-agent lifecycle, tool progress and
stream-only boundaries.
"""

from __future__ import annotations

from typing import Any, Mapping, cast

from bitexact.sessions.convert import ENVELOPE_KEYS, LegacyConverter, is_native_event, make_event, metadata
from bitexact.sessions.model import ParseResult
from bitexact.sessions.parsers.base import Session, parse_objects
from bitexact.sessions.parsers.claude_stream import ClaudeStreams

ENGINE = "claude"

INFO_SYSTEM_SUBTYPES = frozenset(
    {"thinking_tokens", "vcs_state", "compact_boundary", "status", "hook_response", "informational", "local_command"}
)
LAUNCH_CONTEXT = ("tool_use_id", "task_type", "agent_type", "subagent_type", "execution_mode", "spawn_depth")
"""Sub-agent start fields a later lifecycle notification may omit (7.1)."""
CALLER_FIELDS = ("callerAgentId", "caller_agent_id")
"""Explicit caller identity on a lifecycle payload (the envelope ``agentId`` names the target)."""
INFO_RECORD_TYPES = frozenset({"tool_use_summary", "auth_status", "rate_limit_event", "rate_limit"})


_ABSENT = object()
"""No caller observation (distinct from an explicit null)."""


def _payload(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's non-envelope fields (the canonical event keeps the envelope as metadata)."""
    return {k: v for k, v in record.items() if k not in ENVELOPE_KEYS and k != "type"}


def _envelope(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k in ENVELOPE_KEYS}


class ClaudeMapper:
    """Maps one Claude record at a time into a ``Session``."""

    def __init__(self, session: Session, engine: str = ENGINE) -> None:
        self.session = session
        self.legacy = LegacyConverter(engine)
        self.streams = ClaudeStreams(self.legacy)
        self.agents: dict[Any, dict[str, Any]] = {}
        self.launch_envelopes: dict[Any, dict[str, Any]] = {}
        # Launcher observations: tool_use ID -> [(parent_tool_use_id, caller agentId or None)].
        self.launchers: dict[str, list[tuple[Any, Any]]] = {}

    def map(self, record: dict[str, Any]) -> bool:
        """Map a record; False when it is not a supported Claude signature."""
        session = self.session
        if is_native_event(record):
            self.legacy.observe_native(record)
            session.emit(dict(record))
            if record["type"] in ("assistant.error", "session.error"):
                self.legacy.add_error(LegacyConverter.scope(record), record["data"])
            return True
        kind = record.get("type")
        if kind == "assistant" and isinstance(record.get("message"), dict) and isinstance(record.get("error"), str):
            return self._assistant_error(record)
        if LegacyConverter.recognizes(record):
            if kind == "assistant":
                self.streams.snapshot_seen(record)
                self._observe_launchers(record)
            session.emit(*self.legacy.convert(record))
            launched = record.get("toolUseResult")
            if kind == "user" and isinstance(launched, dict) and "agentId" in launched and "resolvedModel" in launched:
                data = {"agentId": launched["agentId"], "model": launched["resolvedModel"]}
                for key in ("agentType", "subagent_type", "description"):
                    if key in launched:
                        data[key] = launched[key]
                session.emit(make_event("subagent.configured", data, _envelope(record)))
            return True
        if kind == "system":
            return self._system(record)
        if kind == "error" and isinstance(record.get("error"), dict):
            return self._api_error(record)
        if kind == "tool_progress":
            data = _payload(record)
            mapped: dict[str, Any] = {}
            if "tool_use_id" in record:
                mapped["toolCallId"] = record["tool_use_id"]
            if "tool_name" in record:
                mapped["toolName"] = record["tool_name"]
            mapped.update({k: v for k, v in data.items() if k not in ("tool_use_id", "tool_name")})
            mapped["partial"] = True
            session.emit(make_event("tool.execution_update", mapped, _envelope(record)))
            return True
        if kind == "stream_event" and isinstance(record.get("event"), dict):
            data = _payload(record)
            data["sourceType"] = record["event"].get("type")
            update = make_event("assistant.message_update", data, _envelope(record))
            session.emit(update)
            self.streams.observe(record, update, _envelope(record), session.events)
            return True
        if kind in INFO_RECORD_TYPES:
            data = _payload(record)
            data["sourceType"] = kind
            if kind == "auth_status" and record.get("error") not in (None, ""):
                # An authentication failure is a session/provider error (7.1).
                session.emit(make_event("session.error", data, _envelope(record)))
                self.legacy.add_error(LegacyConverter.scope(record), dict(data))
                return True
            session.emit(make_event("session.info", data, _envelope(record)))
            return True
        return False

    def _assistant_error(self, record: dict[str, Any]) -> bool:
        # An SDK assistant envelope flagged with an error is a provider error,
        # not an answer (T-UAS-011/035).
        message = record["message"]
        data: dict[str, Any] = {"errorType": record["error"]}
        texts = [b.get("text") for b in message.get("content", []) if isinstance(b, dict) and b.get("type") == "text"] if isinstance(message.get("content"), list) else []
        if texts and all(isinstance(t, str) for t in texts):
            # mypy does not narrow a list through all(isinstance(...))
            data["message"] = "".join(cast(list[str], texts))
        data["sourceType"] = "assistant"
        for key, value in metadata(record, ("message", "error")).items():
            if key not in ENVELOPE_KEYS:
                data[key] = value
        if "model" in message:
            data["model"] = message["model"]
        self.session.emit(make_event("session.error", data, _envelope(record)))
        self.legacy.add_error(LegacyConverter.scope(record), dict(data))
        return True

    def _api_error(self, record: dict[str, Any]) -> bool:
        error = record["error"]
        data: dict[str, Any] = {}
        if "type" in error:
            data["errorType"] = error["type"]
        if "message" in error:
            data["message"] = error["message"]
        data["error"] = error
        data.update({k: v for k, v in _payload(record).items() if k != "error"})
        data["sourceType"] = "error"
        self.session.emit(make_event("session.error", data, _envelope(record)))
        self.legacy.add_error(LegacyConverter.scope(record), error)
        return True

    def _system(self, record: dict[str, Any]) -> bool:
        subtype = record.get("subtype")
        scope = LegacyConverter.scope(record)
        envelope = _envelope(record)
        payload = {k: v for k, v in _payload(record).items() if k != "subtype"}
        if subtype == "permission_denied":
            # Only an accounting observation: no tool completion is inferred.
            self.legacy.add_denial(scope, payload)
            return True
        if subtype == "api_retry":
            data = dict(payload)
            data["sourceType"] = "api_retry"
            self.session.emit(make_event("session.error", data, envelope))
            self.legacy.add_error(scope, dict(payload))
            return True
        if subtype == "task_started" and record.get("task_type") == "local_agent":
            data = {"agentId": record.get("task_id")} if "task_id" in record else {}
            data.update(payload)
            caller = self._explicit_caller(payload)
            if caller is _ABSENT:
                caller = self._inferred_caller(record, envelope)
            if caller is not _ABSENT:
                data["callerAgentId"] = caller
            self.agents[record.get("task_id")] = dict(data)
            self.launch_envelopes[record.get("task_id")] = dict(envelope)
            self.session.emit(make_event("subagent.started", data, envelope))
            return True
        if subtype == "task_notification" and record.get("task_id") in self.agents:
            status = record.get("status")
            data = {"agentId": record.get("task_id")}
            data.update(payload)
            # Omitted scope/launcher fields fall back to the observed start;
            # explicit notification values (including null) win.
            started = self.agents[record.get("task_id")]
            for key in LAUNCH_CONTEXT:
                if key not in data and key in started:
                    data[key] = started[key]
            launch = self.launch_envelopes.get(record.get("task_id"), {})
            explicit = self._explicit_caller(payload)
            if explicit is not _ABSENT:
                data["callerAgentId"] = explicit
            elif "parent_tool_use_id" in envelope and envelope["parent_tool_use_id"] != launch.get("parent_tool_use_id"):
                # A changed parent invalidates the stored caller (7.1): the
                # notification's own context wins and supplies none, and a
                # later notification cannot restore it.
                started.pop("callerAgentId", None)
            elif "callerAgentId" in started:
                data["callerAgentId"] = started["callerAgentId"]
            for key in ("parent_tool_use_id",):
                if key not in envelope and key in launch:
                    envelope[key] = launch[key]
            if status == "completed":
                kind = "subagent.completed"
            elif status in ("failed", "stopped", "killed"):
                kind = "subagent.failed"
                if status != "failed":
                    data["cancelled"] = True
            else:
                data["sourceType"] = "task_notification"
                self.session.emit(make_event("session.info", data, envelope))
                return True
            self.session.emit(make_event(kind, data, envelope))
            return True
        if isinstance(subtype, str):
            data = dict(payload)
            data["sourceType"] = subtype
            self.session.emit(make_event("session.info", data, envelope))
            return True
        return False

    def _observe_launchers(self, record: Mapping[str, Any]) -> None:
        """Remember who ran each tool_use: the caller of an agent it may launch."""
        content = record["message"].get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                self.launchers.setdefault(block["id"], []).append((record.get("parent_tool_use_id"), record.get("agentId")))

    @staticmethod
    def _explicit_caller(payload: Mapping[str, Any]) -> Any:
        for name in CALLER_FIELDS:
            if name in payload:
                return payload[name]
        return _ABSENT

    def _inferred_caller(self, record: Mapping[str, Any], envelope: Mapping[str, Any]) -> Any:
        """The launcher's caller agentId, only when the observations are unambiguous.

        Candidates are the observed tool_use records with the launcher's ID,
        narrowed to the start's own parent scope when it states one.  One
        distinct non-null caller is inferred; a root launcher (no agentId),
        no observation, or disagreeing observations infer nothing.
        """
        tool_use_id = record.get("tool_use_id")
        observed = self.launchers.get(tool_use_id, []) if isinstance(tool_use_id, str) else []
        if "parent_tool_use_id" in envelope:
            observed = [o for o in observed if o[0] == envelope["parent_tool_use_id"]]
        callers = {repr(agent): agent for _, agent in observed}
        if len(callers) != 1:
            return _ABSENT
        (caller,) = callers.values()
        return _ABSENT if caller is None else caller

    def finish(self) -> None:
        self.session.events = self.streams.finish(self.session.events)
        self.session.emit(*self.legacy.finish())


def parse(text: str, engine: str = ENGINE) -> ParseResult:
    """Parse a Claude JSON array / JSONL log into a canonical trace."""
    session = Session(engine)
    mapper = ClaudeMapper(session, engine)
    return parse_objects(session, mapper, text)
