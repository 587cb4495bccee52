"""Session 26: a URL written in the request URL's path, or in a redirect's ``Location``, as a wrapped client records it.

On 730052e an archive's or a proxy's ``/web/2020/https://u:p@h2/x`` (and the same URL percent-encoded in a path
segment) was stored with the password as sent. Real server on loopback, httpx (sync) and requests; the capture policy
off (the SDK tests' default), so the URL rule alone decides.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, latin1_digest, serve_seen

R = "%5Bredacted%5D"
# (path the agent asks for, as recorded after the base URL): both clients send these bytes as written.
REQUEST_PATHS = [
    ("/web/2020/https://u:T0K1@h2.example/x", f"/web/2020/https://{R}@h2.example/x"),
    ("/r/https%3A%2F%2Fu%3AT0K2%40h2.example%2Fx?page=2", f"/r/https%3A%2F%2F{R}%40h2.example%2Fx?page=2"),
    ("/r/https%3A%2F%2Fh2.example%2Fcb%3Ftoken%3DT0K3", f"/r/https%3A%2F%2Fh2.example%2Fcb%3Ftoken%3D{R}"),
]
# (Location sent on a 302, recorded)
REDIRECTS = [
    ("https://archive.example/web/2020/https://u:T0K4@h2.example/",
     f"https://archive.example/web/2020/https://{R}@h2.example/"),
    ("/proxy/https%3A%2F%2Fu%3AT0K5%40h2.example%2F", f"/proxy/https%3A%2F%2F{R}%40h2.example%2F"),
    ("/web/2020/https://h2.example/users/@me", "/web/2020/https://h2.example/users/@me"),  # kept byte for byte
]


class _Handler(HandlerBase):
    """``/moved?i=N`` answers 302 to ``REDIRECTS[N]``; any other path answers the SHA-256 of the path it got."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.startswith("/moved"):
            location = REDIRECTS[int(parse_qs(urlsplit(self.path).query)["i"][0])][0]
            self._send(302, b"", "text/plain", {"location": location})
            return
        self._send(200, json.dumps({":path": latin1_digest(self.path)}).encode(), "application/json")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(_Handler) as (url, _seen):
        yield url


@pytest.mark.parametrize(("path", "recorded"), REQUEST_PATHS)
def test_a_url_in_the_request_urls_path_is_recorded_by_the_url_rule(base: str, path: str, recorded: str) -> None:
    with bitexact.run() as r:
        for client in (httpx.Client(), requests.Session()):  # the server gets the path as written
            assert bitexact.wrap(client).get(base + path).json()[":path"] == latin1_digest(path)
    assert [call["data"]["request"]["url"] for call in http_calls(r.run_id)] == [base + recorded] * 2
    assert "T0K" not in str(http_calls(r.run_id))


@pytest.mark.parametrize("index", range(len(REDIRECTS)))
def test_a_url_in_a_locations_path_is_recorded_by_the_url_rule(base: str, index: int) -> None:
    sent, recorded = REDIRECTS[index]
    with bitexact.run() as r:
        assert bitexact.wrap(httpx.Client()).get(f"{base}/moved?i={index}").headers["location"] == sent
        assert bitexact.wrap(requests.Session()).get(f"{base}/moved?i={index}",
                                                     allow_redirects=False).headers["location"] == sent
    calls = http_calls(r.run_id)
    assert [call["data"]["response"]["headers"]["location"] for call in calls] == [recorded] * 2
    assert "T0K" not in str(calls)
