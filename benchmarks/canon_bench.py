"""canonicalize: events/s on typical 1-2 KiB agent events, against the rfc8785 package.

    .venv/bin/python benchmarks/canon_bench.py [--events 2000] [--rounds 5]

Checks the outputs are byte-identical before timing, then prints events/s
for both and the ratio (goal: >= 5x).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import rfc8785

sys.path.insert(0, str(Path(__file__).resolve().parent))
from events import typical_events  # noqa: E402

from bitexact.canon import canonicalize  # noqa: E402


def best_rate(fn, events: list, rounds: int) -> float:  # type: ignore[no-untyped-def]
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        for event in events:
            fn(event)
        best = max(best, len(events) / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    events = typical_events(args.events)
    sizes = [len(canonicalize(e)) for e in events]
    mismatched = sum(canonicalize(e) != rfc8785.dumps(e) for e in events)
    if mismatched:
        raise SystemExit(f"{mismatched} events differ from rfc8785: not byte-identical")
    ours = best_rate(canonicalize, events, args.rounds)
    theirs = best_rate(rfc8785.dumps, events, args.rounds)
    print(f"events: {len(events)}, canonical size {min(sizes)}-{max(sizes)} bytes (mean {sum(sizes) // len(sizes)})")
    print("byte-identical to rfc8785: yes")
    print(f"bitexact.canon.canonicalize: {ours:12,.0f} events/s")
    print(f"rfc8785.dumps              : {theirs:12,.0f} events/s")
    print(f"ratio                      : {ours / theirs:12.1f}x  (goal >= 5x)")


if __name__ == "__main__":
    main()
