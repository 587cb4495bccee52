"""Typed models of the canonical agent session trace (UAS sections 3-4, 6).

A canonical trace is a plain ``list`` of event ``dict``s: ``{"type": str,
"data": dict, ...native metadata}`` (T-UAS-003).  These TypedDicts describe
the payloads of the core event types and the usage object so that JSON
Schemas can be generated from them; at run time events stay plain dicts and
every TypedDict is open in spirit: native additions are preserved
(T-UAS-027) even though a TypedDict cannot declare "any other key".

``total=False`` marks source-dependent fields: absence means "not supplied",
never zero or empty (T-UAS-005).  ``Required`` marks what the spec requires.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypeAlias, TypedDict, Union

from bitexact.sessions.unified_model import Count

JSONValue: TypeAlias = Union[None, bool, int, float, str, list[Any], dict[str, Any]]
"""Any JSON-compatible value (structured tool inputs/outputs stay structured)."""

Event: TypeAlias = dict[str, Any]
"""One canonical event: ``type`` (dot-namespaced string), ``data`` (object), metadata."""

CORE_EVENT_TYPES: tuple[str, ...] = (
    "session.init",
    "user.message",
    "assistant.message",
    "assistant.reasoning",
    "assistant.refusal",
    "tool.execution_start",
    "tool.execution_complete",
    "session.result",
)
"""The core vocabulary of sections 4.1-4.6 every parser and reader supports."""

DECLARED_EXTENSION_TYPES: tuple[str, ...] = (
    "session.error",
    "session.info",
    "tool.execution_update",
    "assistant.message_update",
    "mcp.event",
    "subagent.started",
    "subagent.configured",
    "subagent.completed",
    "subagent.failed",
)
"""Extension types the parsers emit themselves (open vocabulary, T-UAS-006)."""


class Usage(TypedDict, total=False):
    """Token accounting in parser traces (6.1): canonical snake_case writer names.

    Counts are finite nonnegative integers (T-UAS-031).  ``reasoning_output_tokens``
    is a subset of ``output_tokens``.  ``input_tokens_include_cache`` records the
    source's known cache semantics; ``overflowed_tokens`` lists canonical fields
    that became unavailable because an aggregate passed 2**53-1.
    """

    input_tokens: Count
    output_tokens: Count
    reasoning_output_tokens: Count
    cache_creation_input_tokens: Count
    cache_read_input_tokens: Count
    total_tokens: Count
    input_tokens_include_cache: bool
    overflowed_tokens: list[str]


class SessionInitData(TypedDict, total=False):
    """``session.init`` payload (4.1, T-UAS-009).

    Parsers always set ``sourceEngine`` on a mapped initialization, but it is
    not required here: existing native initialization events without it
    stay valid and must not be rejected for that absence.
    """

    sourceEngine: str
    model: str
    sessionId: str
    cwd: str
    tools: list[JSONValue]
    mcpServers: list[JSONValue]
    slashCommands: list[JSONValue]
    modelInfo: dict[str, Any]


class UserMessageData(TypedDict, total=False):
    """``user.message`` payload (4.2, T-UAS-010); content is exact source text."""

    content: JSONValue


class AssistantMessageData(TypedDict, total=False):
    """``assistant.message`` / ``assistant.reasoning`` payload (4.3, T-UAS-011)."""

    content: JSONValue
    messageId: str
    model: str
    partial: bool


class AssistantRefusalData(TypedDict, total=False):
    """``assistant.refusal`` payload (4.3, T-UAS-069)."""

    reason: Required[Literal["refusal", "content_filter"]]
    content: JSONValue
    policyCategory: str | None
    explanation: str | None
    partial: bool


class ToolExecutionStartData(TypedDict, total=False):
    """``tool.execution_start`` payload (4.4, T-UAS-012)."""

    toolCallId: str
    toolName: str
    input: JSONValue
    command: str
    mcpServerName: str
    stepIndex: int


class ToolExecutionCompleteData(TypedDict, total=False):
    """``tool.execution_complete`` payload (4.5, T-UAS-013/014).

    ``success`` is present only when the source established an outcome.
    """

    toolCallId: str
    toolName: str
    success: bool
    output: JSONValue
    durationMs: int | float
    error: JSONValue
    result: JSONValue
    exitCode: int | None
    stepIndex: int


class ToolExecutionUpdateData(TypedDict, total=False):
    """``tool.execution_update``: a partial observation, never a completion."""

    toolCallId: str
    toolName: str
    input: JSONValue
    output: JSONValue
    partial: bool


class SessionResultData(TypedDict, total=False):
    """``session.result`` payload (4.6, T-UAS-015); evidence, not a success claim."""

    numTurns: Count
    durationMs: int | float
    totalCostUsd: int | float
    status: str
    sourceType: str
    usage: Usage
    auxiliaryUsage: Usage
    """Pi: reported inference outside the conversation turns, already included once in ``usage`` (7.5)."""
    errors: list[JSONValue]
    permissionDenials: list[JSONValue]


class AssistantMessageUpdateData(TypedDict, total=False):
    """``assistant.message_update``: a stream boundary or partial observation, not an answer."""

    sourceType: str
    messageId: str
    itemId: str
    itemType: str
    content: JSONValue
    partial: bool


class McpEventData(TypedDict, total=False):
    """``mcp.event`` emitted by parsers (Goose extension start failures)."""

    event: Required[str]
    serverName: str
    status: str


class SubagentData(TypedDict, total=False):
    """``subagent.*`` lifecycle payloads: ``agentId`` is the target agent."""

    agentId: JSONValue
    callerAgentId: JSONValue
    """The calling agent (explicit, or inferred from one unambiguous launcher observation; 7.1)."""
    model: str
    cancelled: bool


class SessionErrorData(TypedDict, total=False):
    """``session.error``: a retained provider/session diagnostic."""

    message: JSONValue
    errorType: str
    code: JSONValue
    statusCode: int
    severity: str


class SessionInfoData(TypedDict, total=False):
    """``session.info``: status/lifecycle notices with their source subtype."""

    sourceType: str
    content: JSONValue


class _EventBase(TypedDict, total=False):
    id: JSONValue
    parentId: JSONValue
    timestamp: JSONValue


class SessionInitEvent(_EventBase):
    type: Required[Literal["session.init"]]
    data: Required[SessionInitData]


class UserMessageEvent(_EventBase):
    type: Required[Literal["user.message"]]
    data: Required[UserMessageData]


class AssistantMessageEvent(_EventBase):
    type: Required[Literal["assistant.message"]]
    data: Required[AssistantMessageData]


class AssistantReasoningEvent(_EventBase):
    type: Required[Literal["assistant.reasoning"]]
    data: Required[AssistantMessageData]


class AssistantRefusalEvent(_EventBase):
    type: Required[Literal["assistant.refusal"]]
    data: Required[AssistantRefusalData]


class ToolExecutionStartEvent(_EventBase):
    type: Required[Literal["tool.execution_start"]]
    data: Required[ToolExecutionStartData]


class ToolExecutionCompleteEvent(_EventBase):
    type: Required[Literal["tool.execution_complete"]]
    data: Required[ToolExecutionCompleteData]


class SessionResultEvent(_EventBase):
    type: Required[Literal["session.result"]]
    data: Required[SessionResultData]


CoreSessionEvent: TypeAlias = Union[
    SessionInitEvent,
    UserMessageEvent,
    AssistantMessageEvent,
    AssistantReasoningEvent,
    AssistantRefusalEvent,
    ToolExecutionStartEvent,
    ToolExecutionCompleteEvent,
    SessionResultEvent,
]
"""Discriminated union of the core events (by ``type``)."""

SESSION_EVENT_DATA: dict[str, type] = {
    "session.init": SessionInitData,
    "user.message": UserMessageData,
    "assistant.message": AssistantMessageData,
    "assistant.reasoning": AssistantMessageData,
    "assistant.refusal": AssistantRefusalData,
    "tool.execution_start": ToolExecutionStartData,
    "tool.execution_complete": ToolExecutionCompleteData,
    "tool.execution_update": ToolExecutionUpdateData,
    "session.result": SessionResultData,
    "session.error": SessionErrorData,
    "session.info": SessionInfoData,
    "assistant.message_update": AssistantMessageUpdateData,
    "mcp.event": McpEventData,
    "subagent.started": SubagentData,
    "subagent.configured": SubagentData,
    "subagent.completed": SubagentData,
    "subagent.failed": SubagentData,
}
"""Event type -> payload TypedDict (the SessionEventDataMap of 3.4)."""


@dataclass(frozen=True)
class ParseResult:
    """What ``parse`` returns (T-UAS-008).

    ``events`` is the canonical trace (the spec's ``logEntries``); the other
    members are presentation and flags kept apart from the events.
    ``diagnostics`` name unrecognized or malformed records by position and
    cause and never quote payloads.
    """

    events: list[Event]
    markdown: str = ""
    mcp_failures: list[str] = field(default_factory=list)
    max_turns_hit: bool = False
    engine: str = ""
    diagnostics: list[str] = field(default_factory=list)
