"""Copilot adapter (UAS 7.2, T-UAS-037; 9.3 Copilot row)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import datas, fixture_text, jsonl, types


@pytest.mark.uas("T-UAS-037", "T-UAS-006")
def test_native_events_jsonl_is_retained_with_extensions() -> None:
    text = fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl")
    events = parse(text, "copilot").events
    native = [e for e in events if "id" in e]
    assert [e["id"] for e in native] == [f"e{i}" for i in range(1, 17)]
    assert native[11] == {"type": "vendor.progress", "id": "e12", "nativeSequence": 12, "data": {"phase": "report"}}


@pytest.mark.uas("T-UAS-037")
def test_task_complete_summary_is_exposed_once() -> None:
    events = parse(fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl"), "copilot").events
    summary = [d for d in datas(events, "assistant.message") if d.get("content") == "All fixed."]
    assert summary == [{"content": "All fixed.", "sourceType": "session.task_complete"}]
    already = jsonl(
        {"type": "assistant.message", "data": {"content": "Same."}},
        {"type": "session.task_complete", "data": {"summary": "Same."}},
    )
    assert [d["content"] for d in datas(parse(already, "copilot").events, "assistant.message")] == ["Same."]


@pytest.mark.uas("T-UAS-037", "T-UAS-033")
def test_shutdown_agent_metrics_become_a_result_snapshot_unchanged() -> None:
    events = parse(fixture_text("copilot", "native_events_with_extensions_and_task_complete.jsonl"), "copilot").events
    assert events[-1] == {"type": "session.result", "data": {"agentMetrics": {"main": {"requests": 2, "nanoAiu": 0}}, "sourceType": "session.shutdown"}}


@pytest.mark.uas("T-UAS-037")
def test_legacy_entries_map_with_copilot_source_engine() -> None:
    events = parse(fixture_text("copilot", "legacy_claude_compatible_entries.json"), "copilot").events
    assert datas(events, "session.init")[0]["sourceEngine"] == "copilot"
    assert datas(events, "session.result")[0]["usage"]["input_tokens"] == 5


@pytest.mark.uas("T-UAS-037", "T-UAS-023")
def test_debug_responses_map_without_synthetic_success_or_ids() -> None:
    events = parse(fixture_text("copilot", "debug_responses_with_incomplete_tool_calls.log"), "copilot").events
    assert types(events) == [
        "assistant.reasoning", "assistant.message", "tool.execution_start", "tool.execution_start",
        "assistant.message", "session.result",
    ]
    assert [d["toolCallId"] for d in datas(events, "tool.execution_start")] == ["dbg-call-1", "dbg-call-2"]
    assert datas(events, "tool.execution_complete") == []


@pytest.mark.uas("T-UAS-037")
def test_truncated_debug_block_is_reported_and_later_blocks_survive() -> None:
    text = "\n".join([
        "t [DEBUG] data:",
        "t [DEBUG] {",
        't [DEBUG]   "choices": [',
        't [DEBUG] data: {"choices":[{"message":{"content":"ok"}}]}',
    ]) + "\n"
    result = parse(text, "copilot")
    assert [d["content"] for d in datas(result.events, "assistant.message")] == ["ok"]
    assert result.diagnostics == ["line 1: truncated debug response block skipped"]


@pytest.mark.uas("T-UAS-037", "T-UAS-014")
def test_pretty_print_markers_follow_the_layout_semantics() -> None:
    # The CLI prints finished calls only: ● with a "└" sub-item is a success (0.0.423, 1.0.x),
    # ✓ a success whose detail lines are indented by three spaces (0.0.340), ✗ a failure.
    # The real layouts are covered in test_parsers_copilot_cli_layouts.py.
    events = parse(fixture_text("copilot", "pretty_print_tools_and_footer.log"), "copilot").events
    done = datas(events, "tool.execution_complete")
    assert [d["success"] for d in done] == [True, True, False]
    assert done[0]["output"] == "12 lines read"
    assert done[1]["output"] == "$ npm test"  # the two-space line after it is not 0.0.340 framing
    assert done[2]["output"] == "Error: permission denied"
    assert [d["toolName"] for d in datas(events, "tool.execution_start")] == ["Read package.json", "Run tests", "Edit src/app.js"]


@pytest.mark.uas("T-UAS-037", "T-UAS-016")
def test_pretty_printed_legacy_array_inside_a_process_log() -> None:
    import json

    array = json.dumps([{"type": "system", "subtype": "init", "model": "m"}, {"type": "result", "num_turns": 2}], indent=2)
    text = "2026-10-02T00:00:00Z [INFO] start\n" + array + "\n✓ Run tests\n  ok\n"
    events = parse(text, "copilot").events
    assert types(events) == ["session.init", "session.result", "tool.execution_start", "tool.execution_complete"]
    assert events[0]["data"]["sourceEngine"] == "copilot" and events[1]["data"]["numTurns"] == 2


@pytest.mark.uas("T-UAS-037", "T-UAS-017", "T-UAS-034")
def test_a_lone_model_line_is_not_a_recognized_layout() -> None:
    result = parse("Model: gpt-x\nInput tokens: 5\n", "copilot")
    assert result.events == [] and result.diagnostics[-1].startswith("unrecognized format")
    turns_only = parse("Turns: 0\n", "copilot").events
    assert turns_only == [{"type": "session.result", "data": {"numTurns": 0}}]


@pytest.mark.uas("T-UAS-037")
def test_footer_model_text_is_payload_and_not_trimmed() -> None:
    text = "✓ Run tests\n  ok\nTurns: 2\nModel: example model (preview) \n"
    result = datas(parse(text, "copilot").events, "session.result")
    assert result == [{"numTurns": 2, "model": "example model (preview) "}]
