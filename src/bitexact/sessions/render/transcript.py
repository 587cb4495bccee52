"""Plain display lines shared by every view: information, CLI-style transcript, observations.

Lines produced here are *plain text*; the Markdown view places them inside
payload-safe code fences (or escapes them), the text view neutralizes
workflow commands.  Every untrusted string goes through the publisher
(redaction, then clipping).  Display copies only: a tool input shown with
its command merged in is a new object; nothing read is modified (T-UAS-043).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bitexact.sessions.render.budget import FIELD_BYTES, MESSAGE_BYTES, OUTPUT_BYTES
from bitexact.sessions.render.escape import printable, single_line
from bitexact.sessions.render.privacy import Publisher
from bitexact.sessions.render.summary import (
    FAILURE,
    PENDING,
    SUCCESS,
    Conversation,
    Entry,
    ToolCall,
    content_text,
    tool_name,
)
from bitexact.sessions.usage import display_total, read_token, select_accounting, valid_count, valid_metric

# Whitelisted scalar fields per observation type; anything else shows its type only.
DISPLAY_FIELDS: dict[str, tuple[str, ...]] = {
    "session.info": ("sourceType", "subtype", "status", "level", "code", "errorType",
                     "estimatedTokens", "estimatedTokensDelta", "kind", "branch"),
    "session.error": ("errorType", "code", "statusCode", "message"),
    "assistant.message_update": ("messageId", "blockIndex", "sourceType", "partial", "delta"),
    "tool.execution_update": ("toolCallId", "toolName", "taskId", "taskType", "partial"),
    "model.call_final_result": ("model", "byok", "stopReason", "status"),
    "guardrail.daily_aic": ("status", "exceeded", "total", "estimated", "threshold"),
    "guardrail.admission": ("status", "maxAiCredits", "threatDetectionMaxAiCredits", "evalsMaxAiCredits"),
    "subagent.started": ("agentId", "agentName", "agentDisplayName", "model", "reasoningEffort",
                         "workflowRunId", "invocationId", "toolCallId"),
    "subagent.configured": ("agentId", "agentName", "model", "reasoningEffort", "invocationId"),
    "subagent.completed": ("agentId", "agentName", "model", "durationMs", "totalTokens",
                           "totalToolCalls", "invocationId"),
    "subagent.failed": ("agentId", "agentName", "model", "errorCode", "invocationId"),
    "subagent.request": ("agentId", "invocationId", "model", "inputTokens", "outputTokens",
                         "cacheReadTokens", "cacheWriteTokens"),
    "workflow.run_started": ("runId", "attempt", "revision", "status", "failureClass"),
    "workflow.run_updated": ("runId", "attempt", "revision", "status", "failureClass"),
    "workflow.run_settled": ("runId", "attempt", "revision", "status", "failureClass"),
    "skill.invoked": ("skillName", "path", "source", "trigger", "model", "turn"),
    "skill.context_delivered_ref": ("skillName", "path", "source", "trigger", "model", "turn"),
    "mcp.rpc.request": ("method", "serverName", "rpcId", "toolName"),
    "mcp.rpc.response": ("serverName", "rpcId", "status", "durationMs", "errorCode", "errorMessage",
                         "httpStatus", "retryHint"),
    "mcp.tool_call": ("serverName", "toolName", "rpcId", "status", "durationMs", "errorCode", "errorMessage"),
    "mcp.difc.filtered": ("serverName", "toolName", "rpcId", "reason", "status"),
    "mcp.guard.blocked": ("serverName", "toolName", "rpcId", "reason", "status"),
    "mcp.event": ("event", "level", "serverName", "status", "reason", "message"),
    "firewall.http_access": ("method", "host", "status", "decision", "bytes", "durationMs"),
    "firewall.token_usage": ("provider", "model", "purpose", "status", "requestId", "aic", "totalAic",
                             "premiumRequests", "durationMs", "steering", "usage"),
    "usage.report": ("provider", "model", "purpose", "status", "requestId", "aic", "totalAic",
                     "premiumRequests", "durationMs", "steering", "usage"),
    "firewall.steering": ("event", "threshold", "level", "message", "requestId"),
    "firewall.event": ("event", "level", "status", "message", "reason", "requestId"),
    "plugin.event": ("event", "level", "status", "message", "reason"),
    "firewall.model_routing": ("stage", "purpose", "selectedModel", "selectedEndpoint", "wireModel",
                               "outcome", "routed", "status", "requestId", "errorCode"),
    "firewall.upstream_error": ("provider", "model", "httpStatus", "errorCode", "errorType", "errorParam",
                                "requestId"),
    "model_routing.outcome": ("status", "wireModel", "effectiveEndpoint", "selectedEndpoint", "effort",
                              "appliedEffort", "failureCode"),
    "model_endpoint.mismatch": ("phase", "configuredModel", "resolvedModel", "wireApi", "wireApiSource",
                                "supportedEndpoints", "detail", "fix"),
    "model.resolution": ("engine", "role", "configuredModel", "resolvedModel", "provider", "status", "cause"),
    "model.inventory": ("endpoints", "modelsFetchComplete"),
    "model.config": ("routing", "models", "maxAiCredits", "maxAiCreditsSource", "baselineModel"),
    "model.baseline_estimate": ("baselineModel", "aic", "mainRequests", "pricedRequests",
                                "unpricedRequests", "unattributedRequests", "complete"),
    "workflow.info": ("engineId", "engineHarness", "model", "requestedModel", "modelRouting", "triggerType",
                      "repository", "runId", "runAttempt", "workflowId", "workflowCallId", "cliVersion",
                      "awfVersion", "mcpgVersion", "agentVersion", "awContext", "episode"),
    "workflow.job_result": ("jobId", "result", "durationMs"),
    "execution.result": ("outcome", "conclusion", "exitCode", "durationMs", "startedAt", "finishedAt"),
    "agent.execution": ("categories", "errorCodes", "errorTypes", "exitCode"),
    "detection.result": ("jobResult", "conclusion", "reason", "promptInjection", "secretLeak", "maliciousPatch"),
    "github_api.rate_limit": ("source", "resource", "operation", "remaining", "limit", "used", "reset",
                              "credentialSource"),
    "plugin.installation": ("plugin", "repository", "ref", "status"),
    "skill.inventory": ("skills",),
    "skill.conflict": ("name", "kind", "entries"),
    "safe_output.request": ("operation", "repository", "number", "identifier"),
    "safe_output.result": ("operation", "repository", "number", "identifier", "url", "status"),
    "safe_output.error": ("operation", "repository", "number", "status", "errors"),
    "experiment.assignment": ("runId", "assignments", "counts"),
    "experiment.state": ("runId", "experiment", "assignments", "counts"),
    "grader.manifest": ("version", "graders"),
    "grader.result": ("id", "name", "status", "value", "unit", "passed", "decision", "threshold",
                      "severity", "messages", "metrics"),
    "eval.result": ("id", "answer", "model", "error", "runId", "runAttempt", "experiments"),
    "otel.span": ("name", "traceId", "spanId", "parentSpanId", "status"),
    "otel.span_event": ("name", "traceId", "spanId"),
    "otel.log": ("severityText", "severityNumber", "traceId", "spanId"),
    "session.collection": ("eventCount", "untimedEventCount", "warningCount", "absentComponents"),
    "session.collection_warning": ("code", "source", "path", "line", "message"),
}
_COUNTED = {"model.inventory": "endpoints", "skill.inventory": "skills", "grader.manifest": "graders",
            "skill.conflict": "entries", "safe_output.error": "errors"}
_TYPE_NOTES = {
    "safe_output.request": "requested, not an execution result",
    "assistant.refusal": "refusal observation",
}


def compact_json(value: Any) -> str:
    """Compact JSON for display (never used for stored data)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def scalar(pub: Publisher, value: Any, limit: int = FIELD_BYTES) -> str:
    """One field value on one line, redacted then clipped."""
    text = value if isinstance(value, str) else compact_json(value)
    return single_line(pub.text(text, limit))


