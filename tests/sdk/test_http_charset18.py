"""A JSON body or an event stream is recorded as text the way its own specification reads it, whatever charset
its header names: JSON as UTF-8 (or UTF-16/32, as JSON readers tell them apart), an event stream as UTF-8,
the header's charset only when the body does not read so. Real servers on loopback, the shipped policy.

Before, a server naming a charset its body is not in (``application/json; charset=utf-16`` on UTF-8 bytes,
or ``charset=cp037``) had the body recorded as a mojibake of it: the card number the agent read with httpx's
``json()`` was stored, recoverable by encoding the text back, and the policy, reading the mojibake, found
nothing and declared nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

CARD = "4111111111111111"
DOCUMENT = json.dumps({"card": CARD}).encode()  # 28 bytes: as UTF-16 it is 14 characters of mojibake
BODIES: dict[str, tuple[bytes, str]] = {
    "/utf16-label": (DOCUMENT, "application/json; charset=utf-16"),
    "/ebcdic-label": (DOCUMENT, "application/json; charset=cp037"),
    "/problem": (DOCUMENT, "application/problem+json; charset=utf-16"),
    "/sse": (b"data: " + DOCUMENT + b"\n\n", "text/event-stream; charset=utf-16"),
    "/utf16": (json.dumps({"card": CARD, "name": "Zo\u00eb"}).encode("utf-16"), "application/json; charset=utf-16"),
    "/latin1": (json.dumps({"card": CARD, "name": "Zo\u00eb"}, ensure_ascii=False).encode("latin-1"),
                "application/json; charset=iso-8859-1"),
    "/text": ("Zo\u00eb".encode("utf-16-le"), "text/plain; charset=utf-16-le"),
}


class _Labelled(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body, content_type = BODIES[self.path]
        self._send(200, body, content_type)


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch, home: Path) -> Iterator[str]:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    with serve_seen(_Labelled) as (url, _):
        yield url


@pytest.mark.parametrize("path", ["/utf16-label", "/ebcdic-label", "/problem", "/sse"])
def test_a_body_its_header_mislabels_is_recorded_as_its_readers_read_it_and_scrubbed(base: str, path: str) -> None:
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        got = client.get(base + path)
    assert got.content == BODIES[path][0], "the agent gets the bytes as sent"
    if path != "/sse":
        assert got.json() == {"card": CARD}, "and reads the card number in them"
    (call,) = http_calls(r.run_id)
    text = call["data"]["response"]["text"]
    assert CARD not in text and '"card": "[PAN ****1111]"' in text, text
    assert call["capture"]["fields"]["response.text"]["found"] == {"pan": 1}


@pytest.mark.parametrize(("path", "expected"), [
    ("/utf16", '{"card": "[PAN ****1111]", "name": "Zo\\u00eb"}'),  # UTF-16 with its BOM, as JSON readers tell
    ("/latin1", '{"card": "[PAN ****1111]", "name": "Zo\u00eb"}'),  # not UTF-8: the header's charset
    ("/text", "Zo\u00eb"),  # not JSON: the header's charset, as before
])
def test_a_body_in_the_charset_it_names_is_recorded_as_before(base: str, path: str, expected: str) -> None:
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        assert session.get(base + path).content == BODIES[path][0]
    (call,) = http_calls(r.run_id)
    assert call["data"]["response"]["text"] == expected
