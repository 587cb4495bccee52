"""The reader's model of a session: conversations, paired tools, accounting (UAS 8.1, 8.4).

Events are grouped into *conversations* by source and caller scope (caller
``agentId`` and parent tool identity), so nested conversations, reused
session IDs and coincident tool IDs in other sources never mix (T-UAS-066).
Within a conversation, tool pairing prefers an exact ``toolCallId``, then a
non-negative safe-integer ``stepIndex`` (scoped by ``sessionId``), then -
for completions without either - a *unique* pending start with the same tool
name.  Outcomes are three-valued plus pending: success only when the
completion says so and nothing signals failure (T-UAS-014, T-UAS-044).

Accounting uses the canonical selection rules of section 6
(``bitexact.sessions.usage.select_accounting``): latest valid value per
metric, snapshots never summed, absent metrics unavailable, never zero.
Nothing here mutates the events it reads (T-UAS-026).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from bitexact.sessions.unified_model import MAX_SAFE_INTEGER
from bitexact.sessions.unify.agent import explicit_failure

SUCCESS, FAILURE, UNKNOWN, PENDING = "success", "failure", "unknown", "pending"
_SCOPE_KEYS = (("agentId", "agent_id"), ("parentToolCallId", "parent_tool_call_id",
                                         "parentToolUseId", "parent_tool_use_id"))
_MESSAGE_TYPES = ("assistant.message", "assistant.reasoning")


def _field(event: Mapping[str, Any], data: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if name in data:
            return data[name]
    for name in names:
        if name in event:
            return event[name]
    return None


def caller_scope(event: Mapping[str, Any]) -> tuple[Any, Any]:
    """``(caller agentId, parent tool identity)`` of an event; ``(None, None)`` at the root."""
    raw_data = event.get("data")
    data = raw_data if isinstance(raw_data, Mapping) else {}
    if event.get("type", "").startswith("subagent."):
        # A lifecycle envelope's agentId names its target, not the caller.
        return (None, _field(event, data, _SCOPE_KEYS[1]) or None)
    agent, parent = (_scope_key(_field(event, data, names)) for names in _SCOPE_KEYS)
    return (agent if agent not in ("",) else None, parent if parent not in ("",) else None)


def _scope_key(value: Any) -> Any:
    """A caller or parent id as a key: a list or object where an id belongs is shown as written, not a crash."""
    return value if value is None or isinstance(value, (str, int)) else repr(value)


def _call_id(data: Mapping[str, Any]) -> Any:
    value = data.get("toolCallId")
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return value
    return None


def _step(data: Mapping[str, Any]) -> tuple[Any, int] | None:
    step = data.get("stepIndex")
    if isinstance(step, int) and not isinstance(step, bool) and 0 <= step <= MAX_SAFE_INTEGER:
        return (repr(data.get("sessionId")), step)
    return None


def tool_name(data: Mapping[str, Any]) -> str:
    """Display tool name: ``mcp__server__tool`` for MCP tools, ``Bash`` for the builtin shell."""
    name = data.get("toolName")
    name = name if isinstance(name, str) else "(unnamed tool)"
    server = data.get("mcpServerName")
    if isinstance(server, str) and not name.startswith("mcp__"):
        return f"mcp__{server}__{name}"
    if name == "bash" and server is None:
        return "Bash"
    return name


@dataclass
class ToolCall:
    """A start and/or completion observed in one conversation."""

    start: Mapping[str, Any] | None = None
    complete: Mapping[str, Any] | None = None
    ambiguous: bool = False

    @property
    def outcome(self) -> str:
        """``success``, ``failure``, ``unknown`` or ``pending``."""
        if self.complete is None:
            return PENDING
        data = self.complete.get("data", {})
        if explicit_failure(data):
            return FAILURE
        if self.ambiguous:
            return UNKNOWN
        return SUCCESS if data.get("success") is True else UNKNOWN

    @property
    def orphan(self) -> bool:
        """A completion whose start was not observed."""
        return self.start is None


@dataclass
class Entry:
    """One displayed item of a conversation, in source order."""

    kind: str
    event: Mapping[str, Any]
    text: Any = None
    tool: ToolCall | None = None


@dataclass
class ToolStats:
    """Tool outcome counts; pending and unknown are never counted as success."""

    calls: int = 0
    succeeded: int = 0
    failed: int = 0
    pending: int = 0
    unknown: int = 0
    orphans: int = 0


@dataclass
class Conversation:
    """The events of one source and caller scope."""

    key: Hashable
    label: str
    entries: list[Entry] = field(default_factory=list)
    results: list[Mapping[str, Any]] = field(default_factory=list)
    inits: list[Mapping[str, Any]] = field(default_factory=list)
    observed_models: list[str] = field(default_factory=list)
    events: int = 0

    def stats(self) -> ToolStats:
        """Tool statistics of this conversation."""
        stats = ToolStats()
        for entry in self.entries:
            if entry.tool is None:
                continue
            stats.calls += 1
            outcome = entry.tool.outcome
            if entry.tool.orphan:
                stats.orphans += 1
            if outcome == SUCCESS:
                stats.succeeded += 1
            elif outcome == FAILURE:
                stats.failed += 1
            elif outcome == PENDING:
                stats.pending += 1
            else:
                stats.unknown += 1
        return stats

    def init(self) -> dict[str, Any]:
        """Merged initialization observations (later supplied values win; absent stays absent)."""
        merged: dict[str, Any] = {}
        for data in self.inits:
            for key, value in data.items():
                merged[key] = value
        return merged


def content_text(content: Any) -> Any:
    """Displayable text of a message ``content``: strings as-is, text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
        if texts and len(texts) == len(content):
            # each entry passed isinstance(..., str) in the comprehension filter above
            return "".join(cast(list[str], texts))
    return content


