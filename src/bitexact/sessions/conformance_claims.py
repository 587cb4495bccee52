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

ENGINES: Final = ("claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor", "aider", "pydantic-ai")
"""Engines with an adapter (section 7)."""

APPLICABLE: Final = tuple(f"T-UAS-{n:03d}" for n in [*range(1, 42), 44, 51, 52, 68, 69])
"""Requirement IDs of 9.2 that apply to class P (sections 2-7 and the parser
rows of 9)."""

PARTIAL: Final[dict[str, str]] = {
    "T-UAS-037": (
        "Copilot: native events, legacy entries, debug blocks and the explicit 'Turns: N' are "
        "implemented as specified; the pretty-print layouts and usage footers are now read from the "
        "@github/copilot package (1.0.102 captured from the running binary; 0.0.423 and 0.0.340 "
        "rendered by their own components, not run) and implemented (docs/sessions-parsers.md). Not "
        "verified or not decidable from the text: (1) '●' also marks non-tool output (0.0.423 prints "
        "every assistant message and notice as a '●' block, 1.0.102 its notices), so a '●' line is a "
        "tool only with a '│'/'└' sub-item or in a 1.0.x document; an edit printed without sub-items "
        "in 0.0.423 output is missed and a 1.0.x notice would become a tool record; (2) versions "
        "between those three and sub-agent tool groups are unexamined, and the CLI's wrapping at its "
        "output width is not separable from payload line breaks; (3) no examined version prints a turns count, so "
        "'Turns:' follows the spec text only, and the 'Model:'/'Input tokens:'/'Output tokens:' lines "
        "read since before are no CLI output."
    ),
}
"""Requirements implemented only in part (not claimed), with what is missing."""

NOT_MET: Final[dict[str, str]] = {}
"""Applicable requirements with no implementation."""

UNSUPPORTED_MAPPINGS: Final[dict[str, str]] = {
    "custom/crush": (
        "7.6 named plaintext sample, not implemented: the spec says executed output 'contains "
        "infrastructure only' and an appended zero-turn compatibility trailer is not conversation "
        "evidence; neither the infrastructure lines nor the trailer are described. The real tool "
        "could not be run to learn them: the npm package @charmland/crush (0.92.0-0.96.1) ships no "
        "binary, its postinstall downloads a GitHub release archive, which this workplace cannot "
        "reach; no PyPI or Debian package carries it and the Go module proxy is not reachable. Its "
        "README does not describe what 'crush run' prints, so no layout was observed or documented."
    ),
    "custom/deepseek-harness": (
        "7.6 named plaintext sample, not implemented: the spec names the sample but gives no "
        "description of its output at all. The only package of that name this workplace reaches is a "
        "client library (PyPI deepseek-harness 0.3.1) that prints nothing of its own; its 'dsh' CLI is a "
        "reserved npm name without code (deepseek-harness 0.0.1). No output exists to learn a framing from."
    ),
    "custom/kiro": (
        "7.6 named plaintext sample, not implemented: the spec (9.4) mentions 'CLI 2.27.1 compact "
        "[tool] framing and buffered final answers' with start/completion lines and anonymous orphan "
        "failures, but not the line syntax of a start, a completion or a failure. The Kiro agent CLI is not "
        "published on npm or Debian (its installer downloads from the vendor's site; PyPI's kiro-cli is an "
        "unrelated scaffolding tool), so it cannot be run here to learn the layout."
    ),
}
"""Source signatures the spec names that these adapters do not map (reported per T-UAS-001)."""

CHOICES_WHERE_SPEC_IS_SILENT: Final = (
    "Tool results in Claude-compatible entries without is_error leave success absent (7.1: absent outcome stays unknown).",
    "Adjacent stream deltas are joined into one event; the joined event does not keep chunk boundaries.",
    "Historical pi.* normalization runs only when engine='pi' is given (detection sees them as native events).",
    "Plain text never auto-detects an engine except the Copilot debug layout and CLI layouts (a marker line with "
    "its sub-item framing, or with a usage footer or 'Turns:' line), the Codex legacy layout, Aider's "
    "console startup block (an 'Aider v<version>' line directly followed by its model line) and, last, Pydantic AI's "
    "'clai - Pydantic AI CLI v<version> with|using custom agent ...' header or its 'pydantic-ai v<version> • Python' "
    "start-up banner followed by a 'model:'/'agent:' line.",
    "Aider console output (layout learned from aider-chat 0.86.2): the startup block maps to session.init; text is an "
    "answer only when closed by a 'Tokens: ...' report while a reply is awaited (after startup or a provider error); "
    "that report is session.info usage_report prose, never usage; 'Applied edit to P' / 'Commit H M' and their "
    "failure lines are tool start+completion named edit/commit without call ids; litellm error blocks are "
    "session.error, also listed in a derived status-less session.result.errors.",
    "Pydantic AI console output (layout learned from clai 2.62.0): the clai header maps to session.init; the text after "
    "it is clai's rich rendering of the answer, kept as printed, one assistant.message per piece between tool lines; "
    "'▌ Called tool N.' is tool start+completion without outcome (a retried call prints the same), '▌ Calling tool N…' "
    "a start only; a model-written blockquote of the same words cannot be told apart. A Python traceback is one "
    "session.error (final exception, earlier ones in data.chain), also listed in a derived status-less "
    "session.result.errors; text right before it is not claimed. After the library's start-up banner only "
    "session.init is read (nothing else is attributable).",
    "Claude sub-agent caller identity is data.callerAgentId on subagent.* events (data.agentId is the target); "
    "explicit callerAgentId/caller_agent_id on the lifecycle payload wins, else it is inferred from the launcher "
    "tool_use records with the start's tool_use_id (narrowed to the start's parent scope) when they name one caller.",
    "Pi auxiliary inference usage is read from a top-level Pi-style usage object on a non-terminal lifecycle record "
    "(e.g. auto_compaction_end); it is added to session usage once per record id (else per identical record) and "
    "totalled alone in session.result.auxiliaryUsage. The spec names no source field for it.",
    "OpenAI Responses API payloads are recognized inside Copilot debug blocks (response objects and response.* "
    "stream events); one refusal per (output item id, content index), completed in place by later observations.",
    "Codex collab_tool_call items: toolName is the native collaboration tool (spawn_agent, send_input, wait, ...), "
    "input is the supplied prompt, sender/receiver thread IDs are senderThreadId/receiverThreadIds, agents_states "
    "is the output, itemType keeps 'collab_tool_call'.",
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
