"""`Run.last_step(kind)`: what a decision binds to after a call that gives no handle. The demo bound its
approval to `r.steps - 1`, which named the capture policy's gap marker whenever the policy declared one
after the http_call (a hash-only field with no capture key, a body past BITEXACT_MAX_BODY_BYTES)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.real_command import run_bitexact

import bitexact


def test_last_step_names_the_entry_not_the_gap_marker_after_it(sdk_home: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    with bitexact.run(home=sdk_home) as r:
        assert r.last_step("tool_call") is None
        r.marker("first")
        r.record_tool_call("lookup", args=["a"], result={"holder": "Jane"}, custody={"result.holder": "hash-only"})
        tool_step = r.steps - 2  # no capture key: a capture_key_unavailable gap marker follows the entry
        assert r.writer is not None
        gap = r.writer.recorder.store.entry(r.run_id, r.steps - 1)
        assert gap["kind"] == "marker" and "gap" in gap["data"]
        assert r.last_step("tool_call") == tool_step
        assert r.last_step("marker") == 1  # the agent's own marker, never the policy's gap marker
        r.record_tool_call("lookup", args=["b"], result={"ok": 1})
        assert r.last_step("tool_call") == r.steps - 1


def test_last_step_waits_for_what_was_queued_before_it(sdk_home: Path) -> None:
    with bitexact.run(home=sdk_home) as r:
        r.record("marker", {"note": "x" * ((1 << 20) + 1)})  # over 1 MiB: written after the call returns
        assert r.last_step("marker") == 1


def test_the_demo_binds_its_approval_to_the_claim_lookup_whatever_the_policy_declares(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # A bound so small every field is withheld for its size: a scrub_failed gap marker follows each entry.
    demo = run_bitexact(home, "demo", "--json", BITEXACT_MAX_BODY_BYTES="5")
    assert demo.returncode == 0, demo.stderr
    run_id = json.loads(demo.stdout)["run_id"]
    steps = json.loads(run_bitexact(home, "show", run_id, "--json").stdout)["steps"]
    [decision] = [step for step in steps if step["kind"] == "human_decision"]
    bound = decision["data"]["binds_step"]
    assert steps[bound]["kind"] == "http_call", steps[bound]
