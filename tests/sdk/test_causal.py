"""The hybrid logical clock, and a causal context handed to a sub-agent in another process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import bitexact
from bitexact.context import ContextFormatError, HybridClock, format_context, parse_context
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries


def test_the_clock_only_moves_forward_and_past_what_it_observes() -> None:
    clock = HybridClock()
    readings = [clock.now() for _ in range(1000)]
    assert readings == sorted(readings) and len(set(readings)) == len(readings)
    ahead = (readings[-1][0] + 60_000, 7)
    after = clock.observe(ahead)
    assert after > ahead and clock.now() > after


def test_format_refuses_what_parse_would_refuse() -> None:
    for bad_id, hlc in (("a.b", (1, 0)), ("", (1, 0)), ("abc", (2**53, 0)), ("abc", (-1, 0)), ("abc", (1,))):
        with pytest.raises(ContextFormatError):
            format_context(bad_id, hlc)  # type: ignore[arg-type]


def test_a_sub_agent_in_another_process_records_the_context_as_its_cause(home: Path) -> None:
    child = (
        "import bitexact\n"
        "with bitexact.run(name='sub-agent') as r:\n"
        "    r.marker('sub-agent work')\n"
        "print(r.run_id)\n"
    )
    with bitexact.run(name="planner") as r:
        env = r.child_env()
        result = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    handed = parse_context(env["BITEXACT_CONTEXT"])
    parent_marker = entries(r.run_id)[1]["data"]
    assert parent_marker["causal"] == {"id": handed.id, "hlc": list(handed.hlc)}
    sub_run = result.stdout.strip()
    recorder, _ = recorder_for()
    meta = next(recorder.store.entries(sub_run))["data"]
    assert meta["causal"]["caused_by"] == [handed.id]
    assert meta["causal"]["parent"] == env["BITEXACT_CONTEXT"]
    assert tuple(meta["causal"]["hlc"]) > handed.hlc
    assert "BITEXACT_CONTEXT" not in os.environ
