"""Usage and session accounting (UAS section 6, T-UAS-030..035, Appendix C)."""

from __future__ import annotations

import pytest

from bitexact.sessions import parse
from bitexact.sessions.usage import (
    MAX_SAFE_INTEGER,
    UsageAccumulator,
    display_total,
    normalize_usage,
    read_token,
    select_accounting,
)
from uas_parser_helpers import datas, fixture_text, jsonl


@pytest.mark.uas("T-UAS-030")
def test_canonical_zero_wins_over_alias_and_aliases_are_not_summed() -> None:
    usage = {"input_tokens": 0, "inputTokens": 99, "outputTokens": 2}
    assert read_token(usage, "input_tokens") == 0
    assert read_token(usage, "output_tokens") == 2
    normalized = normalize_usage(usage)
    assert normalized["input_tokens"] == 0 and normalized["output_tokens"] == 2
    assert normalized["inputTokens"] == 99  # supplied aliases are preserved, not added


@pytest.mark.uas("T-UAS-030")
def test_every_alias_maps_to_its_canonical_name() -> None:
    usage = {"inputTokens": 1, "outputTokens": 2, "cacheCreationInputTokens": 3, "cacheReadInputTokens": 4,
             "output_tokens_details": {"thinking_tokens": 5}, "native_extra": {"x": 1}}
    assert normalize_usage(usage) == {
        "input_tokens": 1, "output_tokens": 2, "reasoning_output_tokens": 5,
        "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4,
        "inputTokens": 1, "outputTokens": 2, "cacheCreationInputTokens": 3, "cacheReadInputTokens": 4,
        "output_tokens_details": {"thinking_tokens": 5}, "native_extra": {"x": 1},
    }
    explicit = normalize_usage({"reasoning_output_tokens": 0, "output_tokens_details": {"thinking_tokens": 7}})
    assert explicit["reasoning_output_tokens"] == 0


@pytest.mark.uas("T-UAS-031")
@pytest.mark.parametrize("bad", [-1, 1.5, "10", None, True, float("inf"), MAX_SAFE_INTEGER + 1])
def test_invalid_counts_never_become_zero(bad) -> None:
    normalized = normalize_usage({"input_tokens": bad, "output_tokens": 4})
    assert "input_tokens" not in normalized and normalized["output_tokens"] == 4
    assert normalized["invalid_tokens"] == {"input_tokens": bad}
    assert read_token({"input_tokens": bad, "inputTokens": 5}, "input_tokens") is None


@pytest.mark.uas("T-UAS-031")
def test_display_total_does_not_double_count_cache() -> None:
    assert display_total({"input_tokens": 30, "output_tokens": 8, "cache_read_input_tokens": 6, "input_tokens_include_cache": True})[0] == 38
    assert display_total({"input_tokens": 30, "output_tokens": 8, "cache_read_input_tokens": 6})[0] == 38
    assert display_total({"input_tokens": 30, "output_tokens": 8, "cache_read_input_tokens": 6, "input_tokens_include_cache": False})[0] == 44
    assert display_total({"total_tokens": 50, "input_tokens": 1}) == (50, "source total_tokens")
    assert display_total({"cache_read_input_tokens": 6}) is None


@pytest.mark.uas("T-UAS-031")
def test_overflow_makes_a_field_unavailable_until_a_snapshot_replaces_it() -> None:
    acc = UsageAccumulator()
    acc.add({"input_tokens": MAX_SAFE_INTEGER, "output_tokens": 1})
    acc.add({"input_tokens": 1, "output_tokens": 1})
    acc.add({"input_tokens": 1})
    assert acc.usage() == {"output_tokens": 2, "overflowed_tokens": ["input_tokens"]}
    acc.snapshot({"input_tokens": 10})
    assert acc.usage() == {"input_tokens": 10, "output_tokens": 2}


@pytest.mark.uas("T-UAS-032", "T-UAS-034")
def test_appendix_c_codex_two_turns() -> None:
    text = jsonl(
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 3, "cached_input_tokens": 2}},
        {"type": "turn.completed", "usage": {"input_tokens": 20, "output_tokens": 5, "cached_input_tokens": 4}},
    )
    (result,) = datas(parse(text, "codex").events, "session.result")
    assert result["numTurns"] == 2
    assert result["usage"] == {"input_tokens": 30, "output_tokens": 8, "cache_read_input_tokens": 6}
    assert "durationMs" not in result and "totalCostUsd" not in result