class _Pairer:
    def __init__(self) -> None:
        self.by_id: dict[Any, list[ToolCall]] = {}
        self.by_step: dict[tuple[Any, int], list[ToolCall]] = {}
        self.anonymous: dict[str, list[ToolCall]] = {}

    def start(self, event: Mapping[str, Any]) -> ToolCall:
        data = event["data"]
        call = ToolCall(start=event)
        call_id, step = _call_id(data), _step(data)
        if call_id is not None:
            self.by_id.setdefault(call_id, []).append(call)
        elif step is not None:
            self.by_step.setdefault(step, []).append(call)
        else:
            self.anonymous.setdefault(tool_name(data), []).append(call)
        return call

    def complete(self, event: Mapping[str, Any]) -> ToolCall | None:
        """The pending call this completion closes, or ``None`` (an orphan)."""
        data = event["data"]
        call_id, step = _call_id(data), _step(data)
        if call_id is not None:
            queue = self.by_id.get(call_id)
        elif step is not None:
            queue = self.by_step.get(step)
        else:
            queue = self.anonymous.get(tool_name(data))
            if queue and len(queue) > 1:
                return ToolCall(complete=event, ambiguous=True)
        if not queue:
            return None
        call = queue.pop(0)
        call.complete = event
        return call


def build_conversations(
    events: Iterable[Mapping[str, Any]],
    source_of: Callable[[Mapping[str, Any]], Hashable] = lambda e: None,
    label_of: Callable[[Hashable, tuple[Any, Any]], str] | None = None,
) -> list[Conversation]:
    """Group ``events`` into conversations (first-seen order) and pair their tools."""
    conversations: dict[Hashable, Conversation] = {}
    pairers: dict[Hashable, _Pairer] = {}
    for event in events:
        data = event.get("data")
        kind = event.get("type")
        if not isinstance(data, Mapping) or not isinstance(kind, str):
            continue
        source = source_of(event)
        scope = caller_scope(event)
        key = (source, scope)
        conv = conversations.get(key)
        if conv is None:
            label = label_of(source, scope) if label_of else _default_label(scope)
            conv = conversations[key] = Conversation(key, label)
            pairers[key] = _Pairer()
        conv.events += 1
        _add(conv, pairers[key], event, kind, data)
    return list(conversations.values())


def _default_label(scope: tuple[Any, Any]) -> str:
    agent, parent = scope
    if agent is None and parent is None:
        return "main conversation"
    parts = [f"agent {agent}" if agent is not None else "", f"parent tool {parent}" if parent is not None else ""]
    return "nested conversation (" + ", ".join(p for p in parts if p) + ")"


def _add(conv: Conversation, pairer: _Pairer, event: Mapping[str, Any], kind: str,
         data: Mapping[str, Any]) -> None:
    if kind == "session.init":
        conv.inits.append(data)
        return
    if kind == "session.result":
        conv.results.append(event)
        conv.entries.append(Entry("result", event))
        return
    if kind == "tool.execution_start":
        conv.entries.append(Entry("tool", event, tool=pairer.start(event)))
        return
    if kind == "tool.execution_complete":
        call = pairer.complete(event)
        if call is None:
            conv.entries.append(Entry("tool", event, tool=ToolCall(complete=event)))
        elif call.ambiguous:
            conv.entries.append(Entry("tool", event, tool=call))
        return
    if kind in _MESSAGE_TYPES:
        model = data.get("model")
        if isinstance(model, str) and model not in conv.observed_models:
            conv.observed_models.append(model)
        text = content_text(data.get("content"))
        last = conv.entries[-1] if conv.entries else None
        message_id = data.get("messageId")
        if (last is not None and last.event.get("type") == kind and message_id is not None
                and last.event.get("data", {}).get("messageId") == message_id
                and isinstance(last.text, str) and isinstance(text, str)):
            # Streaming fragments of one message and channel display as one entry.
            last.text += text
            return
        conv.entries.append(Entry("message" if kind == "assistant.message" else "reasoning", event, text))
        return
    conv.entries.append(Entry(kind, event, content_text(data.get("content"))))
