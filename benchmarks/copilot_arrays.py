"""A Copilot log of many pretty-printed arrays: parse time against the number of arrays.

    .venv/bin/python benchmarks/copilot_arrays.py [--counts 2000,8000]

The Copilot reader decodes each array that opens on a line of its own from
where it stands in the log. It once summed the lengths of every line before
each array to find it, so a log of many arrays parsed in quadratic time.
Prints seconds and MB/s at each count; linear means MB/s stays flat as the
count grows (the ratio of the last to the first, 1.0 when linear).
"""

from __future__ import annotations

import argparse
import time

from bitexact.sessions import parse

_BLOCK = 'note line\n[\n{"type": "assistant.message", "data": {"content": "hi"}}\n]\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="2000,8000,32000")
    args = parser.parse_args()
    rates = []
    for count in (int(c) for c in args.counts.split(",")):
        text = "copilot\n" + _BLOCK * count
        start = time.perf_counter()
        parse(text, "copilot")
        seconds = time.perf_counter() - start
        rates.append(len(text) / seconds / 1e6)
        print(f"{count:>7} arrays  {len(text) / 1e6:6.2f} MB  {seconds:7.3f} s  {rates[-1]:6.1f} MB/s")
    print(f"MB/s at the largest count / at the smallest: {rates[-1] / rates[0]:.2f} (1.0 = linear)")


if __name__ == "__main__":
    main()
