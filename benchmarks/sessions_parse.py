"""Parser throughput: MB/s of generated engine logs, per engine and size.

    .venv/bin/python benchmarks/sessions_parse.py [--sizes 1,10,100] [--engines claude,codex] [--repeat 3]
    .venv/bin/python benchmarks/sessions_parse.py --instructions [--sizes 1] [--engines claude,codex]

For each engine a realistic log is generated to each size (MB = 10**6 bytes
of UTF-8), parsed with ``bitexact.sessions.parse(text, engine)``, and the
throughput printed.  Linearity is shown as seconds per MB at each size
relative to the smallest size (1.00 = perfectly linear).  The baseline,
measured in the same run on the same bytes, is the bare decode floor:
``json.loads`` of every line (or the text split into lines for text
layouts); ``vs decode`` is parse time / baseline time.  Goal: >= 20 MB/s.

``--instructions`` prints instead the instructions callgrind counts for parsing each engine's log of each
size: two processes under ``valgrind --tool=callgrind`` per size, both building the log and parsing its first
50 KB (imports, caches), one then parsing it whole; the difference is the parse's. The machine's other load
does not move it (a minute or two per engine and size; needs valgrind). Run it with each tree's ``src`` on
``PYTHONPATH`` for an A/B.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from bitexact.sessions import parse

MB = 1_000_000


def _j(record: object) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def claude_block(i: int) -> str:
    return "".join([
        _j({"type": "assistant", "message": {"id": f"msg-{i}", "model": "claude-example", "role": "assistant", "content": [
            {"type": "thinking", "thinking": f"Considering step {i} of the plan. " * 3},
            {"type": "text", "text": f"Running the check for item {i}.\n"},
            {"type": "tool_use", "id": f"toolu-{i}", "name": "mcp__github__search_issues", "input": {"query": f"label:bug {i}", "per_page": 10}}],
            "usage": {"input_tokens": 1200 + i % 7, "output_tokens": 80, "cache_read_input_tokens": 900}}, "session_id": "s", "uuid": f"u-{i}"}),
        _j({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu-{i}", "content": [{"type": "text", "text": "{\"total_count\": 3, \"items\": []}" * 4}], "is_error": False}]}, "session_id": "s", "uuid": f"v-{i}"}),
    ])


def copilot_block(i: int) -> str:
    return "".join([
        _j({"type": "assistant.message_delta", "id": f"d{i}a", "data": {"messageId": f"m{i}", "deltaContent": "Working on "}}),
        _j({"type": "assistant.message_delta", "id": f"d{i}b", "data": {"messageId": f"m{i}", "deltaContent": f"item {i}.\n"}}),
        _j({"type": "assistant.message", "id": f"a{i}", "data": {"messageId": f"m{i}", "content": f"Working on item {i}.\n"}}),
        _j({"type": "tool.execution_start", "id": f"s{i}", "data": {"toolCallId": f"call-{i}", "toolName": "bash", "command": f"grep -rn TODO src/{i}", "input": {}}}),
        _j({"type": "tool.execution_complete", "id": f"c{i}", "data": {"toolCallId": f"call-{i}", "success": True, "result": {"content": [{"type": "text", "text": "src/a.py:1: TODO\n" * 6}]}}}),
    ])


def codex_block(i: int) -> str:
    return "".join([
        _j({"type": "item.completed", "item": {"id": f"r{i}", "type": "reasoning", "text": f"**Plan** step {i}: inspect files and run tests. " * 2}}),
        _j({"type": "item.started", "item": {"id": f"c{i}", "type": "command_execution", "command": f"bash -lc 'pytest -k t{i}'", "aggregated_output": "", "status": "in_progress"}}),
        _j({"type": "item.completed", "item": {"id": f"c{i}", "type": "command_execution", "command": f"bash -lc 'pytest -k t{i}'", "aggregated_output": "collected 3 items\n...\n3 passed\n" * 3, "exit_code": 0, "status": "completed"}}),
        _j({"type": "item.completed", "item": {"id": f"m{i}", "type": "agent_message", "text": f"Step {i} done.\n"}}),
        _j({"type": "turn.completed", "usage": {"input_tokens": 1500, "output_tokens": 120, "cached_input_tokens": 1000}}),
    ])


def gemini_block(i: int) -> str:
    return "".join([
        _j({"type": "message", "timestamp": "2026-10-02T00:00:01.000Z", "role": "assistant", "content": f"Chunk {i} ", "delta": True}),
        _j({"type": "message", "timestamp": "2026-10-02T00:00:01.000Z", "role": "assistant", "content": "of the answer.\n", "delta": True}),
        _j({"type": "tool_use", "timestamp": "2026-10-02T00:00:02.000Z", "tool_name": "read_file", "tool_id": f"read-{i}", "parameters": {"absolute_path": f"/w/src/file{i}.py"}}),
        _j({"type": "tool_result", "timestamp": "2026-10-02T00:00:02.500Z", "tool_id": f"read-{i}", "status": "success", "output": "def f():\n    return 1\n" * 8}),
    ])


def pi_block(i: int) -> str:
    msg = {"role": "assistant", "content": [], "timestamp": 1000 + i, "model": "pi-model", "provider": "example"}
    final = dict(msg, content=[{"type": "text", "text": f"Answer part {i}.\n"}, {"type": "toolCall", "id": f"pc-{i}", "name": "bash", "arguments": {"command": f"ls dir{i}"}}],
                 usage={"input": 900, "output": 40, "cacheRead": 500, "cacheWrite": 0})
    return "".join([
        _j({"type": "message_start", "message": msg}),
        _j({"type": "message_update", "message": msg, "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "Answer part "}}),
        _j({"type": "message_update", "message": msg, "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": f"{i}.\n"}}),
        _j({"type": "message_end", "message": final}),
        _j({"type": "tool_execution_start", "toolCallId": f"pc-{i}", "toolName": "bash", "args": {"command": f"ls dir{i}"}}),
        _j({"type": "tool_execution_end", "toolCallId": f"pc-{i}", "toolName": "bash", "result": {"content": [{"type": "text", "text": "a\nb\nc\n" * 5}]}, "isError": False}),
        _j({"type": "turn_end", "message": final, "toolResults": []}),
    ])


def opencode_block(i: int) -> str:
    return "".join([
        _j({"type": "text", "timestamp": 1759363200000 + i, "sessionID": "ses_1", "part": {"id": f"t{i}", "messageID": f"msg{i}", "type": "text", "text": f"Looking at file {i}.\n"}}),
        _j({"type": "tool_use", "timestamp": 1759363200000 + i, "sessionID": "ses_1", "part": {"id": f"p{i}", "callID": f"call{i}", "tool": "read", "type": "tool",
            "state": {"status": "completed", "input": {"filePath": f"/w/f{i}.ts"}, "output": "export const x = 1;\n" * 8, "time": {"start": 1, "end": 5}}}}),
        _j({"type": "step_finish", "timestamp": 1759363200000 + i, "sessionID": "ses_1", "part": {"id": f"s{i}", "type": "step-finish", "cost": 0.001, "tokens": {"input": 800, "output": 50, "reasoning": 0, "cache": {"read": 400, "write": 0}}}}),
    ])


def goose_block(i: int) -> str:
    def m(mid: str, role: str, content: list) -> str:
        return _j({"type": "message", "message": {"id": mid, "role": role, "created": 1759363200 + i, "content": content}})
    return "".join([
        m(f"a{i}", "assistant", [{"type": "text", "text": f"Step {i}: "}]),
        m(f"a{i}", "assistant", [{"type": "text", "text": "checking the repository.\n"}]),
        m(f"a{i}", "assistant", [{"type": "toolRequest", "id": f"g{i}", "toolCall": {"status": "success", "value": {"name": "developer__shell", "arguments": {"command": f"ls src/{i}"}}}}]),
        m(f"u{i}", "user", [{"type": "toolResponse", "id": f"g{i}", "toolResult": {"status": "success", "value": [{"type": "text", "text": "main.rs\nlib.rs\n" * 6}]}}]),
    ])


def cursor_block(i: int) -> str:
    return "".join([
        _j({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": f"Reading file {i}.\n"}]}, "session_id": "cur"}),
        _j({"type": "tool_call", "subtype": "started", "call_id": f"c{i}", "tool_call": {"readToolCall": {"args": {"path": f"src/f{i}.ts"}}}, "session_id": "cur"}),
        _j({"type": "tool_call", "subtype": "completed", "call_id": f"c{i}", "tool_call": {"readToolCall": {"args": {"path": f"src/f{i}.ts"}, "result": {"success": {"content": "line\n" * 20, "totalLines": 20}}}}, "session_id": "cur"}),
    ])


def custom_block(i: int) -> str:
    return claude_block(i).replace('"session_id": "s"', '"session_id": "custom"')


def aider_block(i: int) -> str:
    """Aider's console output (7.6 plaintext sample): the startup block once, then edit rounds."""
    head = ("Aider v0.86.2\nMain model: gpt-4o with diff edit format\nWeak model: gpt-4o-mini\n"
            "Git repo: .git with 12 files\nRepo-map: using 4096 tokens, auto refresh\n\n") if i == 0 else ""
    return head + (
        f"I'll update module {i} so the handler validates its input.\n\nsrc/m{i}.py\n```python\n<<<<<<< SEARCH\n"
        f"def handle(x):\n    return x\n=======\ndef handle(x):\n    check(x)\n    return x\n>>>>>>> REPLACE\n```\n\n"
        f"Tokens: 2.{i % 10}k sent, 67 received. Cost: $0.0065 message, $0.{i % 9000 + 1000} session.\n"
        f"Applied edit to src/m{i}.py\nCommit {i:07x} feat: validate input in module {i}\n\n"
    )