def observation_fields(pub: Publisher, kind: str, data: Mapping[str, Any]) -> str:
    """``key=value`` summary of an observation's whitelisted fields."""
    names = DISPLAY_FIELDS.get(kind)
    if names is None:
        return ""
    parts = []
    for name in names:
        if name not in data:
            continue
        value = data[name]
        if _COUNTED.get(kind) == name and isinstance(value, list):
            parts.append(f"{name}={len(value)}")
        elif name == "usage" and isinstance(value, Mapping):
            parts.append("usage=" + scalar(pub, {k: v for k, v in value.items() if not isinstance(v, (dict, list))}))
        else:
            parts.append(f"{name}={scalar(pub, value, 1024 if name in ('awContext', 'episode') else FIELD_BYTES)}")
    return " ".join(parts)


# ----------------------------------------------------------------- information


def _canonical_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    # Unified files write camelCase usage; accounting selection reads the
    # snake_case writer names (camelCase input/output/cache are aliases).
    out = dict(usage)
    for camel, snake in (("reasoningOutputTokens", "reasoning_output_tokens"), ("totalTokens", "total_tokens"),
                         ("inputTokensIncludeCache", "input_tokens_include_cache")):
        if camel in usage and snake not in usage:
            out[snake] = usage[camel]
    return out


