"""Runtime observation families of UAS 4.7 (JSONL gateway, firewall and downstream logs).

Each reader maps one source's records, in order, to namespaced events with
the essential payloads of 3.5: RPC IDs, decisions, statuses, accounting and
steering survive including false/zero/null; RPC wrappers, arguments,
response bodies and duplicated timestamp fields do not (T-UAS-061).  A
record kind the family does not know becomes ``<component>.event`` with its
kind, level, status, message, reason and request ID.

The source record layouts are the ones documented in
``docs/sessions-readers.md`` (the spec names the fields, not the files).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from bitexact.sessions import unified_model as um
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.clock import ordering_key
from bitexact.sessions.unify.decode import json_lines, json_object
from bitexact.sessions.unify.project import MISSING, Projector, unified_usage

Clock = tuple[tuple[str, str], ...]
"""Ordered ``(field, unit)`` pairs: the first present field gives the timestamp."""

ISO_CLOCK: Clock = (("timestamp", "iso_or_ms"), ("time", "iso_or_ms"))
SQUID_CLOCK: Clock = (("ts", "seconds"), ("timestamp", "iso"))
TRACKER_CLOCK: Clock = (("ts", "ms"), ("timestamp", "iso_or_ms"))


def stamp(record: Mapping[str, Any], clock: Clock) -> tuple[Any, int | None]:
    """``(native timestamp value or MISSING, ordering key or None)``."""
    for name, unit in clock:
        if name in record:
            value = record[name]
            return value, ordering_key(value, unit)
    return MISSING, None


def kind_of(record: Mapping[str, Any]) -> str | None:
    """The record's event kind (``type``, ``event`` or ``kind``), if a string."""
    for name in ("type", "event", "kind"):
        value = record.get(name)
        if isinstance(value, str):
            return value
    return None


# ----------------------------------------------------------------- generic events

RUNTIME_EVENT = Projector(um.FirewallEventData, {"requestId": ("request_id",)})


def runtime_event(record: Mapping[str, Any], kind: str | None) -> Mapping[str, Any]:
    """Lookup for an unknown ``<component>.event``: the kind survives as ``event``."""
    if kind is not None and "event" not in record:
        return {**record, "event": kind}
    return record


# ----------------------------------------------------------------- MCP gateway

_RPC_ALIASES = {
    "serverName": ("server_name", "serverId", "server_id", "server"),
    "rpcId": ("rpc_id", "id"),
    "toolName": ("tool_name", "tool"),
    "requestBytes": ("request_bytes", "request_size"),
    "responseBytes": ("response_bytes", "response_size", "payload_bytes"),
    "httpStatus": ("http_status", "status_code"),
    "retryHint": ("retry_hint", "retry_after"),
}
MCP_RPC = Projector(um.McpRpcData, _RPC_ALIASES)
MCP_DIAGNOSTIC = Projector(um.McpDiagnosticData, _RPC_ALIASES)

_MCP_KINDS = {
    "request": "mcp.rpc.request",
    "rpc_request": "mcp.rpc.request",
    "response": "mcp.rpc.response",
    "rpc_response": "mcp.rpc.response",
    "tool_call": "mcp.tool_call",
    "difc_filtered": "mcp.difc.filtered",
    "guard_blocked": "mcp.guard.blocked",
}
_URL = re.compile(r"https?://|\?[^\s]*=", re.I)
_RETRY_HINT = re.compile(
    r"^(?:\d{1,6}(?:\.\d{1,3})?(?:ms|s|m|h)?|(?:\d+h)?(?:\d+m)?(?:\d+(?:\.\d+)?s)?|"
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)$"
)


def _mcp_lookup(record: Mapping[str, Any]) -> Mapping[str, Any]:
    params = record.get("params")
    error = record.get("error")
    tool = params.get("name") if isinstance(params, dict) else None
    adds_tool = isinstance(tool, str) and not ("toolName" in record or "tool_name" in record or "tool" in record)
    if not adds_tool and not isinstance(error, (dict, str)):
        return record  # nothing to add: the record itself is the lookup (read only), no copy per record
    lookup = dict(record)
    if adds_tool:
        lookup["toolName"] = tool
    if isinstance(error, dict):
        lookup.setdefault("errorCode", error.get("code", MISSING))
        lookup.setdefault("errorMessage", error.get("message", MISSING))
        lookup = {k: v for k, v in lookup.items() if v is not MISSING}
    elif isinstance(error, str):
        lookup.setdefault("errorMessage", error)
    return lookup


