"""Runner-owned workflow metadata: ``workflow.info``, ``model.config``, routing and
model-resolution harness records, and conclusion job results (UAS 3.5, 4.7).

Only runner-written files supply these projections; nothing is inferred from
the collector's own environment except the job-result snapshot that
conclusion receives explicitly (``GH_AW_JOB_RESULTS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from bitexact.canon import loads
from bitexact.errors import StrictJSONError
from bitexact.sessions import unified_model as um
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.decode import json_document, json_object
from bitexact.sessions.unify.project import MISSING, Projector, first_present, is_count

# ----------------------------------------------------------------- workflow.info

ROUTING = Projector(um.CompactModelRouting)
OUTCOME = Projector(um.RoutingOutcomeData)


def compact_routing(value: Any) -> Any:
    """``modelRouting``: the listed identifiers only, never free-form detail."""
    if not isinstance(value, dict):
        return MISSING
    return ROUTING(value).data


def _origin(url: Any) -> Any:
    if not isinstance(url, str):
        return MISSING
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return MISSING
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def _aw_context(value: Any) -> Any:
    # Webhook batches keep affected items and delivery IDs, never each
    # delivery's raw payload (3.5, caller context).
    if not isinstance(value, dict) or not isinstance(value.get("deliveries"), list):
        return value
    deliveries = [
        {k: v for k, v in d.items() if k != "payload"} if isinstance(d, dict) else d
        for d in value["deliveries"]
    ]
    return {**value, "deliveries": deliveries}


_LINEAGE = (
    ("episodeId", "episode_id"), ("hopId", "hop_id"), ("parentHopId", "parent_hop_id"),
    ("originEvent", "origin_event"), ("rootRepo", "root_repo"),
    ("rootWorkflowId", "root_workflow_id"), ("rootRunId", "root_run_id"),
    ("parentRepo", "repo"), ("parentRunId", "run_id"), ("parentRunAttempt", "run_attempt"),
    ("parentWorkflowId", "workflow_id"), ("parentWorkflowCallId", "workflow_call_id"),
    ("parentEventType", "event_type"),
)
EPISODE = Projector(um.Episode)


def _episode(info: Mapping[str, Any], context: Any) -> Any:
    if "episode" in info:  # explicit normalized values win, including null
        episode = info["episode"]
        return None if episode is None else (EPISODE(episode).data if isinstance(episode, dict) else MISSING)
    if not isinstance(context, dict):
        return MISSING
    out = {target: context[source] for target, source in _LINEAGE if source in context}
    return out or MISSING


_INFO_FIELDS = (
    ("engineId", ("engine_id", "engineId")),
    ("engineName", ("engine_name", "engineName")),
    ("engineHarness", ("engine_harness", "engineHarness")),
    ("agentVersion", ("agent_version", "agentVersion")),
    ("cliVersion", ("cli_version", "cliVersion")),
    ("awfVersion", ("awf_version", "awfVersion")),
    ("mcpgVersion", ("mcpg_version", "mcpgVersion")),
    ("model", ("model",)),
    ("requestedModel", ("requested_model", "requestedModel", "model")),
    ("triggerType", ("event_name", "trigger_type", "triggerType")),
    ("dryRun", ("dry_run", "dryRun")),
    ("staged", ("staged",)),
    ("workflowName", ("workflow_name", "workflowName")),
    ("workflowId", ("workflow_ref", "workflowRef")),
    ("workflowRef", ("workflow_ref", "workflowRef")),
    ("callerWorkflowRef", ("caller_workflow_ref", "callerWorkflowRef")),
    ("workflowCallId", ("workflow_call_id", "workflowCallId")),
    ("repository", ("repository", "repo")),
    ("runId", ("run_id", "runId")),
    ("runNumber", ("run_number", "runNumber")),
    ("runAttempt", ("run_attempt", "runAttempt")),
    ("ref", ("ref",)),
    ("sha", ("sha",)),
    ("actor", ("actor",)),
    ("targetRepo", ("target_repo", "targetRepo")),
)
_INFO_CHECK = Projector(um.WorkflowInfoData)


def workflow_info(info: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The ``workflow.info`` payload of one ``aw_info.json`` and the refused keys."""
    lookup: dict[str, Any] = {}
    for target, spellings in _INFO_FIELDS:
        value = first_present(info, *spellings)
        if value is not MISSING:
            lookup[target] = value
    routing = compact_routing(first_present(info, "model_routing", "modelRouting"))
    if routing is not MISSING:
        lookup["modelRouting"] = routing
    server = _origin(first_present(info, "server_url", "serverUrl"))
    if server is not MISSING:
        lookup["serverUrl"] = server
    context = first_present(info, "aw_context", "awContext", "context")
    if context is not MISSING:
        lookup["awContext"] = _aw_context(context)
    episode = _episode(info, context if context is not MISSING else None)
    if episode is not MISSING:
        lookup["episode"] = episode
    projection = _INFO_CHECK(lookup)
    return projection.data, projection.refused


