"""Typed models of the unified session file ``aw_session.jsonl`` (UAS 3.5, 4.7, 4.8).

The unified file is an *essential-payload projection*: every record is an
envelope ``{"type", "data", "provenance", [id], [parentId], [timestamp]}``
whose known payloads keep only the fields named in section 3.5.  These
TypedDicts are the single description of those payloads: the merger's
projector reads its field lists from them, and ``bitexact.sessions.schema``
generates the Draft-07 schema from them, so the writer and the schema cannot
drift apart.

Conventions
- ``total=False`` + ``Required[...]``: absent fields are unknown, never zero.
- Unified payload keys are camelCase (3.5).  The projector also accepts the
  snake_case spelling of every key, and the extra source spellings listed in
  ``unify.aliases``.
- ``Scalar`` marks runtime values the merger preserves as supplied instead of
  coercing them (3.6: "JSON-compatible values").
- ``Annotated`` markers (``Range``, ``Pattern``, ``MinLength``, ``Unique``)
  become schema keywords; they are checked by the validator, not by Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Required, TypeAlias, TypedDict, Union

MAX_SAFE_INTEGER = 2**53 - 1
FORMAT_VERSION = 1
"""The numeric file-format version written in the ``session.format`` header (T-UAS-064)."""

UNIFIED_PATH = "usage/aw_session.jsonl"
"""Logical artifact path of the unified file, used in collector provenance."""


def whole_number(value: Any) -> int | None:
    """``value`` as the integer Draft-07 takes it for (``1.0`` is the integer 1), else None (a boolean too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


class FormatVersionError(ValueError):
    """A ``session.format`` header's version is not a positive integer, or not one this reader supports."""


def header_version(data: Any) -> int:
    """The checked file-format version of a ``session.format`` header's ``data`` (T-UAS-064).

    The one check every reader of the unified file applies (validate,
    render, compact, import): an integral float is the integer Draft-07 and
    the schema take it for (``1.0`` is version 1); a missing version, a
    boolean, a string or any other number is invalid, and a positive
    integer other than ``FORMAT_VERSION`` unsupported. Raises
    ``FormatVersionError``, whose message each reader frames.
    """
    version = whole_number(data.get("version") if isinstance(data, Mapping) else None)
    if version is None or version < 1:
        raise FormatVersionError("invalid file-format version (a positive integer is required)")
    if version != FORMAT_VERSION:
        raise FormatVersionError(f"unsupported file-format version {version} (supported: {FORMAT_VERSION})")
    return version


def is_format_header(record: Any) -> bool:
    """Whether ``record`` is the collector's ``session.format`` header (a source's own record of that type is not)."""
    if not isinstance(record, Mapping) or record.get("type") != "session.format":
        return False
    provenance = record.get("provenance")
    return isinstance(provenance, Mapping) and provenance.get("component") == "collector"


def supported_header(record: Any) -> bool:
    """Whether ``record`` is a ``session.format`` record whose version passes ``header_version``."""
    if not (isinstance(record, Mapping) and record.get("type") == "session.format"):
        return False
    try:
        header_version(record.get("data"))
    except FormatVersionError:
        return False
    return True


@dataclass(frozen=True)
class Range:
    """Inclusive numeric bounds (``None`` = unbounded)."""

    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Pattern:
    """A regular expression the whole string must match (ECMA-262 compatible)."""

    regex: str


@dataclass(frozen=True)
class MinLength:
    """Minimum string length in characters."""

    length: int


@dataclass(frozen=True)
class Unique:
    """Array items must be unique."""


JSONValue: TypeAlias = Union[None, bool, int, float, str, list[Any], dict[str, Any]]
Scalar: TypeAlias = Union[None, bool, int, float, str]
"""A runtime scalar kept exactly as the source supplied it."""

Count = Annotated[int, Range(0, MAX_SAFE_INTEGER)]
"""SessionCount: a nonnegative safe integer."""
Metric = Annotated[float, Range(0)]
"""SessionMetric: a finite nonnegative number (integers allowed)."""
NonEmpty = Annotated[str, MinLength(1)]
Identifier = Annotated[str, Pattern(r"^[A-Za-z0-9_.:-]{1,64}$")]
"""Identifier-only error fields of T-UAS-082."""
RelativePath = Annotated[
    str, Pattern(r"^(?![/\\])(?!.*(?:^|/)\.\.(?:/|$))(?!.*\\)[^\x00]+$")
]
"""A path relative to the downloaded runtime root: no leading slash, no ``..``."""

Component = Literal[
    "agent",
    "mcp",
    "firewall",
    "safe_output",
    "experiment",
    "grader",
    "eval",
    "usage",
    "execution",
    "detection",
    "workflow",
    "github_api",
    "otel",
    "collector",
    "model_routing",
    "model_endpoint",
    "model_resolution",
    "model_inventory",
    "skill",
    "plugin",
    "guardrail",
]
"""Provenance components (3.5 list plus the 4.7 harness files); never an engine name."""

Phase = Literal[
    "agent", "detection", "activation", "evals", "safe_outputs", "conclusion", "startup", "runtime"
]
"""Provenance phases; ``startup``/``runtime`` are the model/endpoint mismatch record's own phase (4.7)."""


class Provenance(TypedDict, total=False):
    """Where a merged event came from (T-UAS-055)."""

    component: Required[Component]
    phase: Required[Phase]
    path: Required[RelativePath]
    index: Required[Count]
    timestampMs: int
    native: JSONValue


class UnifiedEvent(TypedDict, total=False):
    """One record of ``aw_session.jsonl``."""

    type: Required[NonEmpty]
    data: Required[dict[str, Any]]
    provenance: Required[Provenance]
    id: JSONValue
    parentId: JSONValue
    timestamp: Union[str, int, float]


# ---------------------------------------------------------------- collector


class SessionFormatData(TypedDict, total=False):
    """The leading file-format header (T-UAS-064)."""

    version: Required[Literal[1]]


class CollectionSource(TypedDict, total=False):
    """One selected source in ``session.collection``."""

    source: Required[str]
    component: Required[Component]
    phase: Required[Phase]
    path: Required[RelativePath]
    events: Required[Count]
    untimedEvents: Required[Count]
    warnings: Required[Count]
    empty: Required[bool]


class AbsentSource(TypedDict, total=False):
    """A catalogued source none of whose candidate paths exists."""

    source: Required[str]
    component: Required[Component]
    phase: Required[Phase]
    candidates: Required[list[str]]


class SessionCollectionData(TypedDict, total=False):
    """Coverage of one collection (T-UAS-063)."""

    sources: Required[list[CollectionSource]]
    absentSources: Required[list[AbsentSource]]
    absentComponents: Required[list[str]]
    eventCount: Required[Count]
    untimedEventCount: Required[Count]
    warningCount: Required[Count]


class CollectionWarningData(TypedDict, total=False):
    """One explicit collection diagnostic; never quotes the malformed payload."""

    code: Required[NonEmpty]
    source: Required[str]
    component: Required[Component]
    message: Required[str]
    path: str
    line: Count


# ---------------------------------------------------------------- agent payloads


class UnifiedUsage(TypedDict, total=False):
    """UnifiedSessionUsage: camelCase token accounting of the unified projection."""

    inputTokens: Count
    outputTokens: Count
    reasoningOutputTokens: Count
    cacheReadInputTokens: Count
    cacheCreationInputTokens: Count
    totalTokens: Count
    inputTokensIncludeCache: bool
    overflowedTokens: list[str]


class _Attribution(TypedDict, total=False):
    """Caller/scope identity kept on agent observations (7.1, 7.2, 8.5)."""

    sourceEngine: str
    sessionId: Scalar
    agentId: Scalar
    parentToolCallId: Scalar
    parentToolUseId: Scalar


class InitData(_Attribution, total=False):
    """Agent initialization: engine, model, session ID, cwd; no inventories."""

    model: Scalar
    cwd: str


class MessageData(_Attribution, total=False):
    """Agent message/reasoning/prompt text: exact content, no envelope."""

    content: JSONValue
    messageId: Scalar
    model: Scalar
    partial: bool
    delta: bool
    apiCallId: Scalar
    interactionId: Scalar
    turnId: Scalar
    reasoningEffort: Scalar


class RefusalData(_Attribution, total=False):
    """``assistant.refusal`` essential fields (T-UAS-069)."""

    reason: Required[Literal["refusal", "content_filter"]]
    content: JSONValue
    policyCategory: Union[str, None]
    explanation: Union[str, None]
    partial: bool
    messageId: Scalar
    model: Scalar


class SessionErrorData(_Attribution, total=False):
    """Observed diagnostic fields of a session/provider error."""

    errorType: Scalar
    code: Scalar
    statusCode: Scalar
    message: JSONValue


class ToolStartData(_Attribution, total=False):
    """Tool invocation: correlation, names, one ``input``, command."""

    toolCallId: Scalar
    toolName: Scalar
    mcpServerName: Scalar
    input: JSONValue
    command: JSONValue
    stepIndex: Count
    inputTruncated: bool


class ToolCompleteData(_Attribution, total=False):
    """Tool completion: one ``output``, outcome/error signals, duration, exit code."""

    toolCallId: Scalar
    toolName: Scalar
    mcpServerName: Scalar
    success: bool
    output: JSONValue
    error: JSONValue
    durationMs: Metric
    exitCode: Union[int, None]
    stepIndex: Count


class ToolUpdateData(_Attribution, total=False):
    """Partial tool observation; never a completion."""

    toolCallId: Scalar
    toolName: Scalar
    taskId: Scalar
    taskType: Scalar
    partial: bool
    output: JSONValue
    stepIndex: Count


class MessageUpdateData(_Attribution, total=False):
    """Stream boundary: identity, partial markers, observed usage."""

    messageId: Scalar
    blockIndex: Scalar
    sourceType: Scalar
    partial: bool
    delta: bool
    model: Scalar
    usage: UnifiedUsage


class ResultData(_Attribution, total=False):
    """Agent accounting (``session.result``)."""

    numTurns: Count
    durationMs: Metric
    totalCostUsd: Metric
    status: Scalar
    sourceType: Scalar
    usage: UnifiedUsage
    errors: list[JSONValue]
    permissionDenials: list[JSONValue]
    agentMetrics: JSONValue


class SkillInvokedData(TypedDict, total=False):
    """Observed engine skill invocation / context delivery (T-UAS-072)."""

    skillName: Scalar
    path: Scalar
    source: Scalar
    trigger: Scalar
    model: Scalar
    turn: Scalar
    agentId: Scalar


class PromptData(TypedDict, total=False):
    """Split activation prompt file content (exact)."""

    content: Required[str]


class AgentExecutionData(TypedDict, total=False):
    """The single main-agent execution aggregate (4.8, T-UAS-067)."""

    categories: Required[Annotated[list[NonEmpty], Unique()]]
    errorCodes: Required[list[Union[NonEmpty, Annotated[int, Range(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)]]]]
    errorTypes: Required[Annotated[list[NonEmpty], Unique()]]
    exitCode: Annotated[int, Range(0, 255)]


# ---------------------------------------------------------------- MCP gateway


class McpRpcData(TypedDict, total=False):
    """MCPG REQUEST/RESPONSE flat RPC metadata; no arguments or bodies."""

    serverName: Scalar
    direction: Scalar
    rpcId: Scalar
    callId: Scalar
    requestId: Scalar
    method: Scalar
    toolName: Scalar
    durationMs: Metric
    requestBytes: Count
    responseBytes: Count
    status: Scalar
    reason: Scalar
    errorCode: Scalar
    errorMessage: Scalar
    httpStatus: Scalar
    retryHint: Scalar


class McpDiagnosticData(TypedDict, total=False):
    """DIFC filter / guard block / other gateway messages."""

    event: Scalar
    level: Scalar
    serverName: Scalar
    method: Scalar
    toolName: Scalar
    rpcId: Scalar
    requestId: Scalar
    status: Scalar
    reason: Scalar
    message: Scalar
    durationMs: Metric
    errorCode: Scalar
    errorMessage: Scalar


class McpServerConfig(TypedDict, total=False):
    """Sanitized server entry of ``mcp.configuration``."""

    serverName: Required[str]
    transport: Literal["stdio", "http", "sse", "streamable-http", "docker", "local", "remote"]
    required: bool
    tools: list[str]


class McpConfigurationData(TypedDict, total=False):
    """Pre-startup gateway inventory; configuration, not connection success."""

    servers: Required[list[McpServerConfig]]


# ---------------------------------------------------------------- firewall


class HttpAccessData(TypedDict, total=False):
    """AWF network audit observation (operational entries may lack a host)."""

    host: Scalar
    method: Scalar
    status: Scalar
    decision: Scalar
    bytes: Scalar
    durationMs: Scalar
    requestId: Scalar


class SteeringNotice(TypedDict, total=False):
    """The AWF notice delivered on a request (T-UAS-071)."""

    type: Required[Literal["ai_credit", "timeout", "token"]]
    threshold: Required[Literal[80, 90, 95, 99]]


class TokenUsageData(TypedDict, total=False):
    """``firewall.token_usage`` / ``usage.report`` accounting (T-UAS-070/071)."""

    provider: Scalar
    model: Scalar
    purpose: Scalar
    path: Scalar
    xInitiator: Scalar
    requestId: Scalar
    status: Scalar
    durationMs: Metric
    aic: Metric
    totalAic: Metric
    cumulativeAic: Metric
    checkpointAic: Metric
    premiumRequests: Metric
    steering: SteeringNotice
    usage: UnifiedUsage
    stepIndex: Count
    sessionId: Scalar
    agentId: Scalar


class SteeringData(TypedDict, total=False):
    """AWF steering event-log entries."""

    event: Scalar
    threshold: Scalar
    level: Scalar
    message: Scalar
    reason: Scalar
    requestId: Scalar


class FirewallEventData(TypedDict, total=False):
    """Other AWF tracker/firewall messages (and unknown ``<component>.event`` kinds)."""

    event: Scalar
    level: Scalar
    status: Scalar
    message: Scalar
    reason: Scalar
    requestId: Scalar


class RankedChoice(TypedDict, total=False):
    """One AWF route choice; ``rank`` is its one-based array position."""

    rank: Required[Annotated[int, Range(1, MAX_SAFE_INTEGER)]]
    id: Scalar
    model: Scalar
    effort: Scalar


class ModelRoutingData(TypedDict, total=False):
    """Essential ``firewall.model_routing`` selection/request fields."""

    schema: Scalar
    stage: Scalar
    purpose: Scalar
    attempt: Scalar
    classifierModel: Scalar
    classifierEffort: Scalar
    objective: Scalar
    provider: Scalar
    labels: JSONValue
    mode: Scalar
    classifierAttempts: Scalar
    degradedClassification: Scalar
    selectedId: Scalar
    selectedProvider: Scalar
    selectedModel: Scalar
    selectedEffort: Scalar
    wireModel: Scalar
    endpoint: Scalar
    router: Scalar
    latencyMs: Scalar
    code: Scalar
    requestId: Scalar
    routed: Scalar
    outcome: Scalar
    deviations: JSONValue
    requestedModel: Scalar
    requestedEffort: Scalar
    rankedChoices: list[RankedChoice]
    eligibleChoices: Count
    catalogueOverlap: Count
    selectedEndpoint: Scalar
    requestedEndpoint: Scalar
    upstreamEndpoint: Scalar
    unavailable: list[str]
    status: Scalar
    phase: Scalar
    errorCode: Identifier
    errorType: Identifier
    errorSource: Literal["upstream", "awf"]


class UpstreamErrorData(TypedDict, total=False):
    """Identifier-only proxy error (T-UAS-082)."""

    requestId: Scalar
    provider: Scalar
    model: Scalar
    httpStatus: Scalar
    errorCode: Identifier
    errorType: Identifier
    errorParam: Identifier


# ---------------------------------------------------------------- models / routing


class CompactModelRouting(TypedDict, total=False):
    """``workflow.info.modelRouting``: no free-form detail (T-UAS-070)."""

    status: Scalar
    source: Scalar
    provider: Scalar
    wireModel: Scalar
    model: Scalar
    effort: Scalar
    appliedEffort: Scalar
    effectiveEndpoint: Scalar
    selectedEndpoint: Scalar
    mode: Scalar
    selectedId: Scalar
    routerVersion: Scalar
    failureCode: Scalar


class RoutingOutcomeData(TypedDict, total=False):
    """``model_routing.outcome`` from ``agent/awf-routing-outcome.json``."""

    status: Scalar
    wireModel: Scalar
    effectiveEndpoint: Scalar
    selectedEndpoint: Scalar
    effort: Scalar
    appliedEffort: Scalar
    failureCode: Scalar


class EndpointMismatchData(TypedDict, total=False):
    """``model_endpoint.mismatch`` (4.7 model/endpoint mismatch contract)."""

    category: Required[Literal["model_endpoint_mismatch"]]
    phase: Required[Literal["startup", "runtime"]]
    configuredModel: Required[str]
    resolvedModel: Required[str]
    wireApi: Required[str]
    wireApiSource: Required[str]
    detail: Required[str]
    fix: Required[str]
    supportedEndpoints: Required[list[str]]
    model: str
    endpoint: str


class ModelResolutionData(TypedDict, total=False):
    """One runner-written ``model.resolution`` record (T-UAS-074)."""

    engine: Required[NonEmpty]
    role: Required[NonEmpty]
    configuredModel: Required[NonEmpty]
    resolvedModel: Required[Union[str, None]]
    provider: Required[Union[str, None]]
    status: Required[Literal["resolved", "exact", "failed"]]
    cause: Required[Union[Literal["model_unavailable", "catalog_unavailable"], None]]


EffortToken = Annotated[str, Pattern(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]


class RoutingModel(TypedDict, total=False):
    """A routing model entry of one inventory endpoint (T-UAS-075)."""

    modelId: Required[Annotated[str, Pattern(r"\S")]]
    supportedEndpoints: list[Annotated[str, Pattern(r"\S")]]
    supportedReasoningEfforts: list[EffortToken]
    contextWindowTokens: Annotated[int, Range(1, MAX_SAFE_INTEGER)]


class InventoryEndpoint(TypedDict, total=False):
    """One AWF provider endpoint, in source order (T-UAS-075)."""

    provider: Required[Annotated[str, Pattern(r"\S")]]
    configured: bool
    models: list[Annotated[str, Pattern(r"\S")]]
    routingModels: list[RoutingModel]


class ModelInventoryData(TypedDict, total=False):
    """``model.inventory``: AWF runtime model list."""

    endpoints: Required[list[InventoryEndpoint]]
    modelsFetchComplete: bool


class RoutingPolicy(TypedDict, total=False):
    """``model.config.routing`` (T-UAS-080)."""

    enabled: Required[bool]
    goal: Scalar
    mode: Scalar
    allowedModels: list[str]


class ModelPolicy(TypedDict, total=False):
    """``model.config.models`` allow/block policy."""

    allowed: list[str]
    blocked: list[str]


class ModelConfigData(TypedDict, total=False):
    """Runner-written configured routing/model policy (T-UAS-080)."""

    routing: Required[RoutingPolicy]
    models: ModelPolicy
    maxAiCredits: Metric
    maxAiCreditsSource: Literal["frontmatter", "default", "admission"]
    baselineModel: str


class BaselineEstimateData(TypedDict, total=False):
    """Counterfactual baseline repricing of main-agent requests (T-UAS-081)."""

    estimated: Required[Literal[True]]
    baselineModel: str
    aic: Metric
    mainRequests: Required[Count]
    pricedRequests: Required[Count]
    unpricedRequests: Required[Count]
    unattributedRequests: Required[Count]
    complete: Required[bool]


# ---------------------------------------------------------------- workflow


class Episode(TypedDict, total=False):
    """Recorded caller lineage projected from ``aw_info.json.context``."""

    episodeId: JSONValue
    hopId: JSONValue
    parentHopId: JSONValue
    originEvent: JSONValue
    rootRepo: JSONValue
    rootWorkflowId: JSONValue
    rootRunId: JSONValue
    parentRepo: JSONValue
    parentRunId: JSONValue
    parentRunAttempt: JSONValue
    parentWorkflowId: JSONValue
    parentWorkflowCallId: JSONValue
    parentEventType: JSONValue


class WorkflowInfoData(TypedDict, total=False):
    """Run metadata from runner-owned ``aw_info.json`` (3.5, 4.7, T-UAS-070/080)."""

    engineId: Scalar
    engineName: Scalar
    engineHarness: Scalar
    agentVersion: Scalar
    cliVersion: Scalar
    awfVersion: Scalar
    mcpgVersion: Scalar
    model: Scalar
    requestedModel: Scalar
    modelRouting: CompactModelRouting
    triggerType: Scalar
    dryRun: Scalar
    staged: Scalar
    workflowName: Scalar
    workflowId: Scalar
    workflowRef: Scalar
    callerWorkflowRef: Scalar
    workflowCallId: Scalar
    repository: Scalar
    runId: Scalar
    runNumber: Scalar
    runAttempt: Scalar
    ref: Scalar
    sha: Scalar
    actor: Scalar
    targetRepo: Scalar
    serverUrl: Scalar
    awContext: JSONValue
    episode: Union[Episode, None]


class JobResultData(TypedDict, total=False):
    """One direct dependency outcome of the conclusion job."""

    jobId: Required[NonEmpty]
    result: Required[Literal["success", "failure", "cancelled", "skipped"]]
    durationMs: Metric


class ShutdownData(_Attribution, total=False):
    """Copilot ``session.shutdown`` compacted to lifecycle and request counters (7.2).

    Accounting details (``agentMetrics``, ``modelMetrics``, usage, costs) are
    not copied: they live in ``session.result`` (the adapter exposes
    ``agentMetrics`` there as the authoritative snapshot).  Field names are
    the Copilot CLI's shutdown payload; the specification names none.
    """

    shutdownType: Scalar
    reason: Scalar
    errorReason: Scalar
    sessionStartTime: Scalar
    totalPremiumRequests: Metric
    totalApiDurationMs: Metric
    totalRequests: Count
    currentModel: Scalar


class ExecutionResultData(TypedDict, total=False):
    """Recorded execution evidence."""

    outcome: Scalar
    conclusion: Scalar
    exitCode: Scalar
    durationMs: Metric
    startedAt: Scalar
    finishedAt: Scalar


class DetectionResultData(TypedDict, total=False):
    """Detection job result and verdict flags; no transcript or free-form reasons."""

    jobResult: Scalar
    conclusion: Scalar
    reason: Scalar
    promptInjection: bool
    secretLeak: bool
    maliciousPatch: bool


class DailyAicData(TypedDict, total=False):
    """Activation's daily AI Credits decision."""

    status: Scalar
    exceeded: bool
    total: Metric
    estimated: Metric
    threshold: Metric


class AdmissionData(TypedDict, total=False):
    """Guardrail admission decision."""

    status: Scalar
    maxAiCredits: Metric
    threatDetectionMaxAiCredits: Metric
    evalsMaxAiCredits: Metric


class RateLimitData(TypedDict, total=False):
    """GitHub API rate-limit observation; no credentials."""

    source: Literal["response_headers", "rate_limit_api", "retry"]
    operation: Scalar
    resource: Scalar
    limit: Scalar
    remaining: Scalar
    used: Scalar
    reset: Scalar
    retry: Scalar
    retryAfter: Scalar
    attempt: Scalar
    credentialSource: Scalar


class PluginInstallationData(TypedDict, total=False):
    """Successful plugin installation."""

    plugin: Scalar
    repository: Scalar
    ref: Scalar
    path: Scalar
    status: Required[Literal["installed"]]


class SkillEntry(TypedDict, total=False):
    """One installed skill; never its content."""

    name: Required[str]
    source: Scalar
    scope: Scalar
    sha256: Scalar
    purpose: Scalar


class SkillInventoryData(TypedDict, total=False):
    """Activation skill inventory (T-UAS-072)."""

    skills: Required[list[SkillEntry]]


class SkillConflictEntry(TypedDict, total=False):
    """One party of a skill conflict."""

    source: Scalar
    scope: Scalar
    kind: Scalar


class SkillConflictData(TypedDict, total=False):
    """Advisory exact-name or cross-scope conflict."""

    name: Required[str]
    kind: Required[Literal["exact_name", "scope"]]
    entries: Required[list[SkillConflictEntry]]


# ---------------------------------------------------------------- downstream


class SafeOutputError(TypedDict, total=False):
    """A structured safe-output error: type, code and message only."""

    type: Scalar
    code: Scalar
    message: Scalar


class SafeOutputData(TypedDict, total=False):
    """Requested or executed safe-output identity; no title/body/payload."""

    operation: Scalar
    repository: Scalar
    number: Scalar
    provider: Scalar
    identifier: Scalar
    url: Scalar
    status: Scalar
    errors: list[SafeOutputError]


class ExperimentData(TypedDict, total=False):
    """Experiment assignment/state observation."""

    runId: Scalar
    experiment: Scalar
    assignments: dict[str, JSONValue]
    counts: JSONValue


class GraderSpec(TypedDict, total=False):
    """A grader definition without its script."""

    id: Scalar
    name: Scalar
    source: Scalar
    enabled: Scalar
    min: Scalar
    max: Scalar
    unit: Scalar
    threshold: Scalar
    direction: Scalar
    implementation: JSONValue


class GraderManifestData(TypedDict, total=False):
    """Deterministic grader definitions."""

    version: Scalar
    graders: list[GraderSpec]


class GraderRun(TypedDict, total=False):
    """``grader.result.run`` summary."""

    id: Scalar
    attempt: Scalar
    graderCount: Scalar
    passed: Scalar
    failed: Scalar
    errors: Scalar


class GraderResultData(TypedDict, total=False):
    """Essential grader result fields."""

    id: Scalar
    name: Scalar
    source: Scalar
    status: Scalar
    value: Scalar
    score: Scalar
    unit: Scalar
    passed: Scalar
    direction: Scalar
    threshold: Scalar
    enabled: Scalar
    min: Scalar
    max: Scalar
    version: Scalar
    decision: Scalar
    severity: Scalar
    error: Scalar
    messages: list[Scalar]
    metrics: list[dict[str, Scalar]]
    implementation: JSONValue
    run: GraderRun


class EvalResultData(TypedDict, total=False):
    """Evals JSONL observation; never the question."""

    id: Scalar
    answer: Scalar
    model: Scalar
    error: Scalar
    runId: Scalar
    runAttempt: Scalar
    experiments: JSONValue


# ---------------------------------------------------------------- OpenTelemetry


class OtelSpanData(TypedDict, total=False):
    """Expanded OTLP span with its resource/scope context."""

    traceId: Scalar
    spanId: Scalar
    parentSpanId: Scalar
    name: Scalar
    kind: Scalar
    startTimeUnixNano: Scalar
    endTimeUnixNano: Scalar
    status: JSONValue
    attributes: JSONValue
    links: JSONValue
    resource: JSONValue
    scope: JSONValue


class OtelSpanEventData(TypedDict, total=False):
    """A span event as a separate observation."""

    traceId: Scalar
    spanId: Scalar
    name: Scalar
    timeUnixNano: Scalar
    attributes: JSONValue
    resource: JSONValue
    scope: JSONValue


class OtelLogData(TypedDict, total=False):
    """An OTLP log record with its context."""

    traceId: Scalar
    spanId: Scalar
    timeUnixNano: Scalar
    observedTimeUnixNano: Scalar
    severityNumber: Scalar
    severityText: Scalar
    body: JSONValue
    attributes: JSONValue
    resource: JSONValue
    scope: JSONValue


UNIFIED_EVENT_DATA: dict[str, type] = {
    "session.collection": SessionCollectionData,
    "session.collection_warning": CollectionWarningData,
    "session.init": InitData,
    "user.message": MessageData,
    "assistant.message": MessageData,
    "assistant.reasoning": MessageData,
    "assistant.refusal": RefusalData,
    "assistant.message_update": MessageUpdateData,
    "session.error": SessionErrorData,
    "tool.execution_start": ToolStartData,
    "tool.execution_complete": ToolCompleteData,
    "tool.execution_update": ToolUpdateData,
    "session.result": ResultData,
    "session.shutdown": ShutdownData,
    "skill.invoked": SkillInvokedData,
    "skill.context_delivered_ref": SkillInvokedData,
    "prompt.system": PromptData,
    "prompt.user": PromptData,
    "agent.execution": AgentExecutionData,
    "mcp.rpc.request": McpRpcData,
    "mcp.rpc.response": McpRpcData,
    "mcp.tool_call": McpRpcData,
    "mcp.difc.filtered": McpDiagnosticData,
    "mcp.guard.blocked": McpDiagnosticData,
    "mcp.event": McpDiagnosticData,
    "mcp.configuration": McpConfigurationData,
    "firewall.http_access": HttpAccessData,
    "firewall.token_usage": TokenUsageData,
    "usage.report": TokenUsageData,
    "firewall.steering": SteeringData,
    "firewall.event": FirewallEventData,
    "plugin.event": FirewallEventData,
    "firewall.model_routing": ModelRoutingData,
    "firewall.upstream_error": UpstreamErrorData,
    "model_routing.outcome": RoutingOutcomeData,
    "model_endpoint.mismatch": EndpointMismatchData,
    "model.resolution": ModelResolutionData,
    "model.inventory": ModelInventoryData,
    "model.config": ModelConfigData,
    "model.baseline_estimate": BaselineEstimateData,
    "workflow.info": WorkflowInfoData,
    "workflow.job_result": JobResultData,
    "execution.result": ExecutionResultData,
    "detection.result": DetectionResultData,
    "guardrail.daily_aic": DailyAicData,
    "guardrail.admission": AdmissionData,
    "github_api.rate_limit": RateLimitData,
    "plugin.installation": PluginInstallationData,
    "skill.inventory": SkillInventoryData,
    "skill.conflict": SkillConflictData,
    "safe_output.request": SafeOutputData,
    "safe_output.result": SafeOutputData,
    "safe_output.error": SafeOutputData,
    "experiment.state": ExperimentData,
    "experiment.assignment": ExperimentData,
    "grader.manifest": GraderManifestData,
    "grader.result": GraderResultData,
    "eval.result": EvalResultData,
    "otel.span": OtelSpanData,
    "otel.span_event": OtelSpanEventData,
    "otel.log": OtelLogData,
}
"""UnifiedSessionEventDataMap: every known projection type -> its payload model.

Types not listed here (native extensions such as ``vendor.progress``,
``session.info``, ``subagent.*``) stay opaque objects.  ``session.format`` is
not listed: the collector header has its own schema (``FormatHeader``) and a
source-native ``session.format`` stays an ordinary opaque observation.
"""

CLOSED_PAYLOADS: frozenset[str] = frozenset(UNIFIED_EVENT_DATA)
"""Known essential payloads are closed: the schema refuses extra keys (3.6)."""
