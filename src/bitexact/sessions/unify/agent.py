"""The agent component: authoritative stream selection and essential projection.

Selection (T-UAS-058): the persisted canonical ``agent-session.jsonl`` wins
over raw engine logs; without it, native Copilot ``events.jsonl`` sessions
(through the Copilot adapter), then Pi's ``pi-streaming.jsonl``, then the
engine parser over ``agent-stdio.log``.  Equivalent representations are
never combined.  A native file that yields no structured events does not
suppress a usable stdio conversation.

Projection (3.5): known agent payloads keep only their essential fields
(``unified_model``); unknown native extensions stay opaque.  Provenance
``index`` is the event's position in the parser's canonical array.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bitexact.sessions import unified_model as um
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.clock import iso_ns, ordering_key
from bitexact.sessions.unify.execution import CANONICAL_ERROR_TYPES
from bitexact.sessions.unify.project import MISSING, Projector, unified_usage

_ATTRIBUTION_KEYS = ("sessionId", "session_id", "agentId", "agent_id", "parentToolCallId",
                     "parent_tool_call_id", "parentToolUseId", "parent_tool_use_id")
_ATTRIBUTION_SET = frozenset(_ATTRIBUTION_KEYS)
_MESSAGE = {"messageId": ("message_id",)}
_USAGE = {"usage": unified_usage}

PROJECTORS: dict[str, Projector] = {
    "session.init": Projector(um.InitData),
    "user.message": Projector(um.MessageData, _MESSAGE),
    "assistant.message": Projector(um.MessageData, _MESSAGE),
    "assistant.reasoning": Projector(um.MessageData, _MESSAGE),
    "assistant.refusal": Projector(um.RefusalData, _MESSAGE),
    "assistant.message_update": Projector(um.MessageUpdateData, _MESSAGE, _USAGE),
    "session.error": Projector(um.SessionErrorData),
    "tool.execution_start": Projector(um.ToolStartData, {"input": ("parameters",)}),
    "tool.execution_complete": Projector(um.ToolCompleteData, {"output": ("result",)}),
    "tool.execution_update": Projector(um.ToolUpdateData),
    "session.result": Projector(um.ResultData, converters=_USAGE),
    "session.shutdown": Projector(um.ShutdownData),
    "skill.invoked": Projector(um.SkillInvokedData, {"skillName": ("skill_name", "skill", "name")}),
    "skill.context_delivered_ref": Projector(
        um.SkillInvokedData, {"skillName": ("skill_name", "skill", "name")}
    ),
}

_FAILED_STATUS = frozenset({"failed", "failure", "error", "errored"})


def explicit_failure(data: Mapping[str, Any]) -> bool:
    """Any explicit failure signal on a completion (T-UAS-014)."""
    if data.get("success") is False or data.get("isError") is True or data.get("is_error") is True:
        return True
    status = data.get("status")
    if isinstance(status, str) and status.lower() in _FAILED_STATUS:
        return True
    for key in ("exitCode", "exit_code"):
        code = data.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return True
    return False


def observed_timestamp(event: Mapping[str, Any]) -> Any:
    """The native timestamp value of an agent event, or ``MISSING``.

    The top-level ``timestamp`` first; Pi's observed ``message.timestamp``
    (kept by the parser as ``data.messageTimestamp``) otherwise.
    """
    if "timestamp" in event:
        return event["timestamp"]
    data = event.get("data")
    if isinstance(data, dict) and "messageTimestamp" in data:
        return data["messageTimestamp"]
    return MISSING


def project_event(event: Mapping[str, Any], builder: SourceBuilder) -> dict[str, Any]:
    """Essential ``data`` of one canonical agent event."""
    kind = event["type"]
    data = event["data"]
    projector = PROJECTORS.get(kind)
    if projector is None:
        if kind.startswith("subagent.") and "factoryRunId" in data and "workflowRunId" not in data:
            # factoryRunId is the legacy alias of workflowRunId (3.2); one key survives.
            data = {("workflowRunId" if k == "factoryRunId" else k): v for k, v in data.items()}
        return data
    lookup: Mapping[str, Any] = data
    if not _ATTRIBUTION_SET.isdisjoint(event):
        # Caller identity kept as top-level native metadata joins the payload lookup.
        extra = {k: event[k] for k in _ATTRIBUTION_KEYS if k in event and k not in data}
        if extra:
            lookup = {**extra, **data}
    projected = builder.project(projector(lookup))
    if kind == "tool.execution_complete" and explicit_failure(data):
        projected["success"] = False
    return projected


def add_agent_events(builder: SourceBuilder, events: Iterable[dict[str, Any]], *,
                     errors: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Project a canonical agent trace into ``builder``; returns consumed snapshots.

    ``agent.execution`` records in the stream are explicit execution
    snapshots: they are returned for the 4.8 aggregate instead of being
    written again, so the file keeps one aggregate.  ``errors`` (if given)
    receives the main agent's error records (``CANONICAL_ERROR_TYPES``), the
    only events the execution aggregate reads, so the decoded trace is not
    kept alive beside its projection.
    """
    snapshots: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            builder.warn("invalid_event", f"event {index}: not a canonical event; skipped")
            continue
        if errors is not None and event["type"] in CANONICAL_ERROR_TYPES:
            errors.append(event)
        if not isinstance(event.get("data"), dict):
            builder.warn("invalid_event", f"event {index}: data is not an object; skipped")
            continue
        if event["type"] == "agent.execution":
            snapshots.append(event)
            continue
        native_ts = observed_timestamp(event)
        # ordering_key(native_ts, "iso_or_ms"), its common case first: an ISO string.
        key = iso_ns(native_ts) if isinstance(native_ts, str) else (
            ordering_key(native_ts, "iso_or_ms") if native_ts is not MISSING else None)
        builder.add(
            event["type"],
            project_event(event, builder),
            index=index,
            key=key,
            timestamp=native_ts,
            event_id=event.get("id", MISSING),
            parent_id=event.get("parentId", MISSING),
            native=event.get("provenance", MISSING),
        )
    return snapshots
