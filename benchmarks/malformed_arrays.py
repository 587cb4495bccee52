"""Session logs of many malformed JSON arrays: framing time against the number of arrays.

    .venv/bin/python benchmarks/malformed_arrays.py [--counts 4000,16000,64000]

A line that opens a JSON array mid-log (``[`` alone, or ``[`` then ``{``) is
decoded from where it stands. When the array broke off, the stdlib decoder
counted the lines of the whole log up to the error, and the depth check first
counted brackets up to 400 levels past it, so a log of many broken arrays
framed in quadratic time. Lines that each open a bracket inside the last
and never close it were read again from each line, up to 400 lines deep (the
depth limit): linear, but 400 times the work. For each shape the log is framed
(``frame``) and parsed as Copilot's (``parse(text, "copilot")``, which decodes
such arrays itself); valid arrays are the control. Prints seconds and MB/s at
each count (a shape's block repeated count / per times); linear means MB/s
stays flat as the count grows (the ratio of the last to the first, 1.0 when
linear), and the nested shapes' MB/s near the others' means they cost no more.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from bitexact.sessions import parse
from bitexact.sessions.records import frame

SHAPES = {  # the block, and the count a block stands for (about four lines each)
    "bare bracket, closed": ("[\ndebug line\n]\n", 1),
    "bracket and object, closed": ('[{"a": 1},\ndebug line\n]\n', 1),
    "bracket and object, unclosed": ('[{"a": 1},\ndebug line\n', 1),
    "valid arrays": ('[\n{"type": "assistant.message", "data": {"content": "hi"}},\n{"a": [1, "]"]}\n]\nnote line\n', 1),
    "nested brackets, never closed": ("[\n" * 4, 1),
    "nested brackets, broken off": ("[\n" * 300 + "debug line\n", 75),
}


def _seconds(read: Callable[[], object]) -> float:
    start = time.perf_counter()
    read()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="4000,16000,64000")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    for shape, (block, per) in SHAPES.items():
        print(f"{shape}: {block[:60]!r}{'...' if len(block) > 60 else ''}")
        rates: dict[str, list[float]] = {"frame": [], "copilot": []}
        for count in counts:
            text = "copilot\n" + block * (count // per)
            megabytes = len(text) / 1e6
            cells = []
            for reader, read in (("frame", lambda: frame(text)), ("copilot", lambda: parse(text, "copilot"))):
                seconds = _seconds(read)
                rates[reader].append(megabytes / seconds)
                cells.append(f"{reader} {seconds:7.3f} s {rates[reader][-1]:6.1f} MB/s")
            print(f"  {count:>7} arrays  {megabytes:6.2f} MB  " + "  ".join(cells))
        print("  MB/s at the largest count / at the smallest (1.0 = linear): "
              + "  ".join(f"{reader} {rate[-1] / rate[0]:.2f}" for reader, rate in rates.items()))


if __name__ == "__main__":
    main()
