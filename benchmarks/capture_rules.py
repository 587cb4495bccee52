"""How long a policy's rules take to check for shadowing, for 1k, 4k and 16k rules.

Every process that records parses its policy at start, so this is paid at
each start (audit17 F5: comparing every pair took 12-19 s for 4,000 rules).
Two rule sets: the audit's (one hash-only rule per tool) and a mixed one
(kinds, KEY / KEY.SUBKEY / *.NAME paths, where clauses of one to three
conditions). A/B against another tree by pointing PYTHONPATH at it:

    PYTHONPATH=src .venv/bin/python benchmarks/capture_rules.py [N ...]
    PYTHONPATH=/tmp/pol17-base/src .venv/bin/python benchmarks/capture_rules.py 1000 4000

Measured on the 2-core development machine, other jobs beside it (seconds,
per tool / mixed):

    rules   b4e384b (every pair)    indexed
     1000      0.663 /  0.205     0.009 / 0.011
     4000     11.007 /  3.432     0.038 / 0.045
    16000    193.543 / 54.457     0.168 / 0.198
"""

from __future__ import annotations

import sys
import time
from typing import Any

from bitexact.capture.rules import parse_rules


def per_tool(n: int) -> list[dict[str, Any]]:
    """The audit's set: one hash-only rule per tool."""
    return [{"kind": "tool_call", "where": {"tool": f"t{i}"}, "path": "result", "mode": "hash-only"} for i in range(n)]


def mixed(n: int) -> list[dict[str, Any]]:
    """Rules of every shape, none shadowed, so each is checked against all before it."""
    kinds = ["tool_call", "model", "http_call", "context"]
    rules: list[dict[str, Any]] = []
    for i in range(n):
        where = {"tool": f"t{i}"} | ({"user": f"u{i % 17}"} if i % 2 else {}) | ({"env": i % 3} if i % 3 else {})
        path = [f"k{i}", f"k{i % 50}.s{i}", f"*.n{i}"][i % 3]
        rules.append({"kind": kinds[i % 4], "where": where, "path": path, "mode": "scrub"})
    return rules


def main(sizes: list[int]) -> None:
    print(f"{'rules':>7} {'per tool (s)':>13} {'mixed (s)':>10}")
    for n in sizes:
        row = []
        for build in (per_tool, mixed):
            raw = build(n)
            start = time.perf_counter()
            parse_rules(raw)
            row.append(time.perf_counter() - start)
        print(f"{n:>7} {row[0]:>13.3f} {row[1]:>10.3f}", flush=True)


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1000, 4000, 16000])
