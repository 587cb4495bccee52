"""Structured policy refusals (UAS 4.3, T-UAS-069)."""

from __future__ import annotations

import json

import pytest

from bitexact.sessions import parse
from uas_parser_helpers import datas, fixture_text, types


def _debug(response: dict) -> str:
    return "t [DEBUG] data: " + json.dumps(response) + "\n"


@pytest.mark.uas("T-UAS-069")
def test_content_filter_with_null_text_is_a_refusal_not_an_empty_answer() -> None:
    events = parse(fixture_text("copilot", "debug_content_filter_refusal.log"), "copilot").events
    assert datas(events, "assistant.refusal") == [{"reason": "content_filter", "responseId": "resp-cf"}]
    assert datas(events, "assistant.message") == []
    # Accounting of the refused response is retained.
    assert datas(events, "session.result")[0]["usage"] == {"input_tokens": 9, "output_tokens": 0}


@pytest.mark.uas("T-UAS-069")
def test_chat_completion_refusal_string_and_refusal_part() -> None:
    message = _debug({"id": "r1", "choices": [{"message": {"content": None, "refusal": "I can't."}, "finish_reason": "stop"}]})
    part = _debug({"id": "r2", "choices": [{"message": {"content": [{"type": "refusal", "refusal": "No."}]}}]})
    filtered_partial = _debug({"id": "r3", "choices": [{"message": {"content": "partial te"}, "finish_reason": "content_filter"}]})
    events = parse(message + part + filtered_partial, "copilot").events
    assert [(d["reason"], d.get("content")) for d in datas(events, "assistant.refusal")] == [
        ("refusal", "I can't."), ("refusal", "No."), ("content_filter", "partial te"),
    ]
    assert datas(events, "assistant.message") == []


@pytest.mark.uas("T-UAS-069")
def test_anthropic_stop_reason_refusal_with_details_merged_once() -> None:
    events = parse(fixture_text("claude", "refusal_stop_reason_with_details.jsonl"), "claude").events
    refusals = datas(events, "assistant.refusal")
    assert refusals == [{
        "reason": "refusal", "content": "I can't help with that.", "policyCategory": "cyber",
        "explanation": "Policy text.", "messageId": "msg-r", "model": "claude-example",
    }]
    assert events[0]["session_id"] == "s-r"
    # A natural-language disclaimer is not a refusal.
    assert datas(events, "assistant.message")[0]["content"] == "I cannot promise anything, but here it is."
    assert types(events).count("assistant.refusal") == 1


@pytest.mark.uas("T-UAS-069")
def test_no_refusal_inferred_from_errors_denials_or_truncation() -> None:
    length = _debug({"id": "r4", "choices": [{"message": {"content": "cut"}, "finish_reason": "length"}]})
    events = parse(length, "copilot").events
    assert datas(events, "assistant.refusal") == []
    for engine, name in [("claude", "errors_retry_and_denials_without_result.jsonl"), ("gemini", "stream_json_session_with_deltas_and_stats.jsonl")]:
        assert datas(parse(fixture_text(engine, name), engine).events, "assistant.refusal") == []


@pytest.mark.uas("T-UAS-069", "T-UAS-021", "T-UAS-037")
def test_streaming_chunks_join_and_refusal_deltas_are_partial_evidence() -> None:
    def chunk(delta: dict, finish=None, cid: str = "c1") -> str:
        return _debug({"id": cid, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    text = (
        chunk({"content": "hel"}) + chunk({"content": "lo"})
        + chunk({"tool_calls": [{"index": 0, "id": "call-s", "function": {"name": "bash", "arguments": "{\"comm"}}]})
        + chunk({"tool_calls": [{"index": 0, "function": {"arguments": "and\":\"ls\"}"}}]}, finish="tool_calls")
        + chunk({"refusal": "I can"}, cid="c2") + chunk({"refusal": "not."}, cid="c2")
        + chunk({"tool_calls": [{"index": 0, "id": "call-cut", "function": {"name": "edit", "arguments": "{\"pa"}}]}, cid="c3")
    )
    events = parse(text, "copilot").events
    assert types(events) == ["assistant.message", "tool.execution_start", "assistant.refusal", "tool.execution_start"]
    assert events[0]["data"] == {"content": "hello", "responseId": "c1"}
    assert events[1]["data"] == {"toolCallId": "call-s", "toolName": "bash", "input": {"command": "ls"}, "responseId": "c1"}
    assert events[2]["data"] == {"reason": "refusal", "content": "I cannot.", "responseId": "c2", "partial": True}
    assert events[3]["data"] == {"toolCallId": "call-cut", "toolName": "edit", "argumentsText": "{\"pa", "responseId": "c3", "partial": True}
