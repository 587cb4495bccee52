"""A compressed body is decompressed for the record at most to BITEXACT_MAX_BODY_BYTES: a small gzip body that
inflates a thousandfold (one the agent only streams to disk, never decoding it) is recorded as sent,
compressed, and costs the agent's process no more than the bound. Real servers on loopback.

Before, the recording inflated the whole body when the exchange ended: 300 KB of gzip streamed raw took a
recorded agent from 360 MiB to 3.9 GiB and its run's exit past the drain timeout, unsealed.
"""

from __future__ import annotations

import base64
import gzip
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

INFLATED = 48 << 20  # what the body decompresses to
BOUND = 1 << 20  # BITEXACT_MAX_BODY_BYTES in these tests
BOMB = gzip.compress(b"\0" * INFLATED, 9)
SMALL = gzip.compress(b"a" * (2 << 20))
NOTE = f"decompresses to more than BITEXACT_MAX_BODY_BYTES ({BOUND} bytes): recorded as sent, compressed"


class _Bomb(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = BOMB if self.path == "/bomb" else SMALL
        self._send(200, body, "text/plain", {"content-encoding": "gzip"})


@pytest.fixture
def base() -> Iterator[str]:
    with serve_seen(_Bomb) as (url, _):
        yield url


def _httpx_raw(url: str) -> bytes:
    with bitexact.wrap(httpx.Client()) as client, client.stream("GET", url) as response:
        return b"".join(response.iter_raw())


def _requests_raw(url: str) -> bytes:
    with bitexact.wrap(requests.Session()) as session:
        response = session.get(url, stream=True)
        return b"".join(response.raw.stream(65536, decode_content=False))


READS: dict[str, Callable[[str], bytes]] = {"httpx": _httpx_raw, "requests": _requests_raw}


def _peak_while(read: Callable[[str], bytes], url: str) -> tuple[bytes, int, str | None]:
    """What the agent read, the peak memory Python allocated meanwhile (the exchange recorded in the call),
    and the run's id."""
    tracemalloc.start()
    try:
        with bitexact.run(strict=True) as r:
            got = read(url)
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return got, peak, r.run_id


@pytest.mark.parametrize("client", sorted(READS))
def test_a_body_inflating_past_the_bound_is_recorded_compressed_without_inflating_it(
    base: str, client: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_MAX_BODY_BYTES", str(BOUND))
    got, peak, run_id = _peak_while(READS[client], base + "/bomb")
    assert got == BOMB, "the agent reads the body as sent"
    assert peak < 8 * BOUND, f"the recording inflated the body: {peak} bytes allocated at the peak"
    (call,) = http_calls(run_id)
    response = call["data"]["response"]
    assert base64.b64decode(response["b64"]) == BOMB, "recorded as sent, compressed (the policy is off)"
    assert response["content_encoding"] == "gzip" and response["body_note"] == NOTE
    assert response["complete"] is True and call.get("capture") is None


def test_under_a_policy_the_compressed_body_is_kept_hash_only(
    base: str, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    """The policy would withhold the body decompressed (larger than its bound): its compressed bytes, which
    no detector reads, are never stored either, but committed."""
    monkeypatch.setenv("BITEXACT_MAX_BODY_BYTES", str(BOUND))
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    got, _, run_id = _peak_while(_httpx_raw, base + "/bomb")
    assert got == BOMB
    (call,) = http_calls(run_id)
    assert call["data"]["response"]["b64"] == "[hash-only]"
    assert call["data"]["response"]["body_note"] == NOTE
    assert call["capture"]["fields"]["response.b64"]["mode"] == "hash-only"


def test_a_body_within_the_bound_is_still_recorded_decompressed(
    base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_MAX_BODY_BYTES", str(4 << 20))
    with bitexact.run() as r:
        assert _httpx_raw(base + "/small") == SMALL
    (call,) = http_calls(r.run_id)
    response = call["data"]["response"]
    assert response["text"] == "a" * (2 << 20) and "body_note" not in response and "b64" not in response
