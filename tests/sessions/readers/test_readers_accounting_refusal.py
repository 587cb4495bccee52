"""Reader accounting selection and refusal labelling (T-UAS-030, 031, 033, 053, 069)."""

from __future__ import annotations

import pytest
from uas_reader_helpers import freeze

from bitexact.sessions.render import cli_style_summary, render

BUDGET = 1000 * 1024


def _result(**data):
    return {"type": "session.result", "data": data}


@pytest.mark.uas("T-UAS-030", "T-UAS-053")
def test_canonical_zero_wins_over_camel_alias_and_aliases_not_summed() -> None:
    out = render(freeze([_result(usage={"input_tokens": 0, "inputTokens": 99, "outputTokens": 2})]), "text")
    assert "input 0" in out and "output 2" in out
    assert "99" not in out and "101" not in out


@pytest.mark.uas("T-UAS-031")
def test_cache_not_double_counted_and_calculation_named() -> None:
    usage = {"input_tokens": 30, "output_tokens": 8, "cache_read_input_tokens": 6}
    out = render(freeze([_result(usage=usage)]), "text")
    assert "total 38 (input + output (cache shown separately))" in out
    excluded = dict(usage, input_tokens_include_cache=False)
    out = render(freeze([_result(usage=excluded)]), "text")
    assert "total 44 (input + output + cache (cache excluded from input))" in out


@pytest.mark.uas("T-UAS-031", "T-UAS-034")
def test_invalid_counts_are_unavailable_not_zero() -> None:
    out = render(freeze([_result(numTurns=-1, durationMs="fast", usage={"input_tokens": 1.5, "output_tokens": 3})]), "text")
    assert "Turns: unavailable" in out and "Duration: unavailable" in out
    assert "input unavailable" in out and "output 3" in out


@pytest.mark.uas("T-UAS-033", "T-UAS-053")
def test_multiple_snapshots_select_latest_per_metric_never_summed() -> None:
    events = freeze([
        _result(numTurns=1, usage={"input_tokens": 10, "output_tokens": 3}, totalCostUsd=0.5),
        {"type": "vendor.between", "data": {}},
        _result(numTurns=2, usage={"input_tokens": 30}),
        {"type": "vendor.after", "data": {}},
    ])
    out = render(events, "text")
    assert "Turns: 2" in out and "input 30" in out
    assert "output 3" in out  # a later snapshot omitting a field does not erase it
    assert "Cost: $0.5000" in out
    assert "input 40" not in out and "Turns: 3" not in out


@pytest.mark.uas("T-UAS-053", "T-UAS-015", "T-UAS-035")
def test_provider_errors_and_denials_displayed_separately_from_tool_failures() -> None:
    events = freeze([
        {"type": "tool.execution_start", "data": {"toolCallId": "t", "toolName": "bash"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "t", "success": False, "error": "exit 1"}},
        _result(errors=[{"type": "overloaded_error", "message": "Overloaded"}], permissionDenials=[{"tool": "rm"}]),
    ])
    out = render(events, "text")
    assert "Session errors: 1" in out and "overloaded_error: Overloaded" in out
    assert "Permission denials: 1" in out
    assert "1 failed" in out


@pytest.mark.uas("T-UAS-069")
def test_refusals_are_labelled_distinctly_and_partial_is_not_an_answer() -> None:
    events = freeze([
        {"type": "assistant.refusal", "data": {"reason": "content_filter", "content": None}},
        {"type": "assistant.refusal", "data": {"reason": "refusal", "content": "I can't help with that.",
                                              "policyCategory": "cyber", "explanation": "Policy text."}},
        {"type": "assistant.refusal", "data": {"reason": "refusal", "content": "I can", "partial": True}},
    ])
    out = cli_style_summary(events, budget_bytes=BUDGET)
    assert "⊘ Refusal (content_filter): null" in out
    assert "⊘ Refusal (refusal, cyber): I can't help with that." in out and "explanation: Policy text." in out
    assert "⊘ Refusal (refusal) [partial stream fragment, not a completed answer]: I can" in out
    assert "● I can" not in out  # never rendered as an ordinary answer
