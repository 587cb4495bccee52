"""Benchmark: unified-session collection throughput and the compact reader's memory.

For each size (MB of source artifacts) a runtime root is generated with a
realistic mix - a canonical agent stream, MCP gateway RPC logs, AWF audit
and token-usage logs and an OTLP mirror - and ``unify`` is timed.  The
baseline, measured in the same run on the same files, is the floor cost of
merely reading every file and decoding every JSON line with the stdlib.

Collection memory is measured per size in a fresh subprocess that only
runs ``unify`` on the generated root (its VmHWM, so neither generation nor
the baseline decode nor an earlier size inflates it); its output must be
byte-identical to the in-process run.  The compact reader's peak RSS is
measured the same way: one process that only imports the module
(baseline) and one that compacts the largest unified file; the
difference is what bounded framing costs.

Usage: python benchmarks/sessions_unify.py [--sizes 1,10,100] [--keep DIR]
Goal: >= 20 MB/s of unified collection.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bitexact.sessions.unify import unify

BASE_MS = 1_790_899_200_000


def _iso(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _agent_events(i: int) -> list[dict]:
    ms = BASE_MS + i * 40
    call = f"call-{i}"
    return [
        {"type": "assistant.reasoning", "id": f"r{i}", "timestamp": _iso(ms),
         "data": {"content": "Considering the failing test in module %d; next I will read the file.\n" % i}},
        {"type": "tool.execution_start", "id": f"s{i}", "timestamp": _iso(ms + 5),
         "data": {"toolCallId": call, "toolName": "bash", "input": {"command": f"pytest tests/test_{i}.py -q"}}},
        {"type": "tool.execution_complete", "id": f"c{i}", "parentId": f"s{i}", "timestamp": _iso(ms + 25),
         "data": {"toolCallId": call, "toolName": "bash", "success": i % 7 != 0, "durationMs": 20,
                  "output": ("collected 12 items\n" + "." * 12 + "\n12 passed in 0.31s\n") * 3}},
        {"type": "assistant.message", "id": f"m{i}", "timestamp": _iso(ms + 30),
         "data": {"content": f"Test batch {i} finished; continuing with the next module.\n", "messageId": f"msg-{i}"}},
    ]


def _mcp(i: int) -> list[dict]:
    ms = BASE_MS + i * 40 + 7
    return [
        {"timestamp": _iso(ms), "type": "REQUEST", "server_id": "github", "id": i, "method": "tools/call",
         "params": {"name": "search_code", "arguments": {"q": f"repo:octo/repo symbol_{i}"}}},
        {"timestamp": _iso(ms + 9), "type": "RESPONSE", "server_id": "github", "id": i, "duration_ms": 9,
         "result": {"content": [{"type": "text", "text": "match " * 40}]}},
    ]


def _firewall(i: int) -> tuple[dict, dict]:
    ms = BASE_MS + i * 40 + 3
    access = {"ts": ms / 1000, "host": "api.github.com", "method": "CONNECT", "status": 200, "decision": "allowed",
              "bytes": 5120 + i, "url": f"https://api.github.com/repos/octo/repo/contents/f{i}"}
    usage = {"ts": ms + 1, "provider": "anthropic", "model": "claude-x", "purpose": "agent", "request_id": f"req-{i}",
             "status": 200, "duration_ms": 812, "input_tokens": 1200 + i, "output_tokens": 80, "aic": 0.01}
    return access, usage


def _otel(i: int) -> dict:
    start = (BASE_MS + i * 40) * 1_000_000
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]},
                               "scopeSpans": [{"scope": {"name": "gh-aw"}, "spans": [
                                   {"traceId": "t" * 32, "spanId": f"{i:016x}", "name": "tool.call",
                                    "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 20_000_000),
                                    "events": [{"name": "done", "timeUnixNano": str(start + 19_000_000)}]}]}]}]}


def generate(root: Path, megabytes: int) -> int:
    """Write a runtime root of about ``megabytes`` MB; returns the exact source bytes."""
    target = megabytes * 1_000_000
    files = {name: (root / name).open("w", encoding="utf-8") for name in (
        "agent-session.jsonl", "mcp-logs/rpc-messages.jsonl", "sandbox/firewall/logs/audit.jsonl",
        "sandbox/firewall/logs/token-usage.jsonl", "otel.jsonl") if (root / name).parent.mkdir(parents=True, exist_ok=True) or True}
    (root / "agent" ).mkdir(exist_ok=True)
    (root / "agent" / "aw_info.json").write_text(json.dumps({"engine_id": "claude", "run_id": 1, "model": "claude-x"}))
    written, i = 0, 0
    dump = lambda r: json.dumps(r, separators=(",", ":")) + "\n"
    while written < target:
        chunks = {
            "agent-session.jsonl": "".join(dump(e) for e in _agent_events(i)),
            "mcp-logs/rpc-messages.jsonl": "".join(dump(e) for e in _mcp(i)),
        }
        access, usage = _firewall(i)
        chunks["sandbox/firewall/logs/audit.jsonl"] = dump(access)
        chunks["sandbox/firewall/logs/token-usage.jsonl"] = dump(usage)
        if i % 4 == 0:
            chunks["otel.jsonl"] = dump(_otel(i))
        for name, text in chunks.items():
            files[name].write(text)
            written += len(text.encode("utf-8"))
        i += 1
    for handle in files.values():
        handle.close()
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def baseline_decode(root: Path) -> float:
    """Seconds to read every file and ``json.loads`` every line (the floor)."""
    start = time.perf_counter()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            for line in path.read_bytes().splitlines():
                if line.strip():
                    json.loads(line)
    return time.perf_counter() - start


# VmHWM is the peak RSS of this process's own address space; ru_maxrss would
# include the parent's peak inherited across fork/exec on Linux.
_RSS_PROBE = """
import sys
from bitexact.sessions.compact import compact
if sys.argv[1] != '-':
    result = compact(sys.argv[1])
    print(result['includedEvents'], result['omittedEvents'], file=sys.stderr)
