"""Instructions per recorded 1 KiB tool call, counted by callgrind: immune to the machine's other load.

    python benchmarks/sdk_instructions.py [--few 100] [--many 1300] [--src DIR]

Runs the benchmark's call (``sdk_overhead.py``'s: ``@record_tool`` inside ``bitexact.run()``, the result
echoing its 1 KiB argument, default policy) ``--few`` and then ``--many`` times, each in its own process
under ``valgrind --tool=callgrind`` with the store's fsync off (``PRAGMA synchronous = OFF``: the instructions
of the call, not the disk's wait), and prints (Ir of many - Ir of few) / (many - few): the start-up, the run's
opening and closing and the first calls' warm-up cancel out. ``--src`` measures another tree's ``src`` (an A/B
against a base commit checked out beside it). Needs valgrind; takes a minute or two per count.

The count moves by some thousands of instructions between runs of one tree (the interpreter's dictionary
resizes and the collector fall at other calls): compare figures many thousands apart, or repeat.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _loop(calls: int) -> None:
    """The measured process: a run, ``calls`` recorded 1 KiB tool calls, the store's fsync off."""
    work = Path(tempfile.mkdtemp(prefix="bitexact-instructions-"))
    os.environ["BITEXACT_HOME"] = str(work / "home")
    import bitexact
    from bitexact.sdk.stores import close_stores

    kib = "k" * 1000

    def tool(q: str) -> dict[str, str]:
        return {"answer": q[:24], "echo": q}

    recorded = bitexact.record_tool(name="tool")(tool)
    try:
        with bitexact.run(name="instructions") as run:
            assert run.writer is not None
            run.writer.recorder.store._writer.execute("PRAGMA synchronous = OFF")  # type: ignore[attr-defined]
            for _ in range(calls):
                recorded(kib)
    finally:
        close_stores()
        shutil.rmtree(work, ignore_errors=True)


def _instructions(calls: int, src: Path) -> int:
    """Ir of one process making ``calls`` recorded calls, as callgrind counts them."""
    with tempfile.TemporaryDirectory(prefix="bitexact-callgrind-") as scratch:
        env = {**os.environ, "PYTHONPATH": str(src)}
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out",
             sys.executable, __file__, "--loop", str(calls)],
            env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--few", type=int, default=100)
    parser.add_argument("--many", type=int, default=1300)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the tree's src directory to measure")
    parser.add_argument("--loop", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop is not None:
        _loop(args.loop)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    few, many = _instructions(args.few, args.src), _instructions(args.many, args.src)
    per_call = (many - few) / (args.many - args.few)
    print(f"{args.src}: {per_call:,.0f} instructions per recorded 1 KiB tool call "
          f"(Ir {few:,} for {args.few} calls, {many:,} for {args.many})")


if __name__ == "__main__":
    main()
