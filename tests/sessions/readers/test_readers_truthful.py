"""Truthful partial summaries and "accounting is not success" (T-UAS-044, T-UAS-048, T-UAS-023/024)."""

from __future__ import annotations

import pytest
from uas_reader_helpers import freeze, frozen

from bitexact.sessions.render import cli_style_summary, render
from bitexact.sessions.render.summary import FAILURE, PENDING, SUCCESS, UNKNOWN, build_conversations

BUDGET = 1000 * 1024


@pytest.mark.uas("T-UAS-044", "T-UAS-023", "T-UAS-024")
def test_appendix_b_dangling_is_pending_and_orphan_keeps_failure() -> None:
    events, _ = frozen("appendix_b_partial_dangling_and_orphan.json")
    (conv,) = build_conversations(events)
    outcomes = [e.tool.outcome for e in conv.entries if e.tool]
    assert outcomes == [PENDING, FAILURE]
    stats = conv.stats()
    assert (stats.succeeded, stats.failed, stats.pending, stats.orphans) == (0, 1, 1, 1)
    out = cli_style_summary(events, budget_bytes=BUDGET)
    assert "⎿ … pending: no completion observed" in out
    assert "[completion without an observed start]" in out
    assert "✗ error: Permission denied." in out
    assert "✓" not in out  # nothing here earns a success checkmark


@pytest.mark.uas("T-UAS-044")
def test_completion_without_outcome_is_unknown_not_success() -> None:
    events = freeze([
        {"type": "tool.execution_start", "data": {"toolCallId": "x", "toolName": "read"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "x", "output": "data"}},
    ])
    (conv,) = build_conversations(events)
    assert conv.entries[0].tool.outcome == UNKNOWN
    out = render(events, "text")
    assert "0 succeeded" in out and "1 outcome unknown" in out
    assert "? outcome not reported: data" in out


@pytest.mark.uas("T-UAS-044", "T-UAS-014")
def test_explicit_failure_signal_controls_over_success_claim() -> None:
    events = freeze([
        {"type": "tool.execution_start", "data": {"toolCallId": "x", "toolName": "bash"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "x", "success": True, "exitCode": 2}},
        {"type": "tool.execution_start", "data": {"toolCallId": "y", "toolName": "bash"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "y", "success": True, "isError": True}},
    ])
    (conv,) = build_conversations(events)
    assert [e.tool.outcome for e in conv.entries] == [FAILURE, FAILURE]


@pytest.mark.uas("T-UAS-044", "T-UAS-022")
def test_concurrent_same_name_calls_pair_by_exact_id_only() -> None:
    events = freeze([
        {"type": "tool.execution_start", "data": {"toolCallId": "a", "toolName": "bash"}},
        {"type": "tool.execution_start", "data": {"toolCallId": "b", "toolName": "bash"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "b", "success": False}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "zzz", "success": True}},
    ])
    (conv,) = build_conversations(events)
    tools = [e.tool for e in conv.entries]
    assert tools[0].outcome == PENDING  # "a" is not closed by the unknown-ID completion
    assert tools[1].outcome == FAILURE
    assert tools[2].orphan and tools[2].outcome == SUCCESS


@pytest.mark.uas("T-UAS-044")
def test_anonymous_completion_pairs_only_with_a_unique_pending_name() -> None:
    unique = freeze([
        {"type": "tool.execution_start", "data": {"toolName": "grep"}},
        {"type": "tool.execution_complete", "data": {"toolName": "grep", "success": True}},
    ])
    (conv,) = build_conversations(unique)
    assert len(conv.entries) == 1 and conv.entries[0].tool.outcome == SUCCESS
    ambiguous = freeze([
        {"type": "tool.execution_start", "data": {"toolName": "grep"}},
        {"type": "tool.execution_start", "data": {"toolName": "grep"}},
        {"type": "tool.execution_complete", "data": {"toolName": "grep", "success": True}},
    ])
    (conv,) = build_conversations(ambiguous)
    outcomes = [e.tool.outcome for e in conv.entries]
    assert outcomes == [PENDING, PENDING, UNKNOWN]  # an ambiguous completion earns no checkmark
    assert conv.stats().succeeded == 0


@pytest.mark.uas("T-UAS-044")
def test_step_index_pairs_within_session_scope() -> None:
    events = freeze([
        {"type": "tool.execution_start", "data": {"stepIndex": 3, "sessionId": "s1", "toolName": "run"}},
        {"type": "tool.execution_start", "data": {"stepIndex": 3, "sessionId": "s2", "toolName": "run"}},
        {"type": "tool.execution_complete", "data": {"stepIndex": 3, "sessionId": "s2", "success": True}},
    ])
    (conv,) = build_conversations(events)
    assert [e.tool.outcome for e in conv.entries] == [PENDING, SUCCESS]


@pytest.mark.uas("T-UAS-044", "T-UAS-034")
def test_unknown_accounting_is_unavailable_not_zero() -> None:
    out = render(freeze([{"type": "assistant.message", "data": {"content": "hi"}}]), "text")
    assert "Turns: unavailable" in out and "Duration: unavailable" in out and "Cost: unavailable" in out
    assert "Tokens: unavailable" in out
    assert "$0" not in out


@pytest.mark.uas("T-UAS-048")
def test_turns_and_result_are_not_presented_as_success() -> None:
    events = freeze([
        {"type": "session.result", "data": {"numTurns": 7, "status": "success", "usage": {"input_tokens": 9}}},
        {"type": "tool.execution_start", "data": {"toolCallId": "p", "toolName": "bash"}},
    ])
    out = render(events, "text")
    assert "Turns: 7" in out
    assert "not a task-success claim" in out
    assert "1 pending" in out and "0 succeeded" in out
