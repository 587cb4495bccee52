"""Realistic agent events for the benchmarks (1-2 KiB canonical each)."""

from __future__ import annotations

from typing import Any


def model_http_call(i: int = 0) -> dict[str, Any]:
    """An http_call entry body for a chat completion with one tool call."""
    return {
        "request": {
            "method": "POST",
            "path": "/v1/chat/completions",
            "query": {},
            "headers": {
                "authorization": "[redacted]",
                "content-type": "application/json",
                "user-agent": "agent-runtime/2.4.1 httpx/0.28.1",
                "x-request-id": f"req-{i:08d}-7c1e",
            },
            "text": (
                '{"model":"gpt-4.1-mini","temperature":0.2,"messages":['
                '{"role":"system","content":"You are a claims assistant for Northwind '
                'Insurance. Use the tools to look up policies before answering."},'
                '{"role":"user","content":"Customer 4471 asks whether water damage from '
                'the upstairs flat on 12 October is covered under policy HX-20931."}],'
                '"tools":[{"type":"function","function":{"name":"lookup_policy"}}]}'
            ),
        },
        "response": {
            "status": 200,
            "streamed": False,
            "media_type": "application/json",
            "complete": True,
            "headers": {"content-type": "application/json", "x-ratelimit-remaining": "4999"},
            "text": (
                '{"id":"chatcmpl-9f2","object":"chat.completion","choices":[{"index":0,'
                '"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function",'
                '"function":{"name":"lookup_policy","arguments":"{\\"policy\\":\\"HX-20931\\"}"}}]},'
                '"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":412,"completion_tokens":23}}'
            ),
        },
        "model": "gpt-4.1-mini",
        "latency_ms": 842.5,
        "attempt": 1,
    }


def tool_call(i: int = 0) -> dict[str, Any]:
    """A tool_call entry body with a structured result."""
    return {
        "tool": "lookup_policy",
        "args": ["HX-20931"],
        "kwargs": {"include_endorsements": True, "as_of": "2026-10-12"},
        "result": {
            "policy": "HX-20931",
            "holder": {"name": "Dana Whitfield", "customer": 4471, "since": "2019-03-01"},
            "cover": [
                {"peril": "escape_of_water", "limit": 250000, "excess": 350, "active": True},
                {"peril": "fire", "limit": 500000, "excess": 250, "active": True},
                {"peril": "accidental_damage", "limit": 0, "excess": 0, "active": False},
            ],
            "notes": "Escape of water covered when the source is a neighbouring property; "
            "excess applies once per claim. Endorsement E-12 adds alternative "
            "accommodation up to 45 days.",
            "score": 0.93,
            "call": i,
        },
    }


def entry(body: dict[str, Any], kind: str, step: int) -> dict[str, Any]:
    """Wrap a body the way a recorded entry carries it."""
    return {
        "v": 2,
        "alg": "blake2b-256",
        "run_id": "run-01JD4Z6Q8XK1",
        "step": step,
        "kind": kind,
        "prov": "observed",
        "ts": "2026-11-29T21:30:00.123456+00:00",
        "prev": "9c1f" * 16,
        "data": body,
    }


def typical_events(n: int) -> list[dict[str, Any]]:
    """``n`` events alternating model HTTP calls and tool calls."""
    return [
        entry(model_http_call(i), "http_call", i) if i % 2 == 0 else entry(tool_call(i), "tool_call", i)
        for i in range(n)
    ]
