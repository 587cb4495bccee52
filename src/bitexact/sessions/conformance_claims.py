"""Machine-readable conformance claims of the session parsers (T-UAS-001/002).

``CLAIMS`` states the conformance class, the engines and source signatures
covered, and every applicable requirement that is *not* fully met, with the
reason.  A requirement listed in ``PARTIAL`` or ``NOT_MET`` is not claimed:
per section 2.2 a partial implementation is nonconforming for that
requirement.  The test suite checks these lists against the test markers so
that a claim without a test, or a test of an unclaimed requirement, shows up.
"""

from __future__ import annotations

from typing import Final

CONFORMANCE_CLASS: Final = "P"
"""Parser/normalizer (UAS 2.2).  Classes R, B, M, Q and F are not claimed here."""

ENGINES: Final = ("claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor")
"""Engines with an adapter (section 7)."""

APPLICABLE: Final = tuple(f"T-UAS-{n:03d}" for n in [*range(1, 42), 44, 51, 52, 68, 69])
"""Requirement IDs of 9.2 that apply to class P (sections 2-7 and the parser
rows of 9)."""

PARTIAL: Final[dict[str, str]] = {
    "T-UAS-036": (
        "Claude: caller identity is scoped by the observed parent_tool_use_id/agentId only; it is "
        "never inferred from launcher observations (the spec allows inference when unambiguous), and a "
        "changed parent on a notification does not invalidate a stored caller."
    ),
    "T-UAS-037": (
        "Copilot: the pretty-print marker (✓/✗/●) and footer (Turns:/Model:/tokens) layouts follow "
        "this implementation's documented reading (docs/sessions-parsers.md); no captured CLI output "
        "was available to verify that it is the recognized layout."
    ),
    "T-UAS-040": (
        "Pi: reported auxiliary inference usage (7.5 'include reported auxiliary inference usage "
        "once') is not recognised separately: no source shape for it was available; only "
        "finalized-message usage is accumulated."
    ),
    "T-UAS-069": (
        "Refusals: OpenAI Chat Completions responses and streaming chunks (message.refusal, refusal "
        "parts, delta.refusal, finish_reason content_filter) and Anthropic stop_reason refusal (snapshot "
        "and streamed message_delta) are mapped; OpenAI Responses API refusal events are not."
    ),
}
"""Requirements implemented only in part (not claimed), with what is missing."""

NOT_MET: Final[dict[str, str]] = {}
"""Applicable requirements with no implementation."""

UNSUPPORTED_MAPPINGS: Final[dict[str, str]] = {
    "custom/aider": "7.6 named plaintext sample: no captured Aider output was available; not implemented.",
    "custom/crush": "7.6 named plaintext sample: not implemented.",
    "custom/deepseek-harness": "7.6 named plaintext sample: not implemented.",
    "custom/kiro": "7.6 named plaintext sample ([tool] framing): not implemented.",
    "custom/pydantic-ai": "7.6 named plaintext sample: not implemented.",
    "codex/collab_tool_call": "mapped as a generic tool item (toolName = item type); no collaboration-specific fields.",
    "pi/auxiliary-usage": "auxiliary inference usage records are not mapped (see PARTIAL T-UAS-040).",
}
"""Source signatures the spec names that these adapters do not map (reported per T-UAS-001)."""

CHOICES_WHERE_SPEC_IS_SILENT: Final = (
    "Tool results in Claude-compatible entries without is_error leave success absent (7.1: absent outcome stays unknown).",
    "Adjacent stream deltas are joined into one event; the joined event does not keep chunk boundaries.",
    "Historical pi.* normalization runs only when engine='pi' is given (detection sees them as native events).",
    "Plain text never auto-detects an engine except the Copilot debug/pretty-print and Codex legacy layouts.",
)

CLAIMS: Final = {
    "class": CONFORMANCE_CLASS,
    "engines": ENGINES,
    "applicable": APPLICABLE,
    "claimed": tuple(r for r in APPLICABLE if r not in PARTIAL and r not in NOT_MET),
    "partial": PARTIAL,
    "not_met": NOT_MET,
    "unsupported_mappings": UNSUPPORTED_MAPPINGS,
}
"""Everything above as one mapping (for the conformance report)."""