def pydantic_ai_block(i: int) -> str:
    """clai's streamed console output (7.6 plaintext sample): the header once, then answer pieces and tool lines."""
    head = "clai - Pydantic AI CLI v2.62.0 with openai:gpt-4o\n" if i == 0 else ""
    return head + (
        f"{f'Looking up the forecast for city {i}.':<80}\n"
        f"{'▌ Called tool get_weather.':<80}\n"
        f"{f'City {i}: sunny, 21 C, light wind from the west.':<80}\n\n"
    )


GENERATORS: dict[str, Callable[[int], str]] = {
    "claude": claude_block, "copilot": copilot_block, "codex": codex_block, "gemini": gemini_block,
    "pi": pi_block, "custom": custom_block, "opencode": opencode_block, "goose": goose_block, "cursor": cursor_block,
    "aider": aider_block, "pydantic-ai": pydantic_ai_block,
}
TEXT_LAYOUTS = frozenset({"aider", "pydantic-ai"})
"""Engines whose generated log is console text: their baseline only splits it into lines."""


def build(engine: str, size_mb: int) -> str:
    target = size_mb * MB
    parts: list[str] = []
    total = 0
    i = 0
    block = GENERATORS[engine]
    while total < target:
        chunk = block(i)
        parts.append(chunk)
        total += len(chunk.encode("utf-8"))
        i += 1
    return "".join(parts)


