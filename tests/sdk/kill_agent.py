"""An agent the kill -9 tests start and kill: it says each time a record call has returned.

Usage: python kill_agent.py MODE COUNT
  blocked  hold the store's writer lock (as a slow writer would), so every large entry
           stays in its journal; say "ready" after the last call returned, then wait
  racing   record large and small entries as fast as it can; the test kills it mid-way
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

import bitexact
from bitexact import config

BIG = "y" * ((1 << 20) + 100)


def main(mode: str, count: int) -> None:
    with bitexact.run(name=f"kill-{mode}") as r:
        print(f"run {r.run_id}", flush=True)
        if mode == "blocked":
            fd = os.open(config.home() / "bitexact.db.lock", os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX)
        for n in range(count):
            if n % 3 == 2:
                r.record("marker", {"note": f"small {n}", "n": n})
            else:
                r.record("tool_call", {"tool": "scan", "n": n, "result": BIG})
            print(f"returned {n}", flush=True)
        print("ready", flush=True)
        time.sleep(600)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
