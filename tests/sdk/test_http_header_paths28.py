"""Session 28: a URL percent-encoded in a path segment, in a header of any other name, as a wrapped client records it.

On 530f8fa the request URL and a ``Location`` read such a URL (session 26), but a header the URL rule reads as free
text (a proxy's ``X-Original-URL``, an ``X-Debug`` line, a ``Reporting-Endpoints`` list) was stored with the
nested URL's password or token as sent, and so was one in a relative URL's path (a value holding no ``//``). Real server on loopback, httpx (sync) and requests; the capture policy off
(the SDK tests' default), so the URL rule alone decides.
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
    ("x-original-url", "https://proxy.example/r/https%3A%2F%2Fu%3AT0K1%40h2.example%2Fx",
     f"https://proxy.example/r/https%3A%2F%2F{R}%40h2.example%2Fx"),
    ("x-debug", "fetched https://proxy.example/r/https%3A%2F%2Fh2.example%2Fcb%3Ftoken%3DT0K2 ok",
     f"fetched https://proxy.example/r/https%3A%2F%2Fh2.example%2Fcb%3Ftoken%3D{R} ok"),
    ("reporting-endpoints", "a=https://p.example/r/https%253A%252F%252Fu%253AT0K3%2540h2%252F,b=https://h.example/y",
     f"a=https://p.example/r/https%253A%252F%252F{R}%2540h2%252F,b=https://h.example/y"),
    # kept byte for byte: no "//" after the encoded ":", an "@" past the nested authority
    ("x-original-url", "https://proxy.example/r/https%3Afoo%40bar", "https://proxy.example/r/https%3Afoo%40bar"),
    ("x-original-url", "https://proxy.example/r/https%3A%2F%2Fh2%2Fusers%2F%40me",
     "https://proxy.example/r/https%3A%2F%2Fh2%2Fusers%2F%40me"),
]
# (header, value the agent sends, value recorded): request headers.
REQUEST_CASES = [
    ("x-original-url", "https://proxy.example/r/https%3A%2F%2Fu%3AT0K4%40h2.example%2Fx?page=2",
     f"https://proxy.example/r/https%3A%2F%2F{R}%40h2.example%2Fx?page=2"),
    ("x-forwarded-for-url", "//proxy.example/r/https%3A%2F%2Fh2%2Fcb%3Fkey%3DT0K5",
     f"//proxy.example/r/https%3A%2F%2Fh2%2Fcb%3Fkey%3D{R}"),
    # a relative URL's path, as IIS and proxies write X-Original-URL: the value holds no "//"
    ("x-original-url", "/r/https%3A%2F%2Fu%3AT0K7%40h2.example%2Fx?page=2", f"/r/https%3A%2F%2F{R}%40h2.example%2Fx?page=2"),
]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(header_cases_handler(RESPONSE_CASES)) as (url, _seen):
        yield url


@pytest.mark.parametrize("index", range(len(RESPONSE_CASES)))
def test_a_response_headers_path_url_is_recorded_by_the_url_rule(base: str, index: int) -> None:
    name, sent, recorded = RESPONSE_CASES[index]
    got = response_header(base, index, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


@pytest.mark.parametrize(("name", "sent", "recorded"), REQUEST_CASES)
def test_a_request_headers_path_url_is_recorded_by_the_url_rule(base: str, name: str, sent: str,
                                                                recorded: str) -> None:
    got = request_header(base, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


def test_the_header_and_the_request_url_record_the_same_url_alike(base: str) -> None:
    """A proxy's request URL and the header naming it (its ``X-Original-URL``) hold one URL: each is recorded with
    the nested URL's password redacted where it stood."""
    path = "/echo/r/https%3A%2F%2Fu%3AT0K6%40h2.example%2Fx"
    with bitexact.run() as r:
        for client in (httpx.Client(), requests.Session()):
            bitexact.wrap(client).get(base + path, headers={"x-original-url": base + path})
    expected = f"{base}/echo/r/https%3A%2F%2F{R}%40h2.example%2Fx"
    for call in http_calls(r.run_id):
        assert call["data"]["request"]["url"] == call["data"]["request"]["headers"]["x-original-url"] == expected
    assert "T0K" not in str(http_calls(r.run_id))
