"""Capture policy scan speed: ms per MiB under the shipped default policy.

Prints, for mixed agent text, JSON, and a MiB of digits (contiguous, spaced
in groups of four, and a JSON array of numbers), the milliseconds per MiB of
``apply_policy`` with the default policy, the card-number candidates checked
per second, and the per-MiB figure at 1, 8 and 64 MiB to show the growth is
linear. Each figure is also given as a ratio to a baseline measured in the
same run on the same input: ``bitexact.canon.canonicalize`` of the step (the
work the recorder does for every entry anyway) and one bare regex pass over
every character of the step's canonical JSON (a class nothing matches: the
floor any regex-based scan pays).

    .venv/bin/python benchmarks/capture_scan.py [--quick] [--memory]

``--quick`` skips the 64 MiB sizes. ``--memory`` also prints the peak memory
the scan holds (tracemalloc) per MiB of step at each size: flat when what
it holds grows only in proportion to the step. Goals on the
development machine: at most 30 ms/MiB for text, at most 110 ms/MiB for
digits, and the same ms/MiB at every size.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import string
import sys
import time
from typing import Any, Callable

from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, load_policy
from bitexact.capture.detectors.pan import PanDetector

MIB = 1 << 20
WORDS = (
    "the agent called tool search with query results found customer account order shipped "
    "total amount paid invoice date status ok error retry model response tokens usage "
    "please summarize the following document and list each item with its reference"
).split()


def _card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    digits.append((10 - total % 10) % 10)
    return "".join(map(str, digits))


def mixed_text(size: int, seed: int = 1) -> str:
    """Agent prose with numbers, dates, URLs, a card number, IBAN and token now and then."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        roll = rng.random()
        if roll < 0.03:
            word = str(rng.randrange(1, 10**rng.randrange(1, 8)))
        elif roll < 0.035:
            word = f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
        elif roll < 0.036:
            word = "https://api.example.com/v1/items?page=2&q=" + rng.choice(WORDS)
        elif roll < 0.0362:
            card = _card(rng)
            word = " ".join(card[i : i + 4] for i in range(0, 16, 4))
        elif roll < 0.0363:
            word = "DE89 3704 0044 0532 0130 00"
        elif roll < 0.0364:
            word = "token=" + "".join(rng.choice(string.ascii_letters) for _ in range(20))
        else:
            word = rng.choice(WORDS)
        if roll > 0.99:
            word += ".\n"
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)[:size]


def json_step(size: int, seed: int = 2) -> dict[str, Any]:
    """A tool result of records: strings, numbers, nested objects; sensitive values now and then."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    length = 0
    while length < size:
        record = {
            "id": rng.randrange(10**9),
            "name": " ".join(rng.choice(WORDS) for _ in range(2)),
            "ts": f"2025-05-{rng.randrange(1, 29):02d}T12:00:00Z",
            "tags": [rng.choice(WORDS) for _ in range(3)],
            "amount": round(rng.random() * 1000, 2),
            "note": " ".join(rng.choice(WORDS) for _ in range(10)),
            "meta": {"source": rng.choice(WORDS), "score": rng.random()},
        }
        if rng.random() < 0.01:
            record["card"] = _card(rng)
        records.append(record)
        length += len(json.dumps(record))
    return {"tool": "search", "args": ["query"], "result": records}


def digits_contiguous(size: int, seed: int = 3) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("0123456789") for _ in range(size))


def digits_spaced(size: int, seed: int = 4) -> str:
    rng = random.Random(seed)
    groups = ["".join(rng.choice("0123456789") for _ in range(4)) for _ in range(size // 5 + 1)]
    return " ".join(groups)[:size]


def digits_array(size: int, seed: int = 5) -> list[int]:
    rng = random.Random(seed)
    out: list[int] = []
    length = 0
    while length < size:
        n = rng.randrange(10**rng.randrange(1, 16))
        out.append(n)
        length += len(str(n)) + 2
    return out


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


# A character class none of the inputs hold: one search walks every character
# in the regex engine's C loop and finds nothing - the floor of any regex scan.
_FLOOR = re.compile(r"[\x01-\x08]")


def measure(label: str, data: dict[str, Any], policy: Any, repeat: int = 3) -> float:
    """apply_policy's ms per MiB, beside two baselines on the same input in the same run."""
    canonical = canonicalize(data)
    text = canonical.decode("utf-8")
    size = len(canonical)
    scan = _best(lambda: apply_policy(policy, "tool_call", data), repeat)
    canon = _best(lambda: canonicalize(data), repeat)
    regex = _best(lambda: _FLOOR.search(text), repeat)
    per_mib = scan * 1000 / (size / MIB)
    print(
        f"  {label:<32} {per_mib:7.1f} ms/MiB"
        f" | canonicalize {canon * 1000 / (size / MIB):6.1f} ms/MiB ({scan / canon:6.1f}x)"
        f" | one bare regex pass {regex * 1000 / (size / MIB):5.1f} ms/MiB ({scan / regex:5.1f}x)"
    )
    return per_mib


