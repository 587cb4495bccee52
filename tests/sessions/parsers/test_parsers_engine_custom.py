"""Custom engines and deterministic detection (UAS 7.6, T-UAS-041; 9.3 Custom row)."""

from __future__ import annotations

import pytest

from bitexact.sessions import UnrecognizedFormatError, detect_engine, parse
from bitexact.sessions.parsers.custom import detect_delegate
from uas_parser_helpers import datas, fixture_text, jsonl, parser_fixtures, types


@pytest.mark.uas("T-UAS-041")
def test_claude_compatible_custom_maps_as_custom() -> None:
    result = parse(fixture_text("custom", "claude_compatible_with_native_events.jsonl"), "custom")
    assert result.engine == "custom"
    assert types(result.events) == ["session.init", "vendor.progress", "assistant.message", "session.result"]
    assert result.events[0]["data"]["sourceEngine"] == "custom"
    assert result.diagnostics[0] == "custom: delegated to native-or-claude"


@pytest.mark.uas("T-UAS-041")
def test_codex_fallback_keeps_the_delegate_source_engine() -> None:
    result = parse(fixture_text("custom", "codex_jsonl_delegate.jsonl"), "custom")
    assert result.engine == "custom" and result.events[0]["data"]["sourceEngine"] == "codex"


@pytest.mark.uas("T-UAS-041", "T-UAS-025")
def test_goose_signatures_precede_opencode() -> None:
    text = fixture_text("custom", "goose_and_opencode_signatures_tie.jsonl")
    assert detect_delegate(text) == "goose"
    result = parse(text, "custom")
    assert [d["content"] for d in datas(result.events, "assistant.message")] == ["from goose"]
    assert [detect_delegate(text) for _ in range(3)] == ["goose"] * 3


@pytest.mark.uas("T-UAS-041")
def test_native_and_claude_precede_broad_codex_fallback() -> None:
    text = jsonl({"type": "thread.started", "thread_id": "t"}, {"type": "vendor.step", "data": {}})
    assert detect_delegate(text) == "native-or-claude"


@pytest.mark.uas("T-UAS-041", "T-UAS-017")
@pytest.mark.parametrize(
    "text",
    [
        jsonl({"type": "vendor.progress"}),                     # dotted type without payload
        jsonl({"a": 1}, {"b": [1]}),                            # parseable, unrelated JSON
        "The assistant used tool_use and returned a result.\n",  # prose
        jsonl({"type": "error", "error": "only an error"}),     # Goose error alone
        "## Agent Log Summary\n\nsome markdown\n",              # markdown-looking text
    ],
)
def test_no_false_recognition(text: str) -> None:
    assert detect_delegate(text) is None
    result = parse(text, "custom")
    assert result.events == [] and result.diagnostics[-1] == "unrecognized format: no supported custom records found"
    with pytest.raises(UnrecognizedFormatError):
        detect_engine(text)


@pytest.mark.uas("T-UAS-041", "T-UAS-016")
def test_detection_uses_valid_records_next_to_malformed_ones() -> None:
    text = "{broken\n" + jsonl({"type": "thread.started", "thread_id": "t"}) + "null\n"
    assert detect_delegate(text) == "codex"
    assert detect_engine(text) == "codex"