def accounting(conv: Conversation) -> dict[str, Any]:
    """Selected accounting of a conversation (latest valid value per metric, never summed)."""
    results = []
    for event in conv.results:
        data = event["data"]
        if isinstance(data.get("usage"), Mapping):
            data = {**data, "usage": _canonical_usage(data["usage"])}
        results.append({"type": "session.result", "data": data})
    return select_accounting(results)


def _count(value: Any) -> str:
    return str(int(value)) if valid_count(value) else "unavailable"


def _duration(value: Any) -> str:
    if not valid_metric(value):
        return "unavailable"
    return f"{value / 1000:.1f}s ({value:g} ms)"


def _cost(value: Any) -> str:
    return f"${value:.4f} (reported)" if valid_metric(value) else "unavailable"


def _error_text(pub: Publisher, error: Any) -> str:
    if isinstance(error, Mapping):
        code = next((error[k] for k in ("code", "errorCode", "statusCode", "type", "errorType") if k in error), None)
        message = error.get("message", error.get("error"))
        head = f"{scalar(pub, code)}: " if code is not None else ""
        return head + (scalar(pub, message, OUTPUT_BYTES) if message is not None else scalar(pub, error, OUTPUT_BYTES))
    return scalar(pub, error, OUTPUT_BYTES)


def information_lines(conv: Conversation, pub: Publisher) -> list[str]:
    """Initialization, accounting and tool statistics of one conversation."""
    init = conv.init()
    lines = []
    head = [f"{label}: {scalar(pub, init[key])}" for key, label in
            (("sourceEngine", "Engine"), ("model", "Model"), ("sessionId", "Session"), ("cwd", "Working directory"))
            if key in init]
    if "model" not in init and conv.observed_models:
        head.append("Observed model: " + ", ".join(scalar(pub, m) for m in conv.observed_models))
    lines.append(" · ".join(head) if head else "Initialization: not observed")
    for key, label in (("tools", "Tools available"), ("mcpServers", "MCP servers"),
                       ("slashCommands", "Slash commands")):
        value = init.get(key)
        if isinstance(value, list):
            names = [scalar(pub, _item_name(v), 64) for v in value[:20]]
            more = f" (+{len(value) - 20} more)" if len(value) > 20 else ""
            lines.append(f"{label}: {len(value)}" + (f" — {', '.join(names)}{more}" if names else ""))
        else:
            lines.append(f"{label}: unavailable")
    if isinstance(init.get("modelInfo"), Mapping):
        lines.append("Model information: " + scalar(pub, init["modelInfo"]))
    acc = accounting(conv)
    lines.append(f"Turns: {_count(acc.get('numTurns'))} · Duration: {_duration(acc.get('durationMs'))}"
                 f" · Cost: {_cost(acc.get('totalCostUsd'))}")
    if "status" in acc or "sourceType" in acc:
        lines.append("Reported status: " + " / ".join(scalar(pub, acc[k]) for k in ("status", "sourceType") if k in acc)
                     + " (an observation, not a task-success claim)")
    lines.append(_token_line(acc.get("usage")))
    stats = conv.stats()
    lines.append(f"Tool calls: {stats.calls} — {stats.succeeded} succeeded, {stats.failed} failed, "
                 f"{stats.pending} pending (no completion observed), {stats.unknown} outcome unknown, "
                 f"{stats.orphans} without an observed start")
    errors = acc.get("errors")
    if isinstance(errors, list):
        lines.append(f"Session errors: {len(errors)}")
        lines.extend(f"  - {_error_text(pub, e)}" for e in errors[:5])
        if len(errors) > 5:
            lines.append(f"  - … {len(errors) - 5} more")
    else:
        lines.append("Session errors: not reported")
    denials = acc.get("permissionDenials")
    lines.append(f"Permission denials: {len(denials)}" if isinstance(denials, list) else "Permission denials: not reported")
    return lines