def _first_and_best(policy: Any, data: dict[str, Any], repeat: int) -> tuple[float, float]:
    """ms per MiB of the first run on ``data`` and of the best of ``repeat`` runs.

    The first run on a new step also pays for the memory it touches first
    (page faults); the best of a few is what a run costs once warm. Both are
    measured the same way at every size, so the growth they show is the scan's.
    """
    size = len(canonicalize(data))
    runs = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        apply_policy(policy, "tool_call", data)
        runs.append((time.perf_counter() - start) * 1000 / (size / MIB))
    return runs[0], min(runs)


def peak_per_mib(policy: Any, data: dict[str, Any]) -> float:
    """The most memory the scan holds at once, beyond the step itself, in MiB per MiB of the step.

    Counted from the scan deadline's first clock read, which comes right after
    the step's size is measured: orjson reserves a buffer of many times a long
    string's length there (allocated, mostly never touched), which would hide
    what the scan itself holds. The clock stands still: tracemalloc makes
    every allocation many times slower, and a scan that ran out of its budget
    would be withheld, not measured.
    """
    import tracemalloc

    size = len(canonicalize(data))
    gc.collect()
    first = [True]

    def clock() -> float:
        if first[0]:
            first[0] = False
            tracemalloc.reset_peak()
        return 0.0

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        apply_policy(policy, "tool_call", data, clock=clock)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return (peak - before) / (size / MIB) / MIB


def candidates_per_second(text: str) -> None:
    """Card-number windows (12-19 digits at group boundaries) considered per second.

    Once with every window tested on its own (the path short runs take), once
    with the Luhn sums of a long run's windows done in bulk (the path a run
    of 64 or more even-length groups takes): both cover the same windows.
    """
    from bitexact.capture.budget import Deadline
    from bitexact.capture.detectors import pan

    saved = pan._BULK_GROUPS
    try:
        pan._BULK_GROUPS = 10**12
        one_by_one = PanDetector()
        start = time.perf_counter()
        found = one_by_one.find(text, Deadline.unlimited())
        single = time.perf_counter() - start
    finally:
        pan._BULK_GROUPS = saved
    bulk = _best(lambda: PanDetector().find(text, Deadline.unlimited()), 3)
    windows = one_by_one.candidates
    print(
        f"  card-number windows from plausible starts in {len(text) / MIB:.0f} MiB of spaced digits: {windows:,}"
        f" ({len(found):,} Luhn-valid with an issuer prefix)\n"
        f"    tested one by one: {single * 1000:.0f} ms = {windows / single:,.0f} candidates/s\n"
        f"    Luhn sums in bulk: {bulk * 1000:.0f} ms = {windows / bulk:,.0f} candidates/s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 64 MiB sizes")
    parser.add_argument("--memory", action="store_true", help="also print peak memory per MiB at each size")
    args = parser.parse_args()
    policy = load_policy("default")
    print(f"python {sys.version.split()[0]}, default capture policy {policy.digest[:12]}")
    print("one MiB each (best of 3); baselines measured on the same input in this run:")
    text_ms = measure("mixed agent text", {"result": mixed_text(MIB)}, policy)
    json_ms = measure("JSON (records)", json_step(MIB), policy)
    contiguous_ms = measure("digits, contiguous", {"result": digits_contiguous(MIB)}, policy)
    spaced_ms = measure("digits, spaced groups of 4", {"result": digits_spaced(MIB)}, policy)
    array_ms = measure("digits, JSON array of numbers", {"result": digits_array(MIB)}, policy)
    candidates_per_second(digits_spaced(MIB))
    sizes = (1, 8) if args.quick else (1, 8, 64)
    print("linear growth (ms per MiB at each size, best of 2 (first run); flat means linear):")
    kinds = (
        ("mixed agent text", lambda n: {"result": mixed_text(n * MIB)}),
        ("JSON (records)", lambda n: json_step(n * MIB)),
        ("digits, spaced groups of 4", lambda n: {"result": digits_spaced(n * MIB)}),
    )
    for label, make in kinds:
        figures = []
        for n in sizes:
            first, best = _first_and_best(policy, make(n), 2)
            figures.append(f"{n} MiB: {best:5.1f} ({first:5.1f})")
        print(f"  {label:<28} " + "   ".join(figures))
    if args.memory:
        print("peak memory the scan holds (tracemalloc), MiB per MiB of step at each size:")
        for label, make in kinds:
            figures = [f"{n} MiB: {peak_per_mib(policy, make(n)):.1f}" for n in sizes]
            print(f"  {label:<28} " + "   ".join(figures))
    print("goals: text <= 30 ms/MiB, digits <= 110 ms/MiB")
    print(f"  text {text_ms:.1f} ms/MiB: {'met' if text_ms <= 30 else 'NOT met'}")
    print(f"  JSON {json_ms:.1f} ms/MiB (no goal set)")
    for label, ms in (("contiguous", contiguous_ms), ("spaced", spaced_ms), ("array", array_ms)):
        print(f"  digits {label} {ms:.1f} ms/MiB: {'met' if ms <= 110 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
