"""capture_nondeterminism: every clock, random, UUID and entropy read in the run is an observed nondet entry."""

from __future__ import annotations

import base64
import datetime
import os
import random
import secrets
import time
import uuid

import bitexact
from sdk.conftest import entries


def _nondet(run_id: str | None) -> list[dict[str, object]]:
    return [e for e in entries(run_id) if e["kind"] == "nondet"]


def test_each_read_is_recorded_with_the_value_the_agent_saw() -> None:
    with bitexact.run(capture_nondeterminism=True) as r:
        seen = {
            "time.time": time.time(),
            "time.time_ns": str(time.time_ns()),  # past 2^53 - 1: recorded as its text
            "datetime.now": datetime.datetime.now().isoformat(),
            "datetime.utcnow": datetime.datetime.utcnow().isoformat(),
            "random.random": random.random(),
            "random.randint": random.randint(1, 6),
            "random.choice": random.choice(["a", "b", "c"]),
            "uuid.uuid4": str(uuid.uuid4()),
            "os.urandom": {"b64": base64.b64encode(os.urandom(8)).decode()},
            "secrets.token_hex": secrets.token_hex(4),
        }
    recorded = [(e["data"]["source"], e["data"]["value"]) for e in _nondet(r.run_id)]  # type: ignore[index]
    # What secrets and os.urandom give is kept hash-only (tests/sdk/test_sdk_edges15.py opens it with the key).
    expected = [(source, "[hash-only]" if source.startswith(("secrets.", "os.urandom")) else value)
                for source, value in seen.items()]
    assert recorded == expected, "each read once (token_hex's inner token_bytes is not a read of its own)"
    assert all(e["prov"] == "observed" for e in _nondet(r.run_id))


def test_shuffle_records_the_order_it_produced_and_isinstance_still_holds() -> None:
    deck = list(range(10))
    with bitexact.run(capture_nondeterminism=True) as r:
        random.shuffle(deck)
        assert isinstance(datetime.datetime.now(), datetime.datetime)
        assert isinstance(datetime.datetime(2026, 1, 1), datetime.datetime)
    (shuffle, _now) = _nondet(r.run_id)
    assert shuffle["data"] == {"source": "random.shuffle", "value": deck}


def test_off_by_default_and_restored_after_the_run() -> None:
    original = time.time
    with bitexact.run() as r:
        time.time()
        random.random()
    assert _nondet(r.run_id) == []
    with bitexact.run(capture_nondeterminism=True):
        assert time.time is not original
    assert time.time is original and datetime.datetime.now.__qualname__ == "datetime.now"


def test_reads_inside_a_tool_carry_its_ctx_and_the_sdk_own_reads_are_not_recorded() -> None:
    @bitexact.record_tool
    def roll() -> int:
        return random.randint(1, 6)

    with bitexact.run(capture_nondeterminism=True) as r:
        value = roll()
        r.marker("markers draw salts from os.urandom: those reads are BitExact's, not the agent's")
    (read,) = _nondet(r.run_id)
    assert read["data"] == {"source": "random.randint", "value": value} and read["ctx"] == "roll"
