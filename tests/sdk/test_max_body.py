"""BITEXACT_MAX_BODY_BYTES through the SDK: a body over the bound is withheld and declared, strict or not."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.crypto.keysources import generate_key_file
from bitexact.sdk import RecordingError, close_stores
from capture_verdict.support import invoker
from sdk.conftest import entries
from sdk.servers import LoopbackServer

LIMIT = 1000
TOO_LARGE = {"mode": "withheld", "cause": "scrub_failed", "reason": "too_large"}


@pytest.mark.parametrize("strict", [False, True])
def test_a_body_over_the_bound_is_withheld_in_a_declared_gap_the_verdict_counts_and_opens(
    server: LoopbackServer, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict: bool
) -> None:
    key = tmp_path / "capture.key"
    generate_key_file(key)
    env = {"BITEXACT_CAPTURE_POLICY": "default", "BITEXACT_CAPTURE_KEY": str(key),
           "BITEXACT_MAX_BODY_BYTES": str(LIMIT)}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    body = "z" * (LIMIT * 5)
    with bitexact.run(strict=strict) as r, bitexact.wrap(httpx.Client()) as client:
        got = client.post(server.base_url + "/echo", content=body.encode())
        small = client.post(server.base_url + "/echo", content=b"pay 4111 1111 1111 1111")
    assert got.json()["echo"] == body, "the agent receives the whole body"
    assert small.json()["echo"] == "pay 4111 1111 1111 1111"
    assert r.failures.gaps == [], "a withheld field is a declared gap in the run, not a failure to record"
    kinds = [(e["kind"], e["data"].get("gap", {}).get("cause")) for e in entries(r.run_id)]
    assert kinds == [("run_meta", None), ("http_call", None), ("marker", "scrub_failed"),
                     ("http_call", None), ("run_end", None)]
    _, large, gap, scrubbed, _ = entries(r.run_id)
    assert large["data"]["request"]["text"] == "[withheld]" and large["data"]["response"]["text"] == "[withheld]"
    assert large["data"]["response"]["status"] == 200 and large["data"]["request"]["path"] == "/echo"
    assert large["capture"]["fields"] == {"request.text": TOO_LARGE, "response.text": TOO_LARGE}
    assert gap["data"]["gap"]["fields"] == {"request.text": "too_large", "response.text": "too_large"}
    assert gap["data"]["gap"]["step"] == large["step"] and "keyed" in gap["data"]["gap"]["withheld"]
    # A body within the bound is scanned as before.
    assert "[PAN ****1111]" in scrubbed["data"]["request"]["text"]
    close_stores()

    bx = invoker(home)
    verdict = bx("verify", r.run_id, env=env)
    assert verdict.exit_code == 0 and "2 fields withheld" in verdict.stdout, verdict.stdout
    candidate = tmp_path / "candidate.json"
    candidate.write_bytes(canonicalize({"request.text": body, "response.text": got.text}))
    opened = bx("verify", r.run_id, "--open-withheld", str(gap["step"]), "--candidate-file", str(candidate),
                "--by", "alice", env=env)
    assert opened.exit_code == 0, opened.stdout + opened.stderr
    assert f"MATCH: the candidate is the content the gap at step {gap['step']} withheld" in opened.stdout


def test_a_wrong_bound_refuses_the_run_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_MAX_BODY_BYTES", "64MiB")
    with bitexact.run() as r:
        r.marker("never recorded")
    [failure] = r.failures.gaps
    assert failure.cause == "invalid_argument" and "BITEXACT_MAX_BODY_BYTES" in failure.detail, failure
    with pytest.raises(RecordingError) as raised, bitexact.run(strict=True):
        pass
    assert "BITEXACT_MAX_BODY_BYTES" in str(raised.value)
