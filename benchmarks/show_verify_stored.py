"""`bitexact show` and `bitexact verify RUN` on a long stored run: seconds and peak memory per command.

Usage: ``python benchmarks/show_verify_stored.py [--steps N] [--home DIR] [--repeat R]``

Records a sealed run of N small markers (default 100,000; the write path, in batches of 1,000, the
product's checkpoint interval) into a fresh data directory (or reuses the run in ``--home`` when one
is there), exports it as JSONL, then runs each command as the console script in its own process,
its output to /dev/null, and reports its wall time and peak RSS (``ru_maxrss`` of that child, from
``os.wait4`` in a small launcher process): ``show`` (the table), ``show --json``, ``show --from N/2 --limit 100``, ``verify RUN``, and,
as the baseline, ``verify FILE.jsonl`` of the same run (the streaming verifier reading a file). The
import baseline (``bitexact verify`` of a 3-step run) is printed too: what every command costs before
it reads a step. No goal is asserted: memory should be flat in N (compare two N), and ``verify RUN``
near ``verify FILE.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BITEXACT = [sys.executable, "-m", "bitexact"]


def _record(home: Path, steps: int) -> str:
    """A sealed run of ``steps`` steps in ``home`` (run_meta, markers, run_end); its id."""
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.store import open_store

    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="bench")
        step = 1
        while step < steps - 1:
            batch = min(1000, steps - 1 - step)
            writer.append_batch([("marker", {"note": f"m{i}"}, None) for i in range(step, step + batch)])
            step += batch
        writer.seal()
        return writer.run_id
    finally:
        store.close()


def _existing(home: Path, steps: int) -> str | None:
    """The id of a run of ``steps`` steps already in ``home``, if there is one."""
    from bitexact.store import open_store

    if not (home / "bitexact.db").exists():
        return None
    store = open_store(home)
    try:
        return next((r.run_id for r in store.runs() if r.steps == steps), None)
    finally:
        store.close()


_LAUNCHER = """
import json, os, subprocess, sys, tempfile, time
with open(os.devnull, "wb") as sink, tempfile.TemporaryFile() as errors:
    start = time.perf_counter()
    child = subprocess.Popen(sys.argv[1:], stdout=sink, stderr=errors)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    errors.seek(0)
    print(json.dumps({"seconds": elapsed, "peak_kib": usage.ru_maxrss, "code": os.waitstatus_to_exitcode(status),
                      "stderr": errors.read().decode(errors="replace")[:300]}))
"""
"""Runs one command and reports it. A small process of its own: on Linux a child's ru_maxrss starts at
the RSS of the process it was forked from (kept across exec), so forked from this benchmark (the store
and the recorder imported, a run just recorded) every command read at least this process's size."""


def _measure(home: Path, *args: str) -> tuple[float, float, int]:
    """``bitexact ARGS`` in its own process, its output to /dev/null: (seconds, peak RSS in MiB, exit code)."""
    env = {**os.environ, "BITEXACT_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    env.pop("COLUMNS", None)
    launched = subprocess.run([sys.executable, "-c", _LAUNCHER, *BITEXACT, *args], env=env, capture_output=True,
                              text=True, check=True)
    report = json.loads(launched.stdout)
    if report["code"] != 0:
        print(f"  bitexact {' '.join(args)} exited {report['code']}: {report['stderr'].strip()}", file=sys.stderr)
    return report["seconds"], report["peak_kib"] / 1024, report["code"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--home", type=Path, help="the data directory to use (kept; its run of --steps reused)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (all figures printed)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))

    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp) / "home"
        run_id = _existing(home, args.steps)
        if run_id is None:
            started = time.perf_counter()
            run_id = _record(home, args.steps)
            print(f"recorded {run_id}: {args.steps:,} steps in {time.perf_counter() - started:.1f} s")
        else:
            print(f"reusing {run_id}: {args.steps:,} steps")
        small_home = Path(tmp) / "small"
        small = _record(small_home, 3)
        bundle = Path(tmp) / "run.jsonl"
        exported = subprocess.run([*BITEXACT, "export", run_id, "-o", str(bundle), "--format", "jsonl"],
                                  env={**os.environ, "BITEXACT_HOME": str(home),
                                       "PYTHONPATH": str(ROOT / "src")}, capture_output=True, check=False)
        if exported.returncode != 0:
            sys.exit(f"export failed: {exported.stderr.decode(errors='replace')}")
        print(f"exported as JSONL: {bundle.stat().st_size / 2**20:.0f} MiB")
        commands: list[tuple[str, Path, tuple[str, ...]]] = [
            ("import baseline (verify of a 3-step run)", small_home, ("verify", small)),
            ("show RUN", home, ("show", run_id)),
            ("show RUN --json", home, ("show", run_id, "--json")),
            (f"show RUN --from {args.steps // 2} --limit 100", home,
             ("show", run_id, "--from", str(args.steps // 2), "--limit", "100")),
            ("verify RUN", home, ("verify", run_id)),
            ("verify FILE.jsonl (baseline)", home, ("verify", str(bundle))),
        ]
        for label, where, command in commands:
            figures = [_measure(where, *command) for _ in range(args.repeat)]
            shown = ", ".join(f"{seconds:.2f} s {peak:.0f} MiB" + (f" (exit {code})" if code else "")
                              for seconds, peak, code in figures)
            print(f"{label:45} {shown}")


if __name__ == "__main__":
    main()
