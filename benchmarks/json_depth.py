"""The depth check run before Python's recursive JSON parser: its cost against the parse it guards.

    .venv/bin/python benchmarks/json_depth.py [--rounds 5]

``nested_deeper_than`` (bitexact.canon) runs before every read of outside
JSON that could recurse (the strict reader, the session reader, the capture
scan of documents held in strings, the SDK's model sniff's fallback). For
each document it prints the best of ``--rounds`` in ms per MiB for the check,
the exact bracket walk it replaced as the strict reader's first test, and
``json.loads`` and ``orjson.loads`` of the same text, with the check's cost
as a fraction of ``json.loads`` (the baseline, measured in the same run).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import orjson

from bitexact.canon import STACK_SAFE_DEPTH, nested_deeper_than
from bitexact.canon.decode import _max_depth

MIB = 1 << 20


def _listing() -> str:
    """An API listing: thousands of small objects, strings with escapes and brackets in them."""
    items = [{"id": i, "object": "item", "tags": ["a", 'b\\"]]'], "text": "line\n [one] " * 5, "n": i / 7}
             for i in range(8000)]
    return json.dumps({"model": "m", "data": items})


def _chat() -> str:
    """A chat completion with one long answer: few brackets, so the check is two counts."""
    return json.dumps({"model": "m", "choices": [{"message": {"content": "word " * (MIB // 5)}}]})


def _deep() -> str:
    return '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _best_ms(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def _parse(loads: Callable[[str], object]) -> Callable[[str], object]:
    def run(text: str) -> object:
        try:
            return loads(text)
        except (ValueError, RecursionError):
            return None
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"{'document':10} {'MiB':>5} {'check':>8} {'walk':>8} {'json':>8} {'orjson':>8}  check/json  (ms per MiB)")
    for name, text in (("listing", _listing()), ("chat", _chat()), ("deep", _deep())):
        mib = len(text.encode()) / MIB
        row = [_best_ms(lambda: fn(text), args.rounds) / mib for fn in (  # noqa: B023 - called at once
            lambda t: nested_deeper_than(t, STACK_SAFE_DEPTH), _max_depth, _parse(json.loads), _parse(orjson.loads))]
        print(f"{name:10} {mib:5.2f} {row[0]:8.2f} {row[1]:8.2f} {row[2]:8.2f} {row[3]:8.2f}  {row[0] / row[2]:10.2f}")


if __name__ == "__main__":
    main()
