"""A 1 KiB tool call recorded in the call, under the shipped policy: what the faster path stores is the plain way's.

The echo shape of benchmarks/sdk_overhead.py: the result holds the argument again, which the scan now reads
once; a card number in it is scrubbed at both places and declared at both.
"""

from __future__ import annotations

from typing import Any

import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash, commitment
from bitexact.evidence.entry import chain_body

from .conftest import entries


def echo(query: str) -> dict[str, str]:
    return {"answer": query[:24], "echo": query}


def recorded_call(query: str) -> dict[str, Any]:
    tool = bitexact.record_tool(name="echo")(echo)
    with bitexact.run(name="cost19") as run:
        tool(query)
    calls = [entry for entry in entries(run.run_id) if entry["kind"] == "tool_call"]
    assert len(calls) == 1
    return calls[0]


def assert_plain(entry: dict[str, Any]) -> None:
    """Commitments and hash as the bundle spec computes them from what is stored (§4)."""
    alg = entry["alg"]
    for path, committed in entry["commitments"].items():
        top, _, sub = path.partition(".")
        value = entry["data"][top][sub] if sub else entry["data"][top]
        assert committed == commitment(alg, bytes.fromhex(entry["salts"][path]), value)
    assert entry["hash"] == chain_hash(alg, canonicalize(chain_body(entry)))


@pytest.fixture(autouse=True)
def _shipped_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")


def test_a_clean_1kib_call_is_stored_as_called_with_the_plain_commitments() -> None:
    kib = "k" * 1000
    entry = recorded_call(kib)
    assert entry["data"] == {"tool": "echo", "args": [kib], "kwargs": {}, "result": echo(kib), "status": "ok"}
    assert "capture" not in entry  # nothing found, nothing declared
    assert sorted(entry["commitments"]) == ["args", "kwargs", "result.answer", "result.echo", "status", "tool"]
    assert_plain(entry)


def test_a_card_number_the_tool_echoes_is_scrubbed_and_declared_at_both_places() -> None:
    query = ("order 58213 paid with card 4111 1111 1111 1111, " * 25)[:1000]
    entry = recorded_call(query)
    scrubbed = query.replace("4111 1111 1111 1111", "[PAN ****1111]")
    assert entry["data"]["args"] == [scrubbed]
    assert entry["data"]["result"] == {"answer": query[:24], "echo": scrubbed}
    fields = entry["capture"]["fields"]
    assert fields["args"]["found"] == fields["result.echo"]["found"] == {"pan": query.count("4111 1111 1111 1111")}
    assert "result.answer" not in fields  # its 24 characters hold no card number
    assert_plain(entry)