def baseline(text: str, *, json_lines: bool = True) -> float:
    start = time.perf_counter()
    if not json_lines:
        text.split("\n")
        return time.perf_counter() - start
    loads = json.loads
    for line in text.split("\n"):
        if line:
            loads(line)
    return time.perf_counter() - start


def measure(engine: str, text: str, repeat: int) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = parse(text, engine)
        best = min(best, time.perf_counter() - start)
        count = len(result.events)
    return best, count


def _instructions_child(engine: str, size_mb: int, whole: bool) -> None:
    """The measured process of ``--instructions``: build the log, warm up on its start, then parse it whole or not."""
    text = build(engine, size_mb)
    parse(text[:50_000], engine)
    if whole:
        parse(text, engine)


def instructions(engine: str, size_mb: int) -> int:
    """Instructions callgrind counts for ``parse`` of ``engine``'s generated log of ``size_mb`` MB."""
    counts = []
    for whole in (True, False):
        with tempfile.TemporaryDirectory(prefix="sessions-parse-callgrind-") as scratch:
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out", sys.executable,
                            __file__, "--child", engine, str(size_mb), "1" if whole else "0"],
                           env={**os.environ, "PYTHONHASHSEED": "0"}, check=True, capture_output=True)
            found = re.search(r"^(?:summary|totals): (\d+)", Path(scratch, "out").read_text(), re.M)
            assert found is not None, "callgrind wrote no total"
            counts.append(int(found.group(1)))
    return counts[0] - counts[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,10", help="comma-separated sizes in MB (e.g. 1,10,100)")
    parser.add_argument("--engines", default=",".join(GENERATORS), help="comma-separated engines")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per size")
    parser.add_argument("--instructions", action="store_true", help="count instructions with callgrind instead")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _instructions_child(args.child[0], int(args.child[1]), args.child[2] == "1")
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s]
    engines = [e for e in args.engines.split(",") if e]
    if args.instructions:
        for engine in engines:
            for size in sizes:
                print(f"{engine:11} {size:4d} MB {instructions(engine, size) / 1e6:9.1f} M instructions", flush=True)
        return 0
    print(f"{'engine':9} {'MB':>5} {'events':>9} {'seconds':>8} {'MB/s':>7} {'s/MB vs first':>14} {'decode MB/s':>11} {'vs decode':>9}")
    worst = float("inf")
    for engine in engines:
        parse(build(engine, 1)[:200_000], engine)  # warm-up: imports and caches, not timed
        first_rate: float | None = None
        for size in sizes:
            text = build(engine, size)
            nbytes = len(text.encode("utf-8"))
            seconds, count = measure(engine, text, args.repeat)
            base = baseline(text, json_lines=engine not in TEXT_LAYOUTS)
            per_mb = seconds / (nbytes / MB)
            first_rate = per_mb if first_rate is None else first_rate
            rate = nbytes / MB / seconds
            worst = min(worst, rate)
            print(f"{engine:9} {nbytes / MB:5.1f} {count:9d} {seconds:8.3f} {rate:7.1f} {per_mb / first_rate:14.2f} {nbytes / MB / base:11.1f} {seconds / base:9.2f}")
            del text
        sys.stdout.flush()
    print(f"slowest: {worst:.1f} MB/s (goal >= 20 MB/s: {'met' if worst >= 20 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