def _item_name(value: Any) -> Any:
    if isinstance(value, Mapping):
        name = value.get("name", value.get("serverName"))
        status = value.get("status")
        return f"{name} ({status})" if status is not None else name
    return value


def _token_line(usage: Any) -> str:
    if not isinstance(usage, Mapping) or not usage:
        return "Tokens: unavailable"
    parts = []
    for field, label in (("input_tokens", "input"), ("output_tokens", "output"),
                         ("reasoning_output_tokens", "reasoning (subset of output)"),
                         ("cache_read_input_tokens", "cache read"), ("cache_creation_input_tokens", "cache write")):
        value = read_token(usage, field) if field != "reasoning_output_tokens" else (
            usage.get(field) if valid_count(usage.get(field)) else None)
        parts.append(f"{label} {value if value is not None else 'unavailable'}")
    total = display_total(usage)
    total_text = f" — total {total[0]} ({total[1]})" if total else ""
    return "Tokens: " + " · ".join(parts) + total_text


# ----------------------------------------------------------------- transcript


def _indent(text: str, first: str, rest: str) -> list[str]:
    # A display may reformat: one trailing line break does not get its own empty line.
    lines = printable(text).split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [first + lines[0]] + [rest + line for line in lines[1:]]


def display_input(data: Mapping[str, Any]) -> Any:
    """The input shown for a tool start: ``input`` by presence, else ``parameters``; command merged in a copy."""
    value = data["input"] if "input" in data else data.get("parameters")
    command = data.get("command")
    if isinstance(command, str):
        if isinstance(value, Mapping) and "command" not in value:
            value = {**value, "command": command}
        elif value is None and "input" not in data and "parameters" not in data:
            value = {"command": command}
    return value