def _rate_limit_only(data: dict[str, Any]) -> dict[str, Any]:
    # httpStatus and retryHint are retained only for HTTP 429 failures, and
    # a rate-limit diagnostic never keeps echoed queries or URLs (3.5 MCP).
    if data.get("httpStatus") != 429:
        data.pop("httpStatus", None)
        data.pop("retryHint", None)
        return data
    hint = data.get("retryHint")
    if "retryHint" in data and not (
        (isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint >= 0)
        or (isinstance(hint, str) and hint and _RETRY_HINT.match(hint))
    ):
        data.pop("retryHint")
    message = data.get("errorMessage")
    if isinstance(message, str) and _URL.search(message):
        data.pop("errorMessage")
    return data


def read_mcp_log(builder: SourceBuilder, payload: bytes) -> None:
    """MCPG ``REQUEST``/``RESPONSE``, tool-call, DIFC/guard and other gateway records."""
    for index, _line, record in json_lines(builder, payload):
        kind = kind_of(record)
        event_type = _MCP_KINDS.get(kind.lower(), "mcp.event") if kind else "mcp.event"
        lookup = _mcp_lookup(record)
        if event_type.startswith("mcp.rpc") or event_type == "mcp.tool_call":
            data = _rate_limit_only(builder.project(MCP_RPC(lookup)))
        else:
            data = builder.project(MCP_DIAGNOSTIC(runtime_event(lookup, kind)))
        native, key = stamp(record, ISO_CLOCK)
        builder.add(event_type, data, index=index, key=key, timestamp=native)


_TRANSPORTS = {"stdio", "http", "sse", "streamable-http", "docker", "local", "remote"}


