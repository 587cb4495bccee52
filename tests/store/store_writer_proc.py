"""A separate writer process for the store tests (run as a script, not collected).

    race    HOME GO_FILE RUN...         append step 0 to each run once; print ok/stale per run
    shared  HOME RUN COUNT THREADS      append COUNT entries per thread to RUN, retrying stale heads
    crash   HOME ACK_FILE THREADS SEED RUN...
            append forever (with checkpoints and custody records) from THREADS
            threads, and from one more thread that pipelines: up to 8 entries
            submitted before it waits for any; after each write RETURNS (for a
            submitted entry: once its result() returned), log it to ACK_FILE. The parent kills
            this process with SIGKILL and checks that every logged write survived.
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
from pathlib import Path

from store_chain import digest, make_checkpoint, make_entry, tool_data

from bitexact.crypto import GENESIS, SigningKey
from bitexact.errors import StaleHeadError
from bitexact.store import open_store


def race(home: Path, go_file: Path, runs: list[str]) -> None:
    store = open_store(home)
    entries = {run: make_entry(run, 0, GENESIS, tool_data(random.randrange(10**6))) for run in runs}
    print("ready", flush=True)
    while not go_file.exists():
        time.sleep(0.001)
    for run in runs:
        try:
            store.append(run, entries[run])
        except StaleHeadError:
            print(f"stale {run}", flush=True)
        else:
            print(f"ok {run} {digest(entries[run])}", flush=True)
    store.close()


def shared(home: Path, run: str, count: int, threads: int) -> None:
    store = open_store(home)

    def work() -> None:
        done = 0
        while done < count:
            steps, head = store.head(run)
            try:
                store.append(run, make_entry(run, steps, head, tool_data(steps)))
            except StaleHeadError:
                continue
            done += 1

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    store.close()
    print("done", flush=True)


def crash(home: Path, ack_file: Path, threads: int, seed: int, runs: list[str]) -> None:
    store = open_store(home)
    key = SigningKey.generate()
    ack_fd = os.open(ack_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    ready = threading.Event()

    def ack(line: str) -> None:
        # One write(2) per line on an O_APPEND file: whole lines, and the page
        # cache keeps them when this process is killed.
        os.write(ack_fd, (line + "\n").encode())
        if not ready.is_set():
            ready.set()
            print("ready", flush=True)

    def work(rng: random.Random) -> None:
        while True:
            run = rng.choice(runs)
            steps, head = store.head(run)
            entry = make_entry(run, steps, head, tool_data(steps, pad=rng.randrange(0, 3000)))
            checkpoint = None
            if rng.random() < 0.3:
                seq = len(store.checkpoints(run))
                checkpoint = make_checkpoint(key, run, seq, steps + 1, entry["hash"])
            try:
                store.append(run, entry, checkpoint=checkpoint)
            except StaleHeadError:
                continue
            ack(f"entry {run} {steps} {digest(entry)}")
            if checkpoint is not None:
                ack(f"checkpoint {run} {checkpoint['seq']} {digest(checkpoint)}")
            if rng.random() < 0.05:
                record = {"actor": f"pid-{os.getpid()}", "action": "opened", "step": steps}
                ack(f"custody {run} {store.add_custody(run, record)} {digest(record)}")
            if rng.random() < 0.05:
                steps, head = store.head(run)
                timer = make_checkpoint(key, run, len(store.checkpoints(run)), steps, head)
                try:
                    store.add_checkpoint(run, timer)
                except StaleHeadError:
                    continue
                ack(f"checkpoint {run} {timer['seq']} {digest(timer)}")

    def pipeline(rng: random.Random) -> None:
        while True:
            run = rng.choice(runs)
            steps, head = store.head(run)
            in_flight = []
            for _ in range(rng.randrange(1, 9)):
                entry = make_entry(run, steps, head, tool_data(steps, pad=rng.randrange(0, 3000)))
                in_flight.append((entry, store.submit(run, [entry])))
                steps, head = steps + 1, entry["hash"]
            for entry, pending in in_flight:
                try:
                    pending.result()
                except StaleHeadError:
                    continue  # another writer moved the head: this and the rest of the chain are refused
                ack(f"entry {run} {entry['step']} {digest(entry)} pipelined")

    for n in range(threads):
        threading.Thread(target=work, args=(random.Random(seed * 1000 + n),), daemon=True).start()
    threading.Thread(target=pipeline, args=(random.Random(seed * 1000 + threads),), daemon=True).start()
    threading.Event().wait()  # until killed


def main(argv: list[str]) -> None:
    mode, home = argv[0], Path(argv[1])
    if mode == "race":
        race(home, Path(argv[2]), argv[3:])
    elif mode == "shared":
        shared(home, argv[2], int(argv[3]), int(argv[4]))
    elif mode == "crash":
        crash(home, Path(argv[2]), int(argv[3]), int(argv[4]), argv[5:])
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
