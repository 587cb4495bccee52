"""The catalogue of collected sources and their authoritative-copy precedence (T-UAS-058).

Each ``SourceSpec`` names one logical source, its provenance component, and
candidate paths (relative to the downloaded runtime root) in precedence
order.  The first candidate that exists is selected - an existing *empty*
file included, which then suppresses its older copies.  ``fallback`` specs
move on to the next candidate when the selected copy is unusable (for
example ``model.inventory`` takes "the first valid copy").

The catalogue order is the deterministic source enumeration used to break
timestamp ties (T-UAS-057).  The file layout is documented in
``docs/sessions-readers.md``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

FIREWALL_DIRS = ("sandbox/firewall/logs", "sandbox/firewall/audit", "firewall-logs")
"""Replicated AWF log directories, most authoritative first."""

COPILOT_SESSIONS_DIR = "copilot-session-state"
SESSION_DIR_LIMIT = 64
"""Most native Copilot session directories one collection traverses."""


@dataclass(frozen=True)
class Candidate:
    """One candidate path and the phase its copy belongs to."""

    path: str
    phase: str


@dataclass(frozen=True)
class SourceSpec:
    """One logical source of the unified session."""

    name: str
    component: str
    candidates: tuple[Candidate, ...]
    reader: str
    sequential: bool = True
    fallback: bool = False


def _one(path: str, phase: str) -> tuple[Candidate, ...]:
    return (Candidate(path, phase),)


def _firewall(filename: str) -> tuple[Candidate, ...]:
    return tuple(Candidate(f"{d}/{filename}", "agent") for d in FIREWALL_DIRS)


DETECTION_DIR = "threat-detection"
"""Where the threat-detection job's runtime logs are downloaded (this implementation's layout)."""


def _detection_firewall(filename: str) -> tuple[Candidate, ...]:
    # The detection job replicates AWF logs like the agent job: same precedence.
    return tuple(Candidate(f"{DETECTION_DIR}/{d}/{filename}", "detection") for d in FIREWALL_DIRS)


AGENT_CANDIDATES = (
    Candidate("agent-session.jsonl", "agent"),
    Candidate(COPILOT_SESSIONS_DIR, "agent"),
    Candidate("pi-streaming.jsonl", "agent"),
    Candidate("agent-stdio.log", "agent"),
)
"""Agent stream precedence: persisted canonical, native Copilot, Pi, stdio."""

AW_INFO_CANDIDATES = (
    Candidate("agent/aw_info.json", "agent"),
    Candidate("aw_info.json", "agent"),
    Candidate("activation/aw_info.json", "activation"),
    Candidate("usage/aw_info.json", "conclusion"),
)
RUNTIME_AW_INFO = Candidate("runtime/aw_info.json", "agent")
EXIT_CODE_CANDIDATES = ("agent/agent_execution_exit_code.txt", "agent_execution_exit_code.txt")
AGENT_ERRORS_CANDIDATES = ("agent/agent-errors.jsonl", "agent-errors.jsonl")
STDIO_PATH = "agent-stdio.log"

CATALOGUE: tuple[SourceSpec, ...] = (
    SourceSpec("agent", "agent", AGENT_CANDIDATES, "agent"),
    SourceSpec("prompt.system", "agent", _one("aw-prompts/system.txt", "activation"), "prompt.system"),
    SourceSpec("prompt.user", "agent", _one("aw-prompts/user.txt", "activation"), "prompt.user"),
    SourceSpec("workflow.info", "workflow", AW_INFO_CANDIDATES, "aw_info", fallback=True),
    SourceSpec("model_routing.outcome", "model_routing",
               _one("agent/awf-routing-outcome.json", "agent"), "routing_outcome"),
    SourceSpec("model_endpoint.mismatch", "model_endpoint",
               _one("agent/model-endpoint-mismatch.json", "agent"), "endpoint_mismatch"),
    SourceSpec("model.resolution", "model_resolution",
               _one("agent/model-resolution.json", "agent"), "model_resolution"),
    SourceSpec("model.inventory.reflect", "model_inventory",
               (Candidate("agent/awf-reflect.json", "agent"),
                Candidate("sandbox/firewall/awf-reflect.json", "agent")),
               "inventory", fallback=True),
    SourceSpec("model.inventory.models", "model_inventory",
               _one("sandbox/firewall/models.json", "agent"), "inventory"),
    SourceSpec("skill.inventory", "skill",
               (Candidate("activation/skill_inventory.json", "activation"),
                Candidate("skill_inventory.json", "activation")), "skills"),
    SourceSpec("guardrail.daily_aic", "guardrail", _one("activation/daily_aic.json", "activation"),
               "daily_aic"),
    SourceSpec("guardrail.admission", "guardrail",
               _one("activation/guardrail_admission.json", "activation"), "admission"),
    SourceSpec("mcp.configuration", "mcp", _one("mcp-logs/configuration.jsonl", "agent"),
               "mcp_configuration"),
    SourceSpec("mcp.configuration.detection", "mcp",
               _one("threat-detection/mcp-logs/configuration.jsonl", "detection"), "mcp_configuration"),
    SourceSpec("mcp.rpc", "mcp", _one("mcp-logs/rpc-messages.jsonl", "agent"), "mcp_log"),
    SourceSpec("mcp.gateway", "mcp", _one("mcp-logs/gateway.jsonl", "agent"), "mcp_log"),
    SourceSpec("firewall.access", "firewall", _firewall("audit.jsonl"), "http_access"),
    SourceSpec("firewall.token_usage", "firewall", _firewall("token-usage.jsonl"), "token_usage"),
    SourceSpec("firewall.events", "firewall", _firewall("events.jsonl"), "firewall_events"),
    SourceSpec("firewall.model_routing", "firewall", _firewall("model-routing.jsonl"), "model_routing"),
    SourceSpec("firewall.upstream_errors", "firewall", _firewall("upstream-errors.jsonl"),
               "upstream_errors"),
    # Threat-detection traffic: the detection job's own gateway and proxy
    # logs, kept as separate detection-phase observations (never merged with
    # the agent job's copies and never priced as agent requests).
    SourceSpec("mcp.rpc.detection", "mcp", _one(f"{DETECTION_DIR}/mcp-logs/rpc-messages.jsonl", "detection"),
               "mcp_log"),
    SourceSpec("mcp.gateway.detection", "mcp", _one(f"{DETECTION_DIR}/mcp-logs/gateway.jsonl", "detection"),
               "mcp_log"),
    SourceSpec("firewall.access.detection", "firewall", _detection_firewall("audit.jsonl"), "http_access"),
    SourceSpec("firewall.token_usage.detection", "firewall", _detection_firewall("token-usage.jsonl"),
               "token_usage"),
    SourceSpec("firewall.events.detection", "firewall", _detection_firewall("events.jsonl"),
               "firewall_events"),
    SourceSpec("firewall.model_routing.detection", "firewall", _detection_firewall("model-routing.jsonl"),
               "model_routing"),
    SourceSpec("firewall.upstream_errors.detection", "firewall", _detection_firewall("upstream-errors.jsonl"),
               "upstream_errors"),
    SourceSpec("github_api.rate_limit", "github_api",
               (Candidate("github_rate_limits.jsonl", "agent"),
                Candidate("usage/github_rate_limits.jsonl", "conclusion")), "rate_limits"),
    SourceSpec("plugin.installation", "plugin",
               (Candidate("plugin-installations.jsonl", "agent"),
                Candidate("usage/plugin-installations.jsonl", "conclusion")), "plugins"),
    SourceSpec("otel.agent", "otel",
               (Candidate("otel.jsonl", "agent"), Candidate("usage/otel.jsonl", "agent")),
               "otlp", sequential=False),
    SourceSpec("otel.detection", "otel",
               (Candidate("threat-detection/otel.jsonl", "detection"),
                Candidate("usage/threat-detection/otel.jsonl", "detection")),
               "otlp", sequential=False),
    SourceSpec("safe_output.request", "safe_output", _one("safeoutputs/outputs.jsonl", "agent"),
               "safe_output_requests"),
    SourceSpec("safe_output.result", "safe_output",
               _one("safe-outputs/results.jsonl", "safe_outputs"), "safe_output_results"),
    SourceSpec("experiment.assignment", "experiment",
               (Candidate("experiments/assignments.json", "activation"),
                Candidate("usage/experiments/assignments.json", "conclusion")), "assignments"),
    SourceSpec("experiment.state", "experiment", _one("experiments/state.json", "activation"),
               "experiment_state"),
    SourceSpec("usage.report.agent", "usage", _one("usage/agent-usage.jsonl", "agent"), "usage_report"),
    SourceSpec("usage.report.detection", "usage", _one("usage/detection-usage.jsonl", "detection"),
               "usage_report"),
    SourceSpec("usage.report.evals", "usage", _one("usage/evals-usage.jsonl", "evals"), "usage_report"),
    SourceSpec("execution.result", "execution",
               (Candidate("agent/execution.json", "agent"), Candidate("execution.json", "agent")),
               "execution_result"),
    SourceSpec("detection.result", "detection",
               (Candidate("usage/detection/detection_result.json", "detection"),
                Candidate("threat-detection/detection_result.json", "detection")),
               "detection_result"),
    SourceSpec("grader.manifest", "grader", _one("usage/graders/manifest.json", "conclusion"),
               "grader_manifest"),
    SourceSpec("grader.result", "grader", _one("usage/graders/results.jsonl", "conclusion"),
               "grader_results"),
    SourceSpec("eval.result", "eval",
               (Candidate("evals/evals.jsonl", "evals"), Candidate("usage/evals/evals.jsonl", "evals")),
               "eval_results"),
)
"""Every collected source, in enumeration order."""


def is_source_path(relative: str) -> bool:
    """Whether the root-relative POSIX path ``relative`` names a file a collection may read.

    Every catalogued candidate, the runtime ``aw_info.json``, the exit-code and
    agent-errors files, agent stdio and a native Copilot session's
    ``events.jsonl`` (``copilot-session-state/<session>/events.jsonl``).
    Writing the unified file to one of them would replace the evidence it
    was made from.
    """
    parts = relative.split("/")
    if len(parts) == 3 and parts[0] == COPILOT_SESSIONS_DIR and parts[2] == "events.jsonl":
        return True
    return relative in _SOURCE_PATHS


def existing_source_paths(root: Path) -> Iterator[str]:
    """The root-relative paths of the files a collection of ``root`` may read that exist now, as
    :func:`is_source_path` names them: every fixed candidate, then each native Copilot session's
    ``events.jsonl`` (a linked session directory is not listed: the collection does not follow it)."""
    for relative in sorted(_SOURCE_PATHS):
        if os.path.lexists(root / relative):
            yield relative
    sessions = root / COPILOT_SESSIONS_DIR
    try:
        if not stat.S_ISDIR(os.lstat(sessions).st_mode):
            return
        names = sorted(entry.name for entry in os.scandir(sessions))
    except OSError:
        return
    for name in names:
        relative = f"{COPILOT_SESSIONS_DIR}/{name}/events.jsonl"
        if os.path.lexists(root / relative):
            yield relative


_SOURCE_PATHS: frozenset[str] = frozenset(
    {c.path for spec in CATALOGUE for c in spec.candidates if c.path != COPILOT_SESSIONS_DIR}
    | {RUNTIME_AW_INFO.path, STDIO_PATH, *EXIT_CODE_CANDIDATES, *AGENT_ERRORS_CANDIDATES}
)
