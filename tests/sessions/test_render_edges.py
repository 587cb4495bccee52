"""Edges of `bitexact sessions render`, found in review: the budget holds with long fences, a conversation label
is redacted before it is escaped, and an id of the wrong type is shown, not a crash."""

from __future__ import annotations

import pytest

from bitexact.sessions.render import render
from bitexact.sessions.unified_model import FORMAT_VERSION


def _ev(kind: str, **data: object) -> dict:
    return {"type": kind, "data": data}


_TICKS = "`" * 40
_EVENTS = [
    _ev("session.init", model="m"),
    _ev("assistant.message", content=f"hello {_TICKS} world\n" * 50),
    _ev("tool.execution_start", toolName="Bash", toolCallId="1", arguments={"command": _TICKS}),
    _ev("tool.execution_complete", toolCallId="1", success=True, output=_TICKS * 3),
]
_HEADER = {"type": "session.format", "provenance": {"component": "collector"}, "data": {"version": FORMAT_VERSION}}
_UNIFIED = [_HEADER] + [
    dict(e, provenance={"component": "agent", "phase": "agent", "path": "x.jsonl", "index": i})
    for i, e in enumerate(_EVENTS)
]


@pytest.mark.parametrize(("records", "budget"), [(_EVENTS, 774), (_UNIFIED, 4113)], ids=["trace", "unified"])
def test_markdown_view_never_exceeds_budget_with_long_fence(records: list, budget: int) -> None:
    # Document.open writes the opener when it alone fits, but the closer (a 100+ backtick fence)
    # was never reserved, so finish() appends it beyond the budget.
    out = render(records, "markdown", budget_bytes=budget)
    assert len(out.encode("utf-8")) <= budget


@pytest.mark.parametrize("secret", ["ghp_" + "A1b2C3d4E5" * 4, "AKIAIOSFODNN7EXAMPLE"])
def test_markdown_conversation_label_redacts_credentials(secret: str) -> None:
    # The nested-conversation label (agentId) is Markdown-escaped (``_`` -> ``\_``) and
    # ``.capitalize()``d (lower-cases the key) before any redaction, so the final pass misses it.
    events = [_ev("session.init", model="m"), _ev("assistant.message", content="hi", agentId=secret)]
    out = render(events, "markdown")
    flat = out.replace("\\", "").lower()
    assert secret.lower() not in flat


def test_render_tolerates_non_string_caller_scope() -> None:
    # caller_scope() returns the raw agentId/parentToolCallId; a list/object is unhashable and
    # build_conversations crashes with TypeError (not caught by the CLI: raw traceback).
    events = [_ev("assistant.message", content="x", parentToolCallId=["a"])]
    out = render(events, "text")
    assert "x" in out
