"""Which entry kind each canonical session event becomes (docs/sessions-evidence.md)."""

from __future__ import annotations

from typing import Final

IMPORTER: Final[str] = "bitexact.sessions.evidence/1"
"""Names this importer and the version of its mapping and data layout (recorded in run_meta)."""

UNIFIED: Final[str] = "unified"
"""The ``engine`` value of a unified ``aw_session.jsonl`` (also accepted by ``--engine``)."""

MAX_SAFE_INTEGER: Final[int] = 2**53 - 1


EXACT_KINDS: Final[dict[str, str]] = {
    "session.init": "context",
    "session.result": "model",
    "session.error": "model",
    "subagent.request": "model",
    "usage.report": "model",
    "firewall.token_usage": "model",
    "firewall.model_routing": "model",
    "firewall.upstream_error": "model",
    "guardrail.daily_aic": "model",
    "mcp.tool_call": "tool_call",
    "mcp.rpc.request": "tool_call",
    "mcp.rpc.response": "tool_call",
    "skill.invoked": "context",
    "skill.context_delivered_ref": "context",
}
"""Event types mapped by their exact name (checked before the namespaces)."""

NAMESPACE_KINDS: Final[tuple[tuple[str, str], ...]] = (
    ("tool.", "tool_call"),
    ("subagent.", "tool_call"),
    ("safe_output.", "tool_call"),
    ("user.", "context"),
    ("assistant.", "context"),
    ("prompt.", "context"),
    ("model.", "model"),
    ("model_routing.", "model"),
    ("model_endpoint.", "model"),
    ("turn.", "model"),
)
"""Event type prefixes and their kind, for types no exact name covers."""

FALLBACK_KIND: Final[str] = "marker"
"""Everything else (lifecycle notices, runtime, workflow and unknown native
events) is an annotation of the run: a ``marker``."""

EVENT_PROV: Final[str] = "asserted"


def kind_for(event_type: str) -> str:
    """The entry kind an event of ``event_type`` is recorded as.

    Every result allows ``asserted`` provenance; ``http_call`` (observed
    only) is never produced.
    """
    exact = EXACT_KINDS.get(event_type)
    if exact is not None:
        return exact
    for prefix, kind in NAMESPACE_KINDS:
        if event_type.startswith(prefix):
            return kind
    return FALLBACK_KIND
