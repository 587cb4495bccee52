"""What the capture clause adds to `bitexact verify`, and how fast backfill plans a run.

Prints, for one run of N entries (each a tool call whose two fields the
default policy scrubs, so every entry carries a capture block):

* verify of its JSONL export with and without the capture clause, in
  entries/s, and the ratio (the clause's cost, measured in the same run);
* ``plan_backfill`` of the same content recorded with the policy off, in
  entries/s and MiB/s of stored data, against a baseline measured in the
  same run: ``apply_policy`` over the same data with nothing else (the
  floor: backfill is the policy applied once more, plus a comparison).

    .venv/bin/python benchmarks/capture_verdict.py [--entries N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.backfill import plan_backfill
from bitexact.capture.clause import capture_clause
from bitexact.crypto.keystore import KeyStore
from bitexact.evidence.export import RunSource, export_run
from bitexact.evidence.verify import Pins, verify_path
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import open_store

VISA = "4111 1111 1111 1111"
IBAN = "DE89 3704 0044 0532 0130 00"


def step(i: int) -> dict[str, object]:
    return {"tool": "pay", "args": [f"order {i} paid with {VISA} " + "lorem ipsum " * 40],
            "kwargs": {"iban": IBAN, "amount": i, "note": "dolor sit amet " * 20}, "result": {"ok": True, "n": i}}


def record(home: Path, policy_name: str, entries: int) -> tuple[str, object]:
    store = open_store(home)
    key = KeyStore(home).current_or_init()
    recorder = Recorder(store, key, checkpoints=CheckpointPolicy(every=1000, seconds=3600),
                        policy=load_policy(policy_name, env={}))
    writer = recorder.start()
    for i in range(entries):
        writer.append("tool_call", step(i))
    writer.seal()
    return writer.run_id, store


def timed(fn: object, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=5000)
    n = parser.parse_args().entries
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        run_id, store = record(home, "default", n)
        bundle = Path(tmp) / "run.jsonl"
        export_run(RunSource.from_store(store, run_id), bundle, KeyStore(home).current(), fmt="jsonl")
        pins = Pins.from_options()
        plain = timed(lambda: verify_path(bundle, pins))
        with_clause = timed(lambda: verify_path(bundle, pins, clauses=[capture_clause()]))
        line = verify_path(bundle, pins, clauses=[capture_clause()]).line
        print(f"verify jsonl, {n + 2} entries: plain {(n + 2) / plain:,.0f} entries/s, "
              f"with capture clause {(n + 2) / with_clause:,.0f} entries/s, ratio {with_clause / plain:.3f}")
        print(f"  clause: ...{line[line.index(', sealed'):][:160]}")
        store.close()

        off_home = Path(tmp) / "off"
        off_run, off_store = record(off_home, "off", n)
        policy = load_policy("default", env={})
        entries = list(off_store.entries(off_run))
        size = sum(len(str(e["data"]).encode()) for e in entries) / (1 << 20)
        plan_time = timed(lambda: plan_backfill(off_store, off_run, policy), repeat=2)
        floor = timed(lambda: [apply_policy(policy, e["kind"], e["data"]) for e in entries], repeat=2)
        plan = plan_backfill(off_store, off_run, policy)
        print(f"backfill plan, {n} entries ({size:.1f} MiB stored): {n / plan_time:,.0f} entries/s, "
              f"{size / plan_time:.1f} MiB/s, {len(plan.fields)} fields named; "
              f"apply_policy alone {n / floor:,.0f} entries/s; ratio {plan_time / floor:.2f}")
        off_store.close()


if __name__ == "__main__":
    main()