def display_output(data: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(present, value)``: an explicitly present ``output`` first, else the native ``result``."""
    if "output" in data:
        return True, data["output"]
    if "result" in data:
        result = data["result"]
        if isinstance(result, Mapping) and isinstance(result.get("content"), list):
            return True, content_text(result["content"])
        return True, result
    return False, None


def _payload(pub: Publisher, value: Any, limit: int) -> str:
    if value == "":
        return "[empty output]"
    value = content_text(value)
    text = value if isinstance(value, str) else compact_json(value)
    return pub.text(text, limit)


def _tool_lines(pub: Publisher, call: ToolCall) -> list[str]:
    source = call.start or call.complete
    assert source is not None
    data = source.get("data", {})
    name = scalar(pub, tool_name(data), 128)
    if call.start is not None:
        shown = display_input(data)
        args = "" if shown is None else scalar(pub, shown, OUTPUT_BYTES)
        lines = [f"● {name}({args})"]
    elif call.ambiguous:
        lines = [f"● {name} [completion could not be paired: several pending calls share this name]"]
    else:
        lines = [f"● {name} [completion without an observed start]"]
    if call.complete is None:
        return lines + ["  ⎿ … pending: no completion observed"]
    done = call.complete["data"]
    outcome = call.outcome
    mark = {SUCCESS: "✓", FAILURE: "✗", PENDING: "…"}.get(outcome, "?")
    extra = []
    if "durationMs" in done and valid_metric(done["durationMs"]):
        extra.append(f"{done['durationMs']:g} ms")
    if "exitCode" in done:
        extra.append(f"exit code {scalar(pub, done['exitCode'])}")
    suffix = f" ({', '.join(extra)})" if extra else ""
    present, output = display_output(done)
    if outcome == FAILURE and "error" in done:
        lines += _indent(_error_text(pub, done["error"]) + suffix, f"  ⎿ {mark} error: ", "      ")
        if present:
            lines += _indent(_payload(pub, output, OUTPUT_BYTES), "    output: ", "      ")
        return lines
    label = "" if outcome in (SUCCESS, FAILURE) else "outcome not reported: "
    body = _payload(pub, output, OUTPUT_BYTES) if present else "[no output reported]"
    lines += _indent(label + body + suffix, f"  ⎿ {mark} ", "      ")
    if "error" in done and outcome != FAILURE:
        lines += _indent(_error_text(pub, done["error"]), "    error: ", "      ")
    return lines


def entry_lines(pub: Publisher, entry: Entry) -> list[str]:
    """The CLI-style lines of one conversation entry (empty when not published)."""
    event = entry.event
    kind = event.get("type", "")
    data = event.get("data", {})
    if pub.private(event):
        return []
    if entry.tool is not None:
        return _tool_lines(pub, entry.tool)
    if entry.kind in ("message", "reasoning"):
        text = entry.text if isinstance(entry.text, str) else compact_json(entry.text)
        body = pub.text(text, MESSAGE_BYTES)
        partial = " [partial]" if data.get("partial") is True else ""
        return _indent(body + partial, "● " if entry.kind == "message" else "✻ Reasoning: ", "  ")
    if kind == "assistant.refusal":
        detail = [scalar(pub, data.get("reason"))]
        if data.get("policyCategory") is not None:
            detail.append(scalar(pub, data["policyCategory"]))
        note = " [partial stream fragment, not a completed answer]" if data.get("partial") is True else ""
        refusal = content_text(data["content"]) if "content" in data else None
        text = pub.text(refusal if isinstance(refusal, str) else compact_json(refusal), MESSAGE_BYTES) if "content" in data else "[no refusal text]"
        lines = _indent(text, f"⊘ Refusal ({', '.join(detail)}){note}: ", "  ")
        if isinstance(data.get("explanation"), str):
            lines += _indent(pub.text(data["explanation"], MESSAGE_BYTES), "  explanation: ", "  ")
        return lines
    if kind == "user.message":
        text = entry.text if isinstance(entry.text, str) else compact_json(entry.text)
        return _indent(pub.text(text, MESSAGE_BYTES), "▸ User prompt (diagnostic view): ", "  ")
    if kind in ("prompt.system", "prompt.user"):
        return _indent(pub.text(str(data.get("content", "")), MESSAGE_BYTES), f"▸ {kind} (diagnostic view): ", "  ")
    if kind == "session.error":
        return [f"✗ session.error {observation_fields(pub, kind, data)}".rstrip()]
    if kind == "session.result":
        fields = [f"{k}={scalar(pub, data[k])}" for k in ("status", "sourceType", "numTurns") if k in data]
        return [("■ session.result " + " ".join(fields)).rstrip() + " (accounting snapshot, not a success claim)"]
    observed = observation_fields(pub, kind, data)
    # A native type is source text: redacted and clipped like a field, on one line.
    return [f"· {scalar(pub, str(kind))} {observed}".rstrip()]


def transcript_lines(conv: Conversation, pub: Publisher) -> list[str]:
    """The CLI-style transcript of one conversation."""
    lines: list[str] = []
    for entry in conv.entries:
        lines.extend(entry_lines(pub, entry))
    return lines
