"""`bitexact show` after a redaction: a removed value reads `[redacted]`, never the default an absent value gets.

A tool call whose `status` was redacted once read `→ ok` (it had failed), an http_call whose `response.status` was
redacted `→ error` (it had answered 200), and a context whose `source` was redacted `(no source)`: an operator
would have read a claim the record does not make.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli.conftest import Invoke

from bitexact.cli.summary import REDACTED, summarize
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import open_store


@pytest.mark.parametrize(("entry", "expected"), [
    ({"kind": "tool_call", "data": {"tool": "transfer"}, "redacted": ["status"]}, f"transfer() → {REDACTED}"),
    ({"kind": "tool_call", "data": {"tool": "transfer", "error": {}}, "redacted": ["error.message", "error.type"]},
     "transfer() → error"),
    ({"kind": "tool_call", "data": {"status": "ok"}, "redacted": ["tool"]}, f"{REDACTED}() → ok"),
    ({"kind": "http_call", "data": {"request": {"method": "GET", "path": "/a"}, "response": {}},
      "redacted": ["response.status"]}, f"GET /a → {REDACTED}"),
    ({"kind": "http_call", "data": {"request": {"method": "GET"}, "response": {"status": 200}},
      "redacted": ["request.path"]}, f"GET {REDACTED} → 200"),
    ({"kind": "context", "data": {"name": "policy"}, "redacted": ["source"]}, f"policy ({REDACTED})"),
    ({"kind": "context", "data": {"name": "policy"}, "redacted": ["source.file"]}, f"policy ({REDACTED})"),
    ({"kind": "human_decision", "data": {"decision": "approve", "binds_step": 3}, "redacted": ["actor"]},
     f"{REDACTED}: approve step 3"),
    # A decision whose bound step was redacted is no decision that bound none (`step -`).
    ({"kind": "human_decision", "data": {"actor": "ann", "decision": "approve"}, "redacted": ["binds_step"]},
     f"ann: approve step {REDACTED}"),
    ({"kind": "marker", "data": {}, "redacted": ["note"]}, REDACTED),
    ({"kind": "nondet", "data": {"source": "random.random"}, "redacted": ["value"]}, f"random.random = {REDACTED}"),
    ({"kind": "model", "data": {"type": "chat"}, "redacted": ["model"]}, REDACTED),
    ({"kind": "run_meta", "data": {"python": "3.11", "capture_policy": "off"}, "redacted": ["name"]},
     f"{REDACTED} · python 3.11 · policy off"),
])
def test_a_redacted_value_reads_redacted(entry: dict[str, Any], expected: str) -> None:
    assert summarize(entry) == expected


@pytest.mark.parametrize(("entry", "expected"), [
    ({"kind": "tool_call", "data": {"tool": "t"}}, "t() → ok"),
    ({"kind": "tool_call", "data": {"tool": "t", "error": {"type": "E"}}}, "t() → error"),
    ({"kind": "http_call", "data": {"request": {"method": "GET", "path": "/a"}, "response": {}}}, "GET /a → error"),
    ({"kind": "context", "data": {"name": "policy"}}, "policy (no source)"),
    ({"kind": "tool_call", "data": {"tool": "t", "status_note": "x"}, "redacted": ["status_note"]}, "t() → ok"),
])
def test_an_absent_value_still_reads_as_its_default(entry: dict[str, Any], expected: str) -> None:
    assert summarize(entry) == expected


def test_show_after_store_redaction_names_no_status_the_record_lost(bx: Invoke, home: Path) -> None:
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="redacted-status")
        writer.append("tool_call", {"tool": "transfer", "status": "error", "error": {"type": "Denied", "message": "no"}})
        writer.append("http_call", {"request": {"method": "GET", "path": "/v1/a"}, "response": {"status": 200}})
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()
    for field in ("1:status", "1:error.type", "1:error.message", "2:response.status"):
        result = bx("redact", run_id, "--field", field, "--by", "dpo", "--reason", "test")
        assert result.exit_code == 0, result.output
    shown = bx("show", run_id, "--json")
    assert shown.exit_code == 0, shown.output
    summaries = [step["summary"] for step in json.loads(shown.output)["steps"]]
    assert summaries[1:3] == [f"transfer() → {REDACTED}", f"GET /v1/a → {REDACTED}"]
    table = bx("show", run_id)
    assert f"transfer() → {REDACTED}" in table.output and "→ ok" not in table.output