def _server_config(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    name = entry.get("serverName", entry.get("server_name", entry.get("name")))
    if not isinstance(name, str):
        return None
    out: dict[str, Any] = {"serverName": name}
    transport = entry.get("transport", entry.get("type"))
    if transport in _TRANSPORTS:
        out["transport"] = transport
    if isinstance(entry.get("required"), bool):
        out["required"] = entry["required"]
    tools = entry.get("tools")
    if isinstance(tools, list) and all(isinstance(t, str) for t in tools):
        out["tools"] = list(tools)
    return out


def read_mcp_configuration(builder: SourceBuilder, payload: bytes) -> None:
    """Sanitized gateway inventory: names, transport, required flag, tool filters only."""
    for index, _line, record in json_lines(builder, payload):
        raw = record.get("servers", record.get("mcpServers"))
        if isinstance(raw, dict):
            raw = [{**v, "serverName": k} if isinstance(v, dict) else v for k, v in raw.items()]
        if not isinstance(raw, list):
            builder.warn("invalid_record", f"record {index}: no server list; skipped")
            continue
        servers = []
        for entry in raw:
            server = _server_config(entry) if isinstance(entry, dict) else None
            if server is None:
                builder.warn("invalid_record", f"record {index}: server entry without a name omitted")
                continue
            servers.append(server)
        native, key = stamp(record, ISO_CLOCK)
        builder.add("mcp.configuration", {"servers": servers}, index=index, key=key, timestamp=native)


# ----------------------------------------------------------------- firewall (AWF)

HTTP_ACCESS = Projector(
    um.HttpAccessData,
    {
        "host": ("domain", "dest_host"),
        "status": ("http_status", "status_code"),
        "decision": ("action",),
        "bytes": ("size",),
        "durationMs": ("elapsed_ms", "elapsed"),
    },
)


def read_http_access(builder: SourceBuilder, payload: bytes) -> None:
    """AWF/Squid network audit: one ``firewall.http_access`` per record (ts in seconds)."""
    for index, _line, record in json_lines(builder, payload):
        native, key = stamp(record, SQUID_CLOCK)
        data = builder.project(HTTP_ACCESS(record))
        builder.add("firewall.http_access", data, index=index, key=key, timestamp=native)


_STEERING_TYPES = {"ai_credit", "timeout", "token"}
_STEERING_THRESHOLDS = {80, 90, 95, 99}


def steering_notice(value: Any) -> Any:
    """Keep only a recognized steering ``type`` and ``threshold`` (T-UAS-071)."""
    if not isinstance(value, dict):
        return MISSING
    kind, threshold = value.get("type"), value.get("threshold")
    if kind not in _STEERING_TYPES or isinstance(threshold, bool):
        return MISSING
    if not isinstance(threshold, (int, float)) or threshold not in _STEERING_THRESHOLDS:
        return MISSING
    return {"type": kind, "threshold": int(threshold)}


_TOKEN_ALIASES = {
    "xInitiator": ("x_initiator", "x-initiator"),
    "totalAic": ("total_aic", "ai_credits"),
    "premiumRequests": ("premium_requests",),
    "durationMs": ("duration_ms", "latency_ms"),
}
TOKEN_USAGE = Projector(
    um.TokenUsageData, _TOKEN_ALIASES, {"usage": unified_usage, "steering": steering_notice}
)
_TOKEN_FIELDS = frozenset({"input_tokens", "output_tokens", "cache_read_input_tokens",
                           "cache_creation_input_tokens", "reasoning_output_tokens", "total_tokens",
                           "input_tokens_include_cache", "inputTokens", "outputTokens",
                           "cacheReadInputTokens", "cacheCreationInputTokens", "reasoningOutputTokens",
                           "totalTokens", "inputTokensIncludeCache"})


def token_lookup(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """Token counts may be nested under ``usage`` or flat on the record."""
    if "usage" in record or _TOKEN_FIELDS.isdisjoint(record):
        return record
    return {**record, "usage": {k: v for k, v in record.items() if k in _TOKEN_FIELDS}}


def read_token_usage(event_type: str, clock: Clock) -> Callable[[SourceBuilder, bytes], None]:
    """Reader of proxy/accounting reports as ``event_type`` (token_usage or usage.report)."""

    def read(builder: SourceBuilder, payload: bytes) -> None:
        for index, _line, record in json_lines(builder, payload):
            native, key = stamp(record, clock)
            data = builder.project(TOKEN_USAGE(token_lookup(record)))
            builder.add(event_type, data, index=index, key=key, timestamp=native)

    return read


STEERING = Projector(um.SteeringData, {"requestId": ("request_id",)})
_STEERING_EVENTS = {"ai_credit_steering", "token_steering", "timeout_steering"}


def read_firewall_events(builder: SourceBuilder, payload: bytes) -> None:
    """AWF event log: steering events, tracker and other firewall messages."""
    for index, _line, record in json_lines(builder, payload):
        kind = kind_of(record)
        native, key = stamp(record, TRACKER_CLOCK)
        lookup = runtime_event(record, kind)
        if kind in _STEERING_EVENTS:
            data = builder.project(STEERING(lookup))
            builder.add("firewall.steering", data, index=index, key=key, timestamp=native)
        else:
            data = builder.project(RUNTIME_EVENT(lookup))
            builder.add("firewall.event", data, index=index, key=key, timestamp=native)


def ranked_choices(value: Any) -> Any:
    """AWF route choices in source order, ``rank`` = one-based position (T-UAS-070)."""
    if not isinstance(value, list):
        return MISSING
    out = []
    for position, choice in enumerate(value, start=1):
        if not isinstance(choice, dict):
            return MISSING
        entry: dict[str, Any] = {"rank": position}
        if "id" in choice:
            entry["id"] = choice["id"]
        for name in ("model", "effort"):
            if name in choice:
                entry[name] = choice[name]
        for name, item in entry.items():
            if isinstance(item, (dict, list)):
                return MISSING
        out.append(entry)
    return out


MODEL_ROUTING = Projector(
    um.ModelRoutingData,
    {"latencyMs": ("latency_ms", "latency"), "requestId": ("request_id",)},
    {"rankedChoices": ranked_choices},
)


def read_model_routing(builder: SourceBuilder, payload: bytes) -> None:
    """AWF model-routing selection and request records (``firewall.model_routing``)."""
    for index, _line, record in json_lines(builder, payload):
        native, key = stamp(record, TRACKER_CLOCK)
        data = builder.project(MODEL_ROUTING(record))
        builder.add("firewall.model_routing", data, index=index, key=key, timestamp=native)


UPSTREAM_ERROR = Projector(um.UpstreamErrorData, {"httpStatus": ("status", "http_status")})


def read_upstream_errors(builder: SourceBuilder, payload: bytes) -> None:
    """``UPSTREAM_ERROR_RESPONSE`` records: identifiers only, never bodies (T-UAS-082)."""
    for index, _line, record in json_lines(builder, payload):
        kind = kind_of(record)
        native, key = stamp(record, TRACKER_CLOCK)
        if kind == "UPSTREAM_ERROR_RESPONSE":
            data = builder.project(UPSTREAM_ERROR(record))
            builder.add("firewall.upstream_error", data, index=index, key=key, timestamp=native)
        else:
            data = builder.project(RUNTIME_EVENT(runtime_event(record, kind)))
            builder.add("firewall.event", data, index=index, key=key, timestamp=native)


# ----------------------------------------------------------------- GitHub API, plugins

RATE_LIMIT = Projector(um.RateLimitData)
PLUGIN = Projector(um.PluginInstallationData)


def read_rate_limits(builder: SourceBuilder, payload: bytes) -> None:
    """GitHub API rate-limit observations; credentials and unknown fields excluded."""
    for index, _line, record in json_lines(builder, payload):
        native, key = stamp(record, ISO_CLOCK)
        data = builder.project(RATE_LIMIT(record))
        builder.add("github_api.rate_limit", data, index=index, key=key, timestamp=native)


def read_plugins(builder: SourceBuilder, payload: bytes) -> None:
    """Successful plugin installations; other records stay ``plugin.event``."""
    for index, _line, record in json_lines(builder, payload):
        native, key = stamp(record, ISO_CLOCK)
        if record.get("status") == "installed":
            data = builder.project(PLUGIN(record))
            builder.add("plugin.installation", data, index=index, key=key, timestamp=native)
        else:
            data = builder.project(RUNTIME_EVENT(runtime_event(record, kind_of(record))))
            builder.add("plugin.event", data, index=index, key=key, timestamp=native)


# ----------------------------------------------------------------- safe outputs


def safe_output_errors(value: Any) -> Any:
    """Safe-output ``errors``/``failures``: operation type, code and message only."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str):
            out.append({"message": item})
        elif isinstance(item, dict):
            entry = {k: item[k] for k in ("type", "code", "message") if k in item}
            if any(isinstance(v, (dict, list)) for v in entry.values()):
                return MISSING
            out.append(entry)
        else:
            return MISSING
    return out


SAFE_OUTPUT = Projector(
    um.SafeOutputData,
    {
        "operation": ("type",),
        "repository": ("repo", "target_repo", "targetRepo"),
        "number": ("issue_number", "pull_request_number", "item_number"),
        "url": ("html_url",),
        "errors": ("failures", "error"),
    },
    {"errors": safe_output_errors},
)
_SUCCESS = {"success", "succeeded", "created", "updated", "ok", "completed", "skipped"}


def read_safe_output_requests(builder: SourceBuilder, payload: bytes) -> None:
    """Requested operations: identities only, never titles/bodies; not results."""
    for index, _line, record in json_lines(builder, payload):
        native, key = stamp(record, ISO_CLOCK)
        data = builder.project(SAFE_OUTPUT(record))
        builder.add("safe_output.request", data, index=index, key=key, timestamp=native)


def read_safe_output_results(builder: SourceBuilder, payload: bytes) -> None:
    """Executed item identities; records reporting errors become ``safe_output.error``."""
    for index, _line, record in json_lines(builder, payload):
        native, key = stamp(record, ISO_CLOCK)
        data = builder.project(SAFE_OUTPUT(record))
        status = record.get("status")
        failed = any(k in record for k in ("errors", "failures", "error")) and not (
            isinstance(status, str) and status.lower() in _SUCCESS
        )
        kind = "safe_output.error" if failed else "safe_output.result"
        builder.add(kind, data, index=index, key=key, timestamp=native)


# ----------------------------------------------------------------- single-document records

EXECUTION = Projector(um.ExecutionResultData)
DETECTION = Projector(um.DetectionResultData)
DAILY_AIC = Projector(um.DailyAicData)
ADMISSION = Projector(um.AdmissionData)


def read_document(event_type: str, projector: Projector, *, require: str | None = None,
                  clock: Clock = ISO_CLOCK) -> Callable[[SourceBuilder, bytes], None]:
    """Reader of a one-object JSON file projected to one ``event_type`` event.

    ``require`` names a key without which the file yields no event (for
    example a guardrail without a decision).
    """

    def read(builder: SourceBuilder, payload: bytes) -> None:
        document = json_object(builder, payload)
        if document is None:
            return
        if require is not None and require not in document:
            return
        native, key = stamp(document, clock)
        builder.add(event_type, builder.project(projector(document)), index=0, key=key,
                    timestamp=native)

    return read