for line in open('/proc/self/status'):
    if line.startswith('VmHWM:'):
        print(int(line.split()[1]))
"""


_UNIFY_PROBE = """
import sys, time
from pathlib import Path
from bitexact.sessions.unify import unify
start = time.perf_counter()
if sys.argv[1] != '-':
    unify(Path(sys.argv[1]), Path(sys.argv[2]), env={})
elapsed = time.perf_counter() - start
for line in open('/proc/self/status'):
    if line.startswith('VmHWM:'):
        print(int(line.split()[1]), elapsed)
"""


def unify_peak_rss_kib(root: str, out: str) -> tuple[int, float]:
    """(Peak RSS KiB, seconds) of a fresh process that only runs ``unify`` (``-`` = import only)."""
    done = subprocess.run([sys.executable, "-c", _UNIFY_PROBE, root, out], capture_output=True, text=True,
                          check=True)
    rss, seconds = done.stdout.split()
    return int(rss), float(seconds)


def peak_rss_kib(path: str) -> int:
    """Peak RSS (KiB) of a fresh process that compacts ``path`` (``-`` = import only)."""
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE, path], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1,10,100", help="comma-separated source sizes in MB")
    parser.add_argument("--keep", default=None, help="keep generated artifacts under this directory")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="uas-bench-"))
    print(f"{'size':>6} {'source MB':>10} {'records':>9} {'unify s':>8} {'MB/s':>7} {'baseline MB/s':>14} "
          f"{'ratio':>6} {'unify RSS MiB':>14} {'largest src MB':>15} {'fresh s':>8} {'fresh MB/s':>10}")
    idle_unify, _ = unify_peak_rss_kib("-", "-")
    largest_out = None
    try:
        for megabytes in sizes:
            root = work / f"root-{megabytes}mb"
            if root.exists():
                shutil.rmtree(root)
            root.mkdir(parents=True)
            source = generate(root, megabytes)
            base = baseline_decode(root)
            out = work / f"aw_session-{megabytes}mb.jsonl"
            start = time.perf_counter()
            report = unify(root, out, env={})
            elapsed = time.perf_counter() - start
            mb = source / 1_000_000
            fresh_out = work / f"aw_session-{megabytes}mb-fresh.jsonl"
            rss, fresh = unify_peak_rss_kib(str(root), str(fresh_out))
            if fresh_out.read_bytes() != out.read_bytes():
                raise SystemExit(f"{megabytes} MB: the fresh-process output differs from the in-process one")
            fresh_out.unlink()
            largest = max(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1_000_000
            print(f"{megabytes:>4}MB {mb:>10.1f} {report.records:>9} {elapsed:>8.2f} {mb / elapsed:>7.1f} "
                  f"{mb / base:>14.1f} {base / elapsed:>6.2f} {rss / 1024:>14.0f} {largest:>15.1f} {fresh:>8.2f} "
                  f"{mb / fresh:>10.1f}")
            largest_out = out
        if largest_out is not None:
            idle = peak_rss_kib("-")
            busy = peak_rss_kib(str(largest_out))
            size_mb = largest_out.stat().st_size / 1_000_000
            print(f"compact reader on a {size_mb:.1f} MB unified file: peak RSS {busy / 1024:.1f} MiB "
                  f"(import-only baseline {idle / 1024:.1f} MiB, difference {(busy - idle) / 1024:.1f} MiB)")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"ratio = baseline seconds / unify seconds (baseline: read files + json.loads per line); "
          f"unify RSS = peak RSS (VmHWM) of a fresh process running only unify on that root "
          f"(import-only baseline {idle_unify / 1024:.0f} MiB; collection holds a constant plus the source "
          f"being read, so it follows the largest source file); fresh s / MB/s = that process's unify time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