@pytest.mark.uas("T-UAS-032", "T-UAS-033")
def test_appendix_c_pi_two_finalized_turns_and_repeated_snapshots() -> None:
    def turn(ts: int, usage: dict) -> dict:
        return {"role": "assistant", "content": [], "timestamp": ts, "usage": usage}

    first = turn(1, {"input": 10, "output": 3, "cacheRead": 2, "cacheWrite": 0})
    second = turn(2, {"input": 20, "output": 5, "cacheRead": 4, "cacheWrite": 1})
    text = jsonl(
        {"type": "message_end", "message": first}, {"type": "turn_end", "message": first},
        {"type": "message_end", "message": second}, {"type": "turn_end", "message": second},
        {"type": "turn_end", "message": second},  # a duplicate observation of the same report
    )
    (result,) = datas(parse(text, "pi").events, "session.result")
    assert result["numTurns"] == 2
    assert result["usage"] == {"input_tokens": 30, "output_tokens": 8, "cache_creation_input_tokens": 1, "cache_read_input_tokens": 6}


@pytest.mark.uas("T-UAS-033")
def test_terminal_snapshot_is_not_another_contribution() -> None:
    events = parse(fixture_text("codex", "jsonl_lifecycle_two_turns_and_snapshot.jsonl"), "codex").events
    result = datas(events, "session.result")[-1]
    assert result["usage"] == {"input_tokens": 30, "output_tokens": 8, "cache_read_input_tokens": 6}
    assert result["numTurns"] == 2


@pytest.mark.uas("T-UAS-033")
def test_reader_selection_takes_latest_value_per_metric_and_never_sums() -> None:
    events = [
        {"type": "session.result", "data": {"numTurns": 2, "usage": {"input_tokens": 30, "output_tokens": 8}, "errors": ["a"]}},
        {"type": "vendor.after", "data": {}},
        {"type": "session.result", "data": {"usage": {"inputTokens": 31}, "durationMs": 0, "errors": ["b"]}},
    ]
    assert select_accounting(events) == {
        "numTurns": 2, "durationMs": 0, "usage": {"input_tokens": 31, "output_tokens": 8}, "errors": ["a", "b"],
    }


@pytest.mark.uas("T-UAS-034")
def test_gemini_tool_calls_are_not_turns_and_cache_is_included_in_input() -> None:
    events = parse(fixture_text("gemini", "stream_json_session_with_deltas_and_stats.jsonl"), "gemini").events
    (result,) = datas(events, "session.result")
    assert "numTurns" not in result and result["stats"]["tool_calls"] == 4
    assert result["usage"]["cache_read_input_tokens"] == 6 and result["usage"]["input_tokens_include_cache"] is True
    assert result["durationMs"] == 0
    assert "totalCostUsd" not in result and "cache_creation_input_tokens" not in result["usage"]


@pytest.mark.uas("T-UAS-034")
def test_copilot_turns_only_from_explicit_turns_line() -> None:
    pretty = datas(parse(fixture_text("copilot", "pretty_print_tools_and_footer.log"), "copilot").events, "session.result")
    assert pretty == [{"numTurns": 3, "model": "example-model"}]
    debug = datas(parse(fixture_text("copilot", "debug_responses_with_incomplete_tool_calls.log"), "copilot").events, "session.result")
    assert "numTurns" not in debug[0]


@pytest.mark.uas("T-UAS-032")
def test_distinct_debug_responses_aggregate_once() -> None:
    events = parse(fixture_text("copilot", "debug_responses_with_incomplete_tool_calls.log"), "copilot").events
    # resp-2 appears twice and counts once.
    assert datas(events, "session.result")[0]["usage"] == {"input_tokens": 220, "output_tokens": 10}


@pytest.mark.uas("T-UAS-035")
def test_distinct_error_observations_stay_distinguishable() -> None:
    text = jsonl({"type": "error", "message": "retry"}, {"type": "error", "message": "retry"})
    (result,) = datas(parse(text, "codex").events, "session.result")
    assert result["errors"] == ["retry", "retry"]
