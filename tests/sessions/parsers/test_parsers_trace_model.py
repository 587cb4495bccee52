"""Trace model and core vocabulary (UAS 3.1-3.3, 4.1-4.6)."""

from __future__ import annotations

import json

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import assert_canonical, datas, fixture_text, jsonl, of_type, parser_fixtures, types


@pytest.mark.uas("T-UAS-003", "T-UAS-008")
@pytest.mark.parametrize("engine,name", parser_fixtures())
def test_every_fixture_yields_a_plain_event_array(engine: str, name: str) -> None:
    result = parse(fixture_text(engine, name), engine)
    assert_canonical(result.events)
    # No bare legacy result for telemetry convenience, no wrapper.
    assert "result" not in types(result.events)
    for event in result.events:
        assert set(event) >= {"type", "data"}


@pytest.mark.uas("T-UAS-004")
def test_empty_array_and_partial_traces_are_valid() -> None:
    assert parse("[]", "claude").events == []
    partial = jsonl({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]}})
    events = parse(partial, "claude").events
    assert types(events) == ["tool.execution_start"]  # no init, no completion, no result required


@pytest.mark.uas("T-UAS-005", "T-UAS-027")
def test_falsy_values_survive_and_absent_fields_are_not_fabricated() -> None:
    text = jsonl(
        {"type": "system", "subtype": "init", "session_id": "", "tools": [], "mcp_servers": [], "model_info": {}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t0", "content": None}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": False, "is_error": False}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t2", "content": 0, "extra": {"k": []}}]}},
        {"type": "result", "num_turns": 0, "total_cost_usd": 0, "errors": [], "permission_denials": []},
    )
    events = parse(text, "claude").events
    init = datas(events, "session.init")[0]
    assert init == {"sourceEngine": "claude", "sessionId": "", "tools": [], "mcpServers": [], "modelInfo": {}}
    assert "model" not in init and "cwd" not in init
    done = datas(events, "tool.execution_complete")
    assert done[0]["output"] is None and "success" not in done[0]
    assert done[1]["output"] is False and done[1]["success"] is True
    assert done[2]["output"] == 0 and done[2]["extra"] == {"k": []} and "success" not in done[2]
    result = datas(events, "session.result")[0]
    assert result["numTurns"] == 0 and result["totalCostUsd"] == 0
    assert result["errors"] == [] and result["permissionDenials"] == []
    assert "durationMs" not in result and "usage" not in result


@pytest.mark.uas("T-UAS-006", "T-UAS-007")
def test_extensions_and_native_metadata_survive_between_core_events() -> None:
    records = [
        {"type": "user.message", "id": "e1", "parentId": None, "timestamp": "2026-10-02T00:00:00Z", "data": {"content": "x"}},
        {"type": "vendor.progress", "id": "e2", "nativeSequence": 10, "data": {"phase": "report", "retryable": False}},
        {"type": "assistant.message", "id": "e3", "parentId": "e2", "extra": {"n": 0}, "data": {"content": "y", "native": True}},
    ]
    for engine in ("claude", "copilot", "codex", "gemini", "pi", "custom", "opencode", "goose", "cursor", "aider", "pydantic-ai"):
        assert parse(jsonl(*records), engine).events == records, engine


@pytest.mark.uas("T-UAS-007")
def test_expanded_record_keeps_its_metadata_on_every_event() -> None:
    events = parse(fixture_text("claude", "jsonl_full_session_with_debug_and_trailing_extension.jsonl"), "claude").events
    from_u2 = [e for e in events if e.get("uuid") == "u-2"]
    assert types(from_u2) == ["assistant.reasoning", "assistant.message", "tool.execution_start", "tool.execution_start"]
    for event in from_u2:
        assert event["timestamp"] == "2026-10-02T00:00:01Z" and event["session_id"] == "claude-sess-1"
        assert event["parent_tool_use_id"] is None
    # The native record id is not replaced by the tool correlation ID.
    assert all("id" not in e for e in from_u2)


@pytest.mark.uas("T-UAS-008")
def test_presentation_flags_stay_outside_the_events() -> None:
    result = parse(fixture_text("opencode", "run_format_json_session.jsonl"), "opencode")
    assert result.max_turns_hit is True and result.mcp_failures == ["github", "docs"]
    blob = json.dumps(result.events)
    assert "maxTurnsHit" not in blob and "mcpFailures" not in blob


