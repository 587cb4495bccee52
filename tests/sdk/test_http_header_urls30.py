"""Session 30: a relative URL in a header whose name says it holds a URL, as a wrapped client records it.

On e0fcbf8 a proxy's ``X-Original-URL: /cb?token=T0ken123`` (and ``X-Rewrite-URL``, ``X-Forwarded-Uri``,
``X-Envoy-Original-Path``...) was stored with the token as sent: the header was read as free text, which reads a URL
only from a scheme's ``://`` or a ``//``, while ``Location: /cb?token=T0ken123`` was recorded by the URL rule. Real
server on loopback, httpx (sync) and requests; the capture policy off (the SDK tests' default), so the URL rule is all
there is.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.header_exchanges import request_header, response_header
from sdk.servers import header_cases_handler, serve_seen

R = "%5Bredacted%5D"
# (header, value sent, value recorded): response headers.
RESPONSE_CASES = [
    ("x-original-url", "/cb?token=T0K1", f"/cb?token={R}"),
    ("x-original-url", "/cb?access_token=T0K2&x=1", f"/cb?access_token={R}&x=1"),
    ("x-rewrite-url", "/v1/search?q=claims&API_KEY=T0K3", f"/v1/search?q=claims&API_KEY={R}"),
    ("x-accel-redirect", "/protected/f?sig=T0K4&page=2", f"/protected/f?sig={R}&page=2"),
    # kept byte for byte: no credential parameter; words, which are no one URL
    ("x-original-url", "/cb?tokens=T&q=token", "/cb?tokens=T&q=token"),
    ("x-original-url", "fetched /cb?q=1 ok", "fetched /cb?q=1 ok"),
]
# (header, value the agent sends, value recorded): request headers.
REQUEST_CASES = [
    ("x-original-url", "/cb?token=T0K5", f"/cb?token={R}"),
    ("x-forwarded-uri", "/v1/files?token=T0K6&sig=T0K7&page=2", f"/v1/files?token={R}&sig={R}&page=2"),
    ("x-envoy-original-path", "/cb?key=T0K8&q=1", f"/cb?key={R}&q=1"),
    ("x-forwarded-prefix", "/app?token=T0K9", f"/app?token={R}"),
    ("x-original-uri", "/cb?token", f"/cb?token={R}"),  # a credential with no value is given one, as in a Location
    # a nested URL's user info in a query ends with its parameter (any header): the next parameter is kept
    ("x-debug", "https://a/?next=https://u:T0KA@h%2F&x=a@b/", f"https://a/?next=https://{R}@h%2F&x=a@b/"),
]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(header_cases_handler(RESPONSE_CASES)) as (url, _seen):
        yield url


@pytest.mark.parametrize("index", range(len(RESPONSE_CASES)))
def test_a_response_headers_relative_url_is_recorded_by_the_url_rule(base: str, index: int) -> None:
    name, sent, recorded = RESPONSE_CASES[index]
    got = response_header(base, index, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


@pytest.mark.parametrize(("name", "sent", "recorded"), REQUEST_CASES)
def test_a_request_headers_relative_url_is_recorded_by_the_url_rule(base: str, name: str, sent: str,
                                                                    recorded: str) -> None:
    got = request_header(base, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


def test_the_header_and_the_request_target_record_the_same_url_alike(base: str) -> None:
    """A proxy's request target and the header naming it (its ``X-Original-URL``, relative) hold one URL: each is
    recorded with its token redacted, every other byte as sent."""
    target = "/echo/cb?page=2&token=T0KB"
    with bitexact.run() as r:
        for client in (httpx.Client(), requests.Session()):
            bitexact.wrap(client).get(base + target, headers={"x-original-url": target})
    for call in http_calls(r.run_id):
        assert call["data"]["request"]["url"] == f"{base}/echo/cb?page=2&token={R}"
        assert call["data"]["request"]["headers"]["x-original-url"] == f"/echo/cb?page=2&token={R}"
    assert "T0K" not in str(http_calls(r.run_id))
