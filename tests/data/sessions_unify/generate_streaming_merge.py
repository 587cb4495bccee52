"""Writes the ``streaming_merge`` runtime root used by the merger's golden-output test.

Run once (``python generate_streaming_merge.py``); the output is checked in
beside this script, together with ``streaming_merge.expected.jsonl``, the
unified file the in-memory merger (before the streaming writer) produced
for it with ``env=STREAMING_ENV`` of the test.  The tree is deterministic
(seeded) and exercises what the streaming merge must reproduce exactly:

- a large canonical agent stream (leading untimed records, a regressing
  clock, ISO and numeric-millisecond stamps, a far-future stamp beyond
  64-bit nanoseconds, a pre-1970 stamp, malformed lines, a registered mask);
- MCP, AWF audit (seconds) and token-usage (milliseconds) logs sharing
  ordering keys with the agent stream (ties broken by source order);
- an unordered OTLP mirror (spans in reverse order, untimed span events);
- a wholly untimed source (safe-output requests);
- routed ``model_config`` + model-routing records (the baseline estimate);
- stdio ``::add-mask::`` values that must be redacted everywhere.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE / "streaming_merge"
BASE_MS = 1_790_899_200_000
SECRET = "s3cr3t-MASK-value"


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _jsonl(path: Path, records: list, *, extra: dict[int, str] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r, separators=(",", ":")) for r in records]
    for position, text in sorted((extra or {}).items(), reverse=True):
        lines.insert(position, text)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def main() -> None:
    rng = random.Random(20261020)
    if ROOT.exists():
        shutil.rmtree(ROOT)
    ROOT.mkdir()
    (ROOT / "agent-stdio.log").write_text(
        f"::add-mask::{SECRET}\n::add-mask::second-mask-42\n[harness] done: exitCode=0\n", encoding="utf-8")
    agent: list[dict] = [
        {"type": "session.init", "data": {"model": "claude-x", "sessionId": "sess-1"}},
        {"type": "user.message", "data": {"content": f"please use {SECRET} carefully"}},
    ]
    for i in range(600):
        ms = BASE_MS + i * 40 - (900 if i % 97 == 50 else 0)  # occasional regressing clock
        stamp: object = _iso(ms) if i % 5 else ms  # ISO strings and numeric milliseconds
        kind = rng.choice(["assistant.message", "assistant.reasoning", "tool.execution_start"])
        data: dict = {"content": f"step {i}: " + "x" * rng.randint(0, 120)}
        if kind == "tool.execution_start":
            data = {"toolCallId": f"call-{i}", "toolName": "bash", "input": {"command": f"echo {i}"}}
        if i % 113 == 7:
            data["content"] = f"leaked second-mask-42 at {i}\nnext line"
        event = {"type": kind, "id": f"e{i}", "timestamp": stamp, "data": data}
        if i % 61 == 3:
            del event["timestamp"]  # untimed in the middle keeps its anchor
        agent.append(event)
    agent.append({"type": "assistant.message", "id": "far-future", "timestamp": "9999-12-31T23:59:59.999999999Z",
                  "data": {"content": "beyond 64-bit nanoseconds"}})
    agent.append({"type": "session.result", "id": "done", "data": {"numTurns": 600, "status": "success"}})
    _jsonl(ROOT / "agent-session.jsonl", agent, extra={5: "{not json", 40: "[1,2]", 300: ""})

    rpc = []
    for i in range(200):
        ms = BASE_MS + i * 120  # shares keys with agent events (ties)
        rpc.append({"timestamp": _iso(ms), "type": "REQUEST", "server_id": "github", "id": i, "method": "tools/call",
                    "params": {"name": "search_code", "arguments": {"q": f"symbol_{i}"}}})
        rpc.append({"timestamp": _iso(ms + 7), "type": "RESPONSE", "server_id": "github", "id": i, "duration_ms": 7,
                    "result": {"content": [{"type": "text", "text": "match " * rng.randint(1, 10)}]}})
    _jsonl(ROOT / "mcp-logs" / "rpc-messages.jsonl", rpc)

    audit, usage, routing = [], [], []
    for i in range(150):
        ms = BASE_MS + i * 160
        audit.append({"ts": ms / 1000, "host": "api.github.com", "method": "CONNECT", "status": 200,
                      "decision": "allowed", "bytes": 100 + i})
        usage.append({"ts": ms, "provider": "anthropic", "model": "claude-x", "purpose": "agent",
                      "request_id": f"req-{i}", "status": 200, "duration_ms": 800, "input_tokens": 1000 + i,
                      "output_tokens": 80, "aic": 0.01})
        routing.append({"ts": ms - 1, "stage": "request", "request_id": f"req-{i}",
                        "routed": "as_selected" if i % 3 else "deviated", "requested_model": "claude-x"})
    audit.insert(0, {"ts": -12.5, "host": "old.example", "method": "GET", "status": 200, "decision": "allowed"})
    _jsonl(ROOT / "sandbox" / "firewall" / "logs" / "audit.jsonl", audit)
    _jsonl(ROOT / "sandbox" / "firewall" / "logs" / "token-usage.jsonl", usage)
    _jsonl(ROOT / "sandbox" / "firewall" / "logs" / "model-routing.jsonl", routing)

    otel = []
    for i in reversed(range(60)):
        start = (BASE_MS + i * 400) * 1_000_000 + 123
        events = [{"name": "done", "timeUnixNano": str(start + 5)}, {"name": "untimed"}]
        otel.append({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "s"}, "spans": [
            {"traceId": "t" * 32, "spanId": f"{i:016x}", "name": f"op {i}", "startTimeUnixNano": str(start),
             "events": events}]}]}]})
    _jsonl(ROOT / "otel.jsonl", otel)

    _jsonl(ROOT / "safeoutputs" / "outputs.jsonl",
           [{"type": "add_comment", "item_number": i, "body": f"comment {i}"} for i in range(40)])
    (ROOT / "agent").mkdir(exist_ok=True)
    (ROOT / "agent" / "aw_info.json").write_text(json.dumps({
        "engine_id": "claude", "model": "claude-x", "run_id": 77, "run_attempt": 1, "repository": "octo/repo",
        "model_config": {"routing": {"enabled": True, "mode": "auto"}, "baseline_model": "claude-x"},
    }, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