def run_identity(info: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """Recorded ``(run_id, run_attempt)`` of the current run (either may be ``None``)."""
    if not isinstance(info, dict):
        return None, None
    run_id = first_present(info, "run_id", "runId")
    attempt = first_present(info, "run_attempt", "runAttempt")
    return (None if run_id is MISSING else run_id, None if attempt is MISSING else attempt)


# ----------------------------------------------------------------- model.config


def _string_list(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def model_config(raw: Any) -> dict[str, Any] | None:
    """Validated ``model.config`` payload of ``aw_info.model_config``, or ``None`` if invalid."""
    if not isinstance(raw, dict):
        return None
    routing = raw.get("routing")
    if not isinstance(routing, dict) or not isinstance(routing.get("enabled"), bool):
        return None
    out_routing: dict[str, Any] = {"enabled": routing["enabled"]}
    for target, source in (("goal", "goal"), ("mode", "mode")):
        if source in routing:
            if isinstance(routing[source], (dict, list)):
                return None
            out_routing[target] = routing[source]
    allowed = first_present(routing, "allowed_models", "allowedModels")
    if allowed is not MISSING:
        if not _string_list(allowed):
            return None
        out_routing["allowedModels"] = list(allowed)
    out: dict[str, Any] = {"routing": out_routing}
    if "models" in raw:
        models = raw["models"]
        if not isinstance(models, dict):
            return None
        policy = {}
        for key in ("allowed", "blocked"):
            if key in models:
                if not _string_list(models[key]):
                    return None
                policy[key] = list(models[key])
        out["models"] = policy
    credits = first_present(raw, "max_ai_credits", "maxAiCredits")
    if credits is not MISSING:
        if isinstance(credits, bool) or not isinstance(credits, (int, float)) or credits < 0:
            return None
        out["maxAiCredits"] = credits
    source = first_present(raw, "max_ai_credits_source", "maxAiCreditsSource")
    if source is not MISSING:
        if source not in ("frontmatter", "default", "admission"):
            return None
        out["maxAiCreditsSource"] = source
    baseline = first_present(raw, "baseline_model", "baselineModel")
    if baseline is not MISSING:
        if not isinstance(baseline, str) or not baseline or baseline == "auto":
            return None
        out["baselineModel"] = baseline
    return out


# ----------------------------------------------------------------- harness records


def read_routing_outcome(builder: SourceBuilder, payload: bytes) -> None:
    """``agent/awf-routing-outcome.json`` -> ``model_routing.outcome`` (no detail)."""
    document = json_object(builder, payload)
    if document is None:
        return
    builder.add("model_routing.outcome", builder.project(OUTCOME(document)), index=0)


_MISMATCH_STRINGS = (
    ("configuredModel", "configured_model"), ("resolvedModel", "resolved_model"),
    ("wireApi", "wire_api"), ("wireApiSource", "wire_api_source"), ("detail", "detail"),
    ("fix", "fix"),
)


def endpoint_mismatch(record: Any) -> dict[str, Any] | None:
    """Validated ``model_endpoint.mismatch`` payload, or ``None`` when the contract fails."""
    if not isinstance(record, dict) or record.get("category") != "model_endpoint_mismatch":
        return None
    if record.get("phase") not in ("startup", "runtime"):
        return None
    out: dict[str, Any] = {"category": "model_endpoint_mismatch", "phase": record["phase"]}
    for target, source in _MISMATCH_STRINGS:
        if not isinstance(record.get(source), str):
            return None
        out[target] = record[source]
    endpoints = record.get("supported_endpoints")
    if not _string_list(endpoints):
        return None
    out["supportedEndpoints"] = list(endpoints)
    for name in ("model", "endpoint"):
        if name in record:
            if not isinstance(record[name], str):
                return None
            out[name] = record[name]
    return out


def read_endpoint_mismatch(builder: SourceBuilder, payload: bytes) -> None:
    """One harness JSON record; arrays or contract violations only warn."""
    document = json_document(builder, payload)
    if document is MISSING:
        return
    data = endpoint_mismatch(document)
    if data is None:
        builder.warn("invalid_model_endpoint_mismatch", "record violates the mismatch contract; no event")
        return
    builder.add("model_endpoint.mismatch", data, index=0, phase=data["phase"])


def model_resolution(record: Any) -> dict[str, Any] | None:
    """Validated ``model.resolution`` payload (T-UAS-074), or ``None``."""
    if not isinstance(record, dict):
        return None
    out: dict[str, Any] = {}
    for target, source in (("engine", "engine"), ("role", "role"), ("configuredModel", "configured_model")):
        value = record.get(source)
        if not isinstance(value, str) or not value:
            return None
        out[target] = value
    for target, source in (("resolvedModel", "resolved_model"), ("provider", "provider")):
        value = record.get(source, MISSING)
        if value is MISSING or not (value is None or isinstance(value, str)):
            return None
        out[target] = value
    status, cause = record.get("status"), record.get("cause", MISSING)
    if status not in ("resolved", "exact", "failed") or cause is MISSING:
        return None
    if status == "failed":
        if cause not in ("model_unavailable", "catalog_unavailable") or out["resolvedModel"] is not None:
            return None
    elif cause is not None:
        return None
    out["status"], out["cause"] = status, cause
    return out


def read_model_resolution(builder: SourceBuilder, payload: bytes) -> None:
    """``agent/model-resolution.json``: one event per record, all or nothing."""
    document = json_document(builder, payload)
    if document is MISSING:
        return
    if not isinstance(document, list) or not document:
        builder.warn("invalid_model_resolution", "expected a non-empty JSON array; no events")
        return
    records = [model_resolution(r) for r in document]
    bad = [i for i, r in enumerate(records) if r is None]
    if bad:
        builder.warn("invalid_model_resolution", f"record(s) {bad} violate the contract; no events")
        return
    for index, data in enumerate(records):
        assert data is not None
        builder.add("model.resolution", data, index=index)


# ----------------------------------------------------------------- job results

_JOB_RESULTS = ("success", "failure", "cancelled", "skipped")


def read_job_results(builder: SourceBuilder, results_json: str, durations_json: str | None) -> None:
    """Conclusion's ``needs`` snapshot -> ``workflow.job_result`` in job-ID order.

    ``results_json`` is the variable's raw text. It is decoded first and the decoded value redacted
    (T-UAS-060: redaction processes decoded strings, object keys included): matched on the raw text, a
    credential or registered mask written with a JSON escape inside it (``\\u0067hp_...``, ``\\"``,
    ``\\/``) came through as a job ID, and a mask holding a quote could break the JSON it was replaced in.
    Records are in the order of the job IDs as written (redacted); durations are found by the IDs as sent.
    """
    try:
        decoded = loads(results_json)
    except StrictJSONError:
        builder.warn("malformed_job_results", "GH_AW_JOB_RESULTS is not valid JSON; no job results")
        return
    if not isinstance(decoded, dict):
        builder.warn("malformed_job_results", "GH_AW_JOB_RESULTS is not a JSON object; no job results")
        return
    redacted = builder.redact(decoded)
    # The redactor keeps a dict's order and gives two keys masked alike distinct names: one shown ID per job.
    shown = dict(zip(redacted, decoded))  # shown (redacted) job ID -> the ID as sent
    needs = {job_id: redacted[job_id] for job_id in shown}
    durations: Mapping[str, Any] = {}
    if durations_json:
        try:
            parsed = loads(durations_json)
            durations = parsed if isinstance(parsed, dict) else {}
            if not isinstance(parsed, dict):
                builder.warn("malformed_job_durations", "job durations are not a JSON object; omitted")
        except StrictJSONError:
            builder.warn("malformed_job_durations", "job durations are not valid JSON; omitted")
    index = 0
    for job_id in sorted(needs):
        entry = needs[job_id]
        result = entry.get("result") if isinstance(entry, dict) else None
        if not job_id or result not in _JOB_RESULTS:
            builder.warn("malformed_job_result", f"job {index}: missing or unknown result; omitted")
            continue
        data: dict[str, Any] = {"jobId": job_id, "result": result}
        duration = durations.get(shown[job_id], MISSING)
        # Skipped jobs and invalid durations omit timing rather than report zero.
        if result != "skipped" and duration is not MISSING and is_count(duration):
            data["durationMs"] = duration
        builder.add("workflow.job_result", data, index=index)
        index += 1
