"""The examples run as a user would run them, and what they record verifies as a sealed, signed bundle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bitexact.crypto.keystore import KeyStore
from bitexact.evidence.export import RunSource, export_run
from bitexact.evidence.verify import Pins, verify_path
from bitexact.sdk.stores import recorder_for

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("script", "kinds"), [
    ("chat_loop.py", ["run_meta", "identity", "http_call", "http_call", "http_call", "run_end"]),
    # The tool's hash-only hint with no capture key: the write path declares capture_key_unavailable.
    ("tool_agent.py", ["run_meta", "identity", "context", "http_call", "tool_call", "marker", "http_call",
                       "tool_call", "marker", "human_decision", "run_end"]),
    ("async_agent.py", ["run_meta"] + ["http_call", "tool_call"] * 4 + ["marker", "run_end"]),
])
def test_example(script: str, kinds: list[str], home: Path, tmp_path: Path) -> None:
    env = {**os.environ, "BITEXACT_HOME": str(home)}
    for name in ("BASE_URL", "OPENAI_API_KEY", "BITEXACT_CONTEXT", "BITEXACT_CAPTURE_POLICY"):
        env.pop(name, None)  # the examples record under the shipped default policy
    done = subprocess.run([sys.executable, str(EXAMPLES / script)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.strip().splitlines()[-1].split()[1].rstrip(":")
    recorder, _ = recorder_for()
    written = list(recorder.store.entries(run_id))
    recorded = [e["kind"] for e in written]
    assert written[0]["data"]["capture_policy"] != "off"
    if script == "async_agent.py":  # concurrent tools: each http_call lands before its own tool_call
        assert sorted(recorded) == sorted(kinds)
    else:
        assert recorded == kinds
    key = KeyStore(home).current()
    bundle = export_run(RunSource.from_store(recorder.store, run_id), tmp_path / "run.bundle.json", key)
    verdict = verify_path(bundle.path, Pins(bundle_keys=frozenset({key.public_hex}),
                                            recorder_keys=frozenset({key.public_hex}), require_sealed=True))
    assert verdict.ok, verdict.line