@pytest.mark.uas("T-UAS-009")
def test_rich_and_sparse_initialization() -> None:
    events = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude").events
    assert datas(events, "session.init")[0] == {
        "sourceEngine": "claude",
        "model": "claude-example",
        "sessionId": "claude-sess-1",
        "cwd": "/workspace/x",
        "tools": ["Bash", "mcp__catalog__lookup"],
        "mcpServers": [{"name": "catalog", "status": "connected"}],
        "slashCommands": [],
        "modelInfo": {"billing": {"is_premium": False}},
        "apiKeySource": "none",
    }
    sparse = parse(jsonl({"type": "system", "subtype": "init"}), "claude").events
    assert sparse == [{"type": "session.init", "data": {"sourceEngine": "claude"}}]
    native = {"type": "session.init", "data": {"model": "m"}}  # native init without sourceEngine stays readable
    assert parse(jsonl(native), "copilot").events == [native]


@pytest.mark.uas("T-UAS-010", "T-UAS-011")
def test_user_text_tool_results_assistant_text_and_thinking_in_block_order() -> None:
    events = parse(fixture_text("claude", "jsonl_full_session_with_debug_and_trailing_extension.jsonl"), "claude").events
    assert types(events)[:10] == [
        "session.init",
        "user.message",
        "assistant.reasoning",
        "assistant.message",
        "tool.execution_start",
        "tool.execution_start",
        "user.message",
        "tool.execution_complete",
        "tool.execution_complete",
        "assistant.message",
    ]
    assert datas(events, "user.message") == [{"content": "  Check the catalog.\n"}, {"content": "Also note this."}]
    assert datas(events, "assistant.reasoning")[0]["content"] == "  Look it up first.\n"
    assert datas(events, "assistant.message")[0]["content"] == "Looking up.\n"


@pytest.mark.uas("T-UAS-011", "T-UAS-035")
def test_provider_errors_are_not_assistant_answers() -> None:
    events = parse(fixture_text("claude", "errors_retry_and_denials_without_result.jsonl"), "claude").events
    answers = [d["content"] for d in datas(events, "assistant.message")]
    assert "Invalid API key" not in answers
    errors = datas(events, "session.error")
    assert [e["sourceType"] for e in errors] == ["api_retry", "error", "assistant"]


@pytest.mark.uas("T-UAS-028", "T-UAS-015")
def test_legacy_result_becomes_session_result_with_mapped_names() -> None:
    events = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude").events
    (result,) = datas(events, "session.result")
    assert result["numTurns"] == 2 and result["durationMs"] == 2000 and result["totalCostUsd"] == 0
    assert result["status"] == "success" and result["sourceType"] == "result"
    assert result["permissionDenials"] == [{"tool_name": "Write", "tool_use_id": "toolu-9"}]
    assert result["errors"] == []
    assert result["duration_api_ms"] == 1500  # other native result metadata stays
    assert "num_turns" not in result and "success" not in result


@pytest.mark.uas("T-UAS-028", "T-UAS-034")
def test_derived_partial_result_asserts_no_success_or_missing_totals() -> None:
    events = parse(fixture_text("claude", "errors_retry_and_denials_without_result.jsonl"), "claude").events
    (result,) = datas(events, "session.result")
    assert "status" not in result and "numTurns" not in result and "durationMs" not in result
    assert result["usage"] == {"input_tokens": 3, "output_tokens": 2}  # one response, latest snapshot
    assert result["permissionDenials"] == [{"tool_name": "Bash", "tool_use_id": "t-d"}]
    assert len(result["errors"]) == 3
    assert events[-1]["type"] == "session.result"


@pytest.mark.uas("T-UAS-015")
def test_tool_failures_do_not_become_session_errors() -> None:
    events = parse(fixture_text("claude", "jsonl_full_session_with_debug_and_trailing_extension.jsonl"), "claude").events
    failed = [d for d in datas(events, "tool.execution_complete") if d.get("success") is False]
    assert failed and datas(events, "session.result")[0]["errors"] == []
    assert of_type(events, "session.error") == []
