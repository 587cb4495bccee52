"""Helpers for the capture tests: the copied vectors, policy files, test keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def vectors(name: str) -> Any:
    """A vectors section copied into tests/capture/data."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def write_policy(tmp_path: Path, policy: dict[str, Any], name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(policy), encoding="utf-8")
    return path


def resolve(data: Any, path: str) -> Any:
    """The value at a capture-block path (escaped segments; a decimal segment indexes an array)."""
    value = data
    for segment in path.split("."):
        key = segment.replace("~1", ".").replace("~0", "~")
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def assert_block_matches_data(data: dict[str, Any], block: dict[str, Any] | None) -> None:
    """Every path the block declares is where the data stores it, with the placeholder its mode implies."""
    for path, field in (block or {}).get("fields", {}).items():
        value = resolve(data, path)
        if field["mode"] == "hash-only":
            assert value == "[hash-only]", path
        elif field["mode"] == "withheld":
            assert value == "[withheld]", path


def recorded_in_store(home: Path, data: dict[str, Any], name: str = "capture-leaks") -> str:
    """Record ``data`` as a tool_call in a real SDK run under ``home``: the written entry's data and every row
    the store keeps, as one text, so a test can say that a value appears nowhere in the store."""
    import sqlite3

    import bitexact
    from bitexact.sdk import close_stores
    from bitexact.store import DB_NAME

    with bitexact.run(name=name, home=home) as r:
        entry = dict(r.record("tool_call", data))  # waits until the entry is written
    close_stores()
    assert entry.get("data"), "the entry was written"
    conn = sqlite3.connect(home / DB_NAME)
    try:
        rows = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in conn.execute(f'SELECT * FROM "{table}"'):  # noqa: S608 - names from sqlite_master
                rows.append(" ".join(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                                     for v in row))
    finally:
        conn.close()
    return json.dumps(entry["data"], ensure_ascii=False) + "\n" + "\n".join(rows)


def scrubbed(text: str) -> str:
    """``text`` as the default policy stores it; asserts a second pass finds nothing new (a scrub is final).

    The scan's clock never moves here: what the rules find must not depend on the machine's speed (on a loaded
    machine a first scan, compiling the detectors' patterns, could run past the budget and withhold the text)."""
    from bitexact.capture import load_policy
    from bitexact.capture.apply import scrub_text

    out, _ = scrub_text(load_policy(env={}), text, clock=still_clock)
    assert scrub_text(load_policy(env={}), out, clock=still_clock) == (out, {}), "a second pass finds nothing new"
    return out


def still_clock() -> float:
    """A clock that never moves: a scan's budget is never spent on it."""
    return 0.0


class StepClock:
    """A clock for a scan's deadline that advances ``step`` seconds at every reading: time passes only as the
    scan looks at it, so a test of the budget never depends on the machine's speed."""

    def __init__(self, step: float = 1.0) -> None:
        self.now = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now
