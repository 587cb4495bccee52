"""Shared renderer inputs and the downconversion boundary (T-UAS-042, T-UAS-043, 004, 006, 026, 052)."""

from __future__ import annotations

import copy
import json

import pytest
from uas_reader_helpers import freeze, frozen, load

from bitexact.sessions.render import cli_style_summary, conversation_markdown, plain_text_summary, render

BUDGET = 1000 * 1024
RENDERERS = {
    "markdown": lambda ev: render(ev, "markdown"),
    "text": lambda ev: render(ev, "text"),
    "conversation_markdown": lambda ev: conversation_markdown(ev, budget_bytes=BUDGET),
    "plain_text_summary": lambda ev: plain_text_summary(ev, budget_bytes=BUDGET),
    "cli_style_summary": lambda ev: cli_style_summary(ev, budget_bytes=BUDGET),
}
INFORMATION = ("markdown", "text", "conversation_markdown", "plain_text_summary")


@pytest.mark.uas("T-UAS-042", "T-UAS-004")
@pytest.mark.parametrize("name", INFORMATION)
def test_canonical_only_trace_information_found_without_legacy_result(name: str) -> None:
    events, _ = frozen("appendix_a_complete_trace.json")
    out = RENDERERS[name](events)
    assert "Engine: copilot" in out and "Model: example-model" in out
    assert "Turns: 2" in out and "Duration: 2.0s (2000 ms)" in out
    assert "Cost: $0.0000 (reported)" in out  # reported zero is a measurement, not "unavailable"
    assert "cache read 6" in out and "cache write 0" in out
    assert "2 succeeded, 1 failed, 0 pending" in out


@pytest.mark.uas("T-UAS-042")
@pytest.mark.parametrize("name", INFORMATION)
def test_result_and_init_used_when_not_last_trailing_extension(name: str) -> None:
    events = load("appendix_a_complete_trace.json")
    # A native extension and an assistant message after the result (result not the last record).
    events += [{"type": "vendor.after", "data": {"n": 1}}, {"type": "assistant.message", "data": {"content": "late"}}]
    events = [events[-1]] + events[:-1]  # init is no longer first either
    out = RENDERERS[name](freeze(events))
    assert "Turns: 2" in out and "Engine: copilot" in out
    assert "vendor.after" in out


@pytest.mark.uas("T-UAS-043")
def test_command_merged_into_display_copy_only_and_explicit_command_kept() -> None:
    events = [
        {"type": "tool.execution_start", "data": {"toolCallId": "a", "toolName": "bash", "input": {"cwd": "/w"}, "command": "make test"}},
        {"type": "tool.execution_start", "data": {"toolCallId": "b", "toolName": "bash", "input": {"command": "explicit"}, "command": "other"}},
        {"type": "tool.execution_start", "data": {"toolCallId": "c", "toolName": "search", "mcpServerName": "github", "input": {"q": "x"}}},
    ]
    before = copy.deepcopy(events)
    out = cli_style_summary(freeze(events), budget_bytes=BUDGET)
    assert 'Bash({"cwd":"/w","command":"make test"})' in out
    assert 'Bash({"command":"explicit"})' in out and "other" not in out
    assert "mcp__github__search" in out
    assert events == before


@pytest.mark.uas("T-UAS-043", "T-UAS-013")
def test_structured_and_falsy_outputs_and_zero_metrics_displayed() -> None:
    out = cli_style_summary(frozen("appendix_a_complete_trace.json")[0], budget_bytes=BUDGET)
    assert '⎿ ✓ {"items":[],"count":0} (0 ms)' in out  # zero duration is shown
    assert "⎿ ✓ false" in out  # false output is not "success" text or empty
    assert "✗ error: CHECK_FAILED: Example check failed. (12 ms)" in out
    assert "output: 0" in out


@pytest.mark.uas("T-UAS-043")
def test_empty_output_marker_and_mcp_text_blocks() -> None:
    events = [
        {"type": "tool.execution_start", "data": {"toolCallId": "a", "toolName": "t"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "a", "success": True, "output": ""}},
        {"type": "tool.execution_start", "data": {"toolCallId": "b", "toolName": "t"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "b", "success": True,
                                                      "result": {"content": [{"type": "text", "text": "block text"}]}}},
    ]
    out = cli_style_summary(freeze(events), budget_bytes=BUDGET)
    assert "⎿ ✓ [empty output]" in out
    assert "⎿ ✓ block text" in out and '"type":"text"' not in out


@pytest.mark.uas("T-UAS-006")
def test_display_omits_extension_payload_but_not_the_event() -> None:
    events, before = frozen("appendix_a_complete_trace.json")
    out = render(events, "markdown")
    assert "vendor.progress" in out and "retryable" not in out
    assert json.loads(json.dumps(events)) == before  # the trace still holds the extension intact


@pytest.mark.uas("T-UAS-026", "T-UAS-052", "T-UAS-025")
@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_renderers_do_not_mutate_and_are_deterministic(name: str) -> None:
    events, before = frozen("appendix_a_complete_trace.json")
    first = RENDERERS[name](events)
    second = RENDERERS[name](events)
    assert first == second
    assert json.loads(json.dumps(events)) == before


@pytest.mark.uas("T-UAS-004", "T-UAS-042")
@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_empty_trace_is_valid_input(name: str) -> None:
    out = RENDERERS[name](freeze([]))
    assert "Turns" not in out or "unavailable" in out
    assert "succeeded" not in out or "0 succeeded" in out


@pytest.mark.uas("T-UAS-042")
def test_mixed_normalized_trace_from_parser_renders() -> None:
    from bitexact.sessions import parse

    mixed = json.dumps(load("appendix_b_mixed_input.json"))
    result = parse(mixed, "claude")
    out = render(freeze(result.events), "text")
    assert "A  B" in out.replace("\n", "") or ("A " in out and " B" in out)
    assert "Turns: 1" in out and "input 0" in out and "output 2" in out
