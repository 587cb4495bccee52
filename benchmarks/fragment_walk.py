"""What finding an agent's own orjson.Fragment costs the SDK's serialization of an entry.

    .venv/bin/python benchmarks/fragment_walk.py [--rounds 5]

orjson splices a Fragment unread, so before its bytes are trusted ``dump_json``
(bitexact.sdk.jsonable) looks for one: a few plain values in Python, anything
more by a walk in C (pickle's traversal, output discarded). For each entry it
prints the best of ``--rounds``: ``dump_json`` as it is, the same with the
search skipped (the path before it, which spliced an agent's Fragment unread),
the search alone, and a walk in Python over every value (the alternative the C
walk replaces), with ratios against ``orjson.dumps`` of the same value (the
baseline, measured in the same run).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import orjson

from bitexact.sdk import jsonable


def _best(call: Callable[[], object], rounds: int, inner: int) -> float:
    """Best of ``rounds`` in µs per call, each round ``inner`` calls."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        best = min(best, (time.perf_counter() - start) / inner)
    return best * 1e6


def _python_walk(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is orjson.Fragment:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    kib = "k" * 1000
    entries: list[tuple[str, Any, int]] = [
        ("tool call, 1 KiB", {"tool": "t", "args": [kib], "kwargs": {}, "result": {"answer": kib[:24], "echo": kib},
                              "status": "ok"}, 20_000),
        ("2 MiB text", {"tool": "t", "args": [], "kwargs": {}, "result": "t" * (2 << 20), "status": "ok"}, 50),
        ("2 MiB structured (40,000 dicts)", {"tool": "t", "args": [], "kwargs": {},
                                             "result": [{"i": i, "v": "abcdefgh" * 4} for i in range(40_000)],
                                             "status": "ok"}, 5),
    ]
    searched = jsonable._holds_fragment
    print(f"{'entry':<34} {'orjson':>10} {'dump_json':>10} {'unsearched':>11} {'search':>10} {'python walk':>12}"
          "   (µs; x = / orjson)")
    for name, value, inner in entries:
        base = _best(lambda: orjson.dumps(value), args.rounds, inner)
        full = _best(lambda: jsonable.dump_json(value), args.rounds, inner)
        jsonable._holds_fragment = lambda _value: False  # type: ignore[assignment]
        try:
            unsearched = _best(lambda: jsonable.dump_json(value), args.rounds, inner)
        finally:
            jsonable._holds_fragment = searched  # type: ignore[assignment]
        search = _best(lambda: searched(value), args.rounds, inner)
        walk = _best(lambda: _python_walk(value), args.rounds, max(1, inner // 4))
        print(f"{name:<34} {base:>10.1f} {full:>10.1f} {unsearched:>11.1f} {search:>10.1f} {walk:>12.1f}"
              f"   (dump_json {full / base:.2f}x, unsearched {unsearched / base:.2f}x, python walk {walk / base:.2f}x)")


if __name__ == "__main__":
    main()
