"""`bitexact redaction approve|reject` with an empty --by or --reason: a usage error, exit 2.

Their help says "2 no such run, or a usage error (--by or --reason missing)", and `bitexact redact` exits 2 for
the same empty options; an audit saw `redaction reject RUN --by b --reason ' '` exit 1, the code of a state that
refuses (no pending request, the requester deciding). The options are now checked before the run is read, in
the request layer's words, and nothing is decided.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.real_command import run_bitexact

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.recording.requests import file_request
from bitexact.store import open_store


@pytest.fixture
def requested(tmp_path: Path) -> tuple[Path, str]:
    """A sealed run with one pending redaction request, filed by dpo:alice."""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="accounts")
        writer.append("tool_call", {"tool": "t", "args": [1], "result": {"account": "ACC-1"}})
        writer.seal()
        file_request(store, writer.run_id, ["1:result.account"], by="dpo:alice", reason="erasure 118")
        return home, writer.run_id
    finally:
        store.close()


@pytest.mark.parametrize(("args", "said"), [
    (["approve", "--by", " "], "--by must name who approves the request"),
    (["reject", "--by", "", "--reason", "kept"], "--by must name who rejects the request"),
    (["reject", "--by", "dpo:bob", "--reason", " "], "--reason is required: say why the request is rejected"),
])
def test_an_empty_decider_or_reason_is_a_usage_error(requested: tuple[Path, str], args: list[str], said: str) -> None:
    home, run_id = requested
    done = run_bitexact(home, "redaction", args[0], run_id, *args[1:])
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"error: {said}" in done.stderr
    status = run_bitexact(home, "redaction", "status", run_id, "--json")
    shown = json.loads(status.stdout)
    assert shown["pending"] is not None and [r["status"] for r in shown["requests"]] == ["pending"]  # undecided