EXPECTED_DETECTION = {
    ("aider", "authentication_error_not_retried.txt"): "aider",
    ("aider", "edit_format_failure_then_reflected_reply.txt"): "aider",
    ("aider", "prose_mentioning_aider_version.txt"): None,
    ("aider", "quiet_answer_without_startup_block.txt"): None,
    ("aider", "rate_limit_nine_startup_error_blocks.txt"): "aider",
    ("aider", "rate_limit_retries_then_reply.txt"): "aider",
    ("aider", "success_no_stream_edit_and_commit.txt"): "aider",
    ("aider", "success_pretty_piped_stream.txt"): "aider",
    ("claude", "errors_retry_and_denials_without_result.jsonl"): "claude",
    ("claude", "json_array_legacy_session.json"): "claude",
    ("claude", "jsonl_full_session_with_debug_and_trailing_extension.jsonl"): "claude",
    ("claude", "mixed_native_legacy_extension_result.jsonl"): "claude",
    ("claude", "refusal_stop_reason_with_details.jsonl"): "claude",
    ("claude", "subagent_lifecycle_and_status.jsonl"): "claude",
    ("claude", "subagent_caller_inference_and_changed_parent.jsonl"): "claude",
    ("claude", "sdk_partial_stream_interrupted_and_refusal.jsonl"): "claude",
    ("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"): "codex",
    ("codex", "legacy_text_layout.log"): "codex",
    ("codex", "jsonl_collab_tool_calls.jsonl"): "codex",
    ("copilot", "debug_content_filter_refusal.log"): "copilot",
    ("copilot", "debug_responses_with_incomplete_tool_calls.log"): "copilot",
    ("copilot", "legacy_claude_compatible_entries.json"): "claude",
    ("copilot", "native_events_with_extensions_and_task_complete.jsonl"): "copilot",
    ("copilot", "pretty_print_tools_and_footer.log"): "copilot",
    ("copilot", "responses_snapshots_refusal_filter_and_truncation.log"): "copilot",
    ("copilot", "responses_stream_refusal_events.log"): "copilot",
    ("cursor", "historical_text_final_answer.txt"): None,
    ("cursor", "stream_json_session.jsonl"): "cursor",
    ("custom", "claude_compatible_with_native_events.jsonl"): "claude",
    ("custom", "codex_jsonl_delegate.jsonl"): "codex",
    ("custom", "goose_and_opencode_signatures_tie.jsonl"): "goose",
    ("custom", "unrecognized_only.jsonl"): None,
    ("gemini", "message_id_snapshots.jsonl"): "gemini",
    ("gemini", "stream_json_session_with_deltas_and_stats.jsonl"): "gemini",
    ("goose", "error_only_max_turns.jsonl"): None,
    ("goose", "stream_json_session.jsonl"): "goose",
    ("opencode", "run_format_json_session.jsonl"): "opencode",
    ("pi", "flat_jsonl_session.jsonl"): "pi",
    ("pi", "historical_pi_observations.jsonl"): "copilot",
    ("pi", "v3_stream_two_turns_partial_and_errors.jsonl"): "pi",
    ("pi", "v3_auxiliary_compaction_usage.jsonl"): "pi",
    ("pydantic-ai", "authentication_401_no_stream_traceback.txt"): "pydantic-ai",
    ("pydantic-ai", "coding_agent_banner_answer_not_claimed.txt"): "pydantic-ai",
    ("pydantic-ai", "no_stream_answer.txt"): "pydantic-ai",
    ("pydantic-ai", "prose_mentioning_pydantic_ai_cli.txt"): None,
    ("pydantic-ai", "quiet_answer_without_header.txt"): None,
    ("pydantic-ai", "rate_limit_429_chained_traceback.txt"): "pydantic-ai",
    ("pydantic-ai", "streamed_answer_without_final_newline.txt"): "pydantic-ai",
    ("pydantic-ai", "streamed_tool_call_wrapped_header.txt"): "pydantic-ai",
    ("pydantic-ai", "tool_exception_pending_call_then_traceback.txt"): "pydantic-ai",
}


@pytest.mark.uas("T-UAS-041", "T-UAS-025")
@pytest.mark.parametrize("engine,name", parser_fixtures())
def test_detection_of_every_fixture_is_deterministic(engine: str, name: str) -> None:
    expected = EXPECTED_DETECTION[(engine, name)]
    text = fixture_text(engine, name)
    if expected is None:
        with pytest.raises(UnrecognizedFormatError):
            detect_engine(text)
    else:
        assert detect_engine(text) == expected
        assert parse(text).engine == expected
