"""Verify a large streamed JSONL bundle: entries per second and peak memory.

Usage: ``python benchmarks/verify_jsonl.py [--entries N] [--checkpoint-every K] [--keep PATH]``

Generates, with the test-side producer, a signed JSONL bundle of N entries
(about 1 KiB of data each, 4-6 committed paths, a recorder checkpoint every
K entries - by default the product's own interval, 64, so the header holds
as many checkpoints as an exported run's - sealed), then verifies it in a fresh subprocess and reports
entries/s and the peak RSS of that process (``resource.getrusage``). As a
baseline measured in the same run, it also times the bare strict parse of
every line, the floor any verifier that reads the file has to pay.
Targets (1,000,000 entries): >= 20,000 entries/s, < 100 MiB peak.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from verify.producer import stream_jsonl  # noqa: E402

from bitexact.crypto import SigningKey  # noqa: E402
from bitexact.recording.checkpoints import DEFAULT_EVERY  # noqa: E402

_TEXT = (
    "Customer 4471 asks whether water damage from the upstairs flat on 12 October is covered "
    "under policy HX-20931. The policy covers escape of water from fixed installations, "
    "subject to the excess of 250 EUR, unless the damage arose from gradual seepage. "
)


def realistic(count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Agent-like entries of about 1 KiB with 4, 5 or 6 committed paths."""
    yield "run_meta", {"python": "3.11.7", "platform": "linux-x86_64", "bitexact": "0.1.0"}
    for i in range(1, count - 1):
        shape = i % 3
        if shape == 0:
            yield "tool_call", {
                "tool": "lookup_policy",
                "args": [f"HX-{20000 + i}", {"include": ["coverage", "excess"]}],
                "kwargs": {},
                "result": _TEXT * 3 + f" (score 0.{i % 97})",
            }
        elif shape == 1:
            yield "http_call", {
                "request": {"method": "POST", "path": "/v1/chat/completions", "text": _TEXT * 2},
                "response": {"status": 200, "text": _TEXT + f" request {i}"},
            }
        else:
            yield "nondet", {
                "source": "time.time",
                "value": 1_900_000_000.125 + i,
                "context": {"a": _TEXT, "b": _TEXT, "c": _TEXT, "d": i},
            }


_CHILD = """
import resource, sys, time
from pathlib import Path
from bitexact.evidence.verify import Pins, verify_path
t0 = time.perf_counter()
verdict = verify_path(Path(sys.argv[1]), Pins(recorder_keys=frozenset([sys.argv[2]]), bundle_keys=frozenset([sys.argv[3]])))
elapsed = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"line": verdict.line, "elapsed": elapsed, "peak_mib": peak, "steps": verdict.steps}))
"""

_BASELINE = """
import json as _json, resource, sys, time
from bitexact.canon import loads
t0 = time.perf_counter()
n = 0
with open(sys.argv[1], "rb") as fh:
    for line in fh:
        if line.strip():
            loads(line)
            n += 1
elapsed = time.perf_counter() - t0
print(_json.dumps({"elapsed": elapsed, "lines": n}))
"""


def _run(code: str, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code, *args], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--checkpoint-every", type=int, default=DEFAULT_EVERY,
                        help=f"entries per recorder checkpoint (default {DEFAULT_EVERY}, the product's)")
    parser.add_argument("--keep", type=Path, help="write the bundle here and keep it")
    args = parser.parse_args()

    key, recorder = SigningKey.generate(), SigningKey.generate()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "bench.bundle.jsonl"
        t0 = time.perf_counter()
        count = stream_jsonl(path, "bench-run", realistic(args.entries), key=key, recorder=recorder,
                             checkpoint_every=args.checkpoint_every)
        generated = time.perf_counter() - t0
        size = path.stat().st_size
        with path.open("rb") as handle:
            header = len(handle.readline())
        print(f"generated {count} entries ({size / 2**20:.0f} MiB, {size / count:.0f} B/entry) in {generated:.1f} s;"
              f" a checkpoint every {args.checkpoint_every}, header line {header / 2**20:.1f} MiB")

        base = _run(_BASELINE, str(path))
        result = _run(_CHILD, str(path), recorder.public_hex, key.public_hex)
    print(result["line"][:160])
    rate = count / result["elapsed"]
    base_rate = base["lines"] / base["elapsed"]
    print(f"baseline strict parse only: {base_rate:,.0f} lines/s ({base['elapsed']:.1f} s)")
    print(f"verify: {rate:,.0f} entries/s ({result['elapsed']:.1f} s), peak RSS {result['peak_mib']:.1f} MiB")
    print(f"verify / parse-only time ratio: {result['elapsed'] / base['elapsed']:.2f}")
    print(f"targets: >= 20,000 entries/s -> {'met' if rate >= 20_000 else 'MISSED'};"
          f" < 100 MiB -> {'met' if result['peak_mib'] < 100 else 'MISSED'}")


if __name__ == "__main__":
    main()
