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


@pytest.mark.uas("T-UAS-069", "T-UAS-037")
def test_responses_api_streamed_refusal_is_one_event_completed_by_later_observations() -> None:
    events = parse(fixture_text("copilot", "responses_stream_refusal_events.log")).events
    refusals = datas(events, "assistant.refusal")
    # delta/done/content_part/output_item/terminal snapshot of one logical refusal: one event.
    assert refusals[0] == {"reason": "refusal", "content": "I can't help with that.", "responseId": "resp_s1", "model": "gpt-example"}
    # A refusal stream cut before `done` stays partial evidence.
    assert refusals[1] == {"reason": "refusal", "content": "I won't", "partial": True}
    assert len(refusals) == 2
    assert datas(events, "assistant.message") == []
    assert datas(events, "session.result") == [{"usage": {"input_tokens": 12, "output_tokens": 7}}]


@pytest.mark.uas("T-UAS-069", "T-UAS-037")
def test_responses_api_snapshots_refusal_part_content_filter_and_truncation() -> None:
    events = parse(fixture_text("copilot", "responses_snapshots_refusal_filter_and_truncation.log"), "copilot").events
    assert types(events) == [
        "assistant.message", "assistant.refusal", "tool.execution_start", "assistant.refusal", "assistant.message", "session.result",
    ]
    assert events[1]["data"] == {"reason": "refusal", "content": "I can't share that part.", "responseId": "resp_a", "model": "gpt-example"}
    # The requested call is a start only: no completion, no success.
    assert events[2]["data"] == {"toolCallId": "call_a", "toolName": "bash", "input": {"command": "ls"}, "responseId": "resp_a", "model": "gpt-example"}
    # content_filter carries the filtered partial text and is not an answer.
    assert events[3]["data"] == {"reason": "content_filter", "content": "Here is the fil", "responseId": "resp_b"}
    # max_output_tokens is token truncation, never a refusal, even with disclaimer-like text.
    assert events[4]["data"] == {"content": "I cannot finish because", "responseId": "resp_c"}
    assert events[5]["data"]["usage"] == {"input_tokens": 9, "output_tokens": 7}


@pytest.mark.uas("T-UAS-069")
def test_responses_api_streamed_text_then_content_filter_becomes_the_refusal_content() -> None:
    def line(obj: dict) -> str:
        return _debug(obj)

    text = (
        line({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "abc"})
        + line({"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "de"})
        + line({"type": "response.incomplete", "response": {"id": "r-f", "object": "response", "status": "incomplete",
                "incomplete_details": {"reason": "content_filter"}, "output": []}})
        + line({"type": "response.output_text.delta", "item_id": "m2", "output_index": 0, "content_index": 0, "delta": "ok"})
        + line({"type": "response.output_text.done", "item_id": "m2", "output_index": 0, "content_index": 0, "text": "ok!"})
    )
    events = parse(text, "copilot").events
    assert [(e["type"], e["data"]) for e in events] == [
        ("assistant.refusal", {"reason": "content_filter", "content": "abcde", "responseId": "r-f"}),
        ("assistant.message", {"content": "ok!"}),
    ]
