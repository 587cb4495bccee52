"""Session 20: every URL a response header carries is recorded by the URL rule, not only a ``Link`` target.

Session 19 read each ``<URL>`` of a ``Link`` header by the rule; a URL in one of its parameters
(``anchor="https://a/y?access_token=T"``) and a ``Refresh`` header's URL (``0; url=https://a/y?token=T``, which
browsers follow as a redirect) were still recorded with the token as sent. ``Location`` (on any 3xx, and on a
201) and ``Content-Location`` are checked beside them. Real servers on loopback, through httpx and requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

# (header, value sent, value recorded): the forms browsers accept for Refresh (HTML's shared declarative
# refresh steps), a Link's quoted and unquoted parameters.
CASES = [
    ("link", '<https://a/x>; rel="next"; anchor="https://a/y?access_token=T0K1"',
     '<https://a/x>; rel="next"; anchor="https://a/y?access_token=%5Bredacted%5D"'),
    ("link", '</p?page=2>; rel=https://rels.example/r?sig=T0K2, <https://a/z>; title="<b>, not a target"',
     '</p?page=2>; rel=https://rels.example/r?sig=%5Bredacted%5D, <https://a/z>; title="<b>, not a target"'),
    ("link", '<https://a/x?page=2&token=T0K8; rel="next"; anchor="https://a/y?key=T0K9',  # malformed: unclosed
     '<https://a/x?page=2&token=%5Bredacted%5D; rel="next"; anchor="https://a/y?key=%5Bredacted%5D'),
    ("refresh", "0; url=https://a/y?token=T0K3", "0; url=https://a/y?token=%5Bredacted%5D"),
    ("refresh", "5 ; URL = 'https://b/?api_key=T0K4&page=2'", "5 ; URL = 'https://b/?api_key=%5Bredacted%5D&page=2'"),
    ("refresh", '1.5,Url="/next?key=T0K5#top" trailing', '1.5,Url="/next?key=%5Bredacted%5D#top" trailing'),
    ("refresh", "0 https://u:T0K6@a/y?q=1", "0 https://%5Bredacted%5D@a/y?q=1"),
    ("refresh", "0; url=https://a/y?q=1", "0; url=https://a/y?q=1"),
    ("content-location", "/c?q=1&api_key=T0K7", "/c?q=1&api_key=%5Bredacted%5D"),
]
STATUSES = [301, 302, 303, 307, 308, 201]


class _Headers(HandlerBase):
    """``/h?i=N`` answers 200 with header ``CASES[N]``; ``/s?status=S`` answers S with a token in ``Location``."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        query = parse_qs(urlsplit(self.path).query)
        if self.path.startswith("/s"):
            self._send(int(query["status"][0]), b"", "text/plain", {"location": "/x?token=L0C8&page=1"})
            return
        name, sent, _ = CASES[int(query["i"][0])]
        self._send(200, b"{}", "application/json", {name.upper(): sent})  # a header's name in any case


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(_Headers) as (url, _seen):
        yield url


def _recorded(run_id: str | None) -> list[dict[str, str]]:
    return [call["data"]["response"]["headers"] for call in http_calls(run_id)]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_a_url_in_a_response_header_is_recorded_by_the_url_rule(base: str, index: int) -> None:
    name, sent, recorded = CASES[index]
    with bitexact.run() as r:
        reply = bitexact.wrap(httpx.Client()).get(f"{base}/h?i={index}")
        assert reply.headers[name] == sent  # the agent gets the header as sent
        assert bitexact.wrap(requests.Session()).get(f"{base}/h?i={index}").headers[name] == sent
    assert [headers[name] for headers in _recorded(r.run_id)] == [recorded] * 2
    assert "T0K" not in str(http_calls(r.run_id))


@pytest.mark.parametrize("status", STATUSES)
def test_location_is_recorded_by_the_url_rule_whatever_the_status(base: str, status: int) -> None:
    with bitexact.run() as r:
        assert bitexact.wrap(httpx.Client()).get(f"{base}/s?status={status}").status_code == status
        reply = bitexact.wrap(requests.Session()).get(f"{base}/s?status={status}", allow_redirects=False)
        assert reply.headers["location"] == "/x?token=L0C8&page=1"
    assert [h["location"] for h in _recorded(r.run_id)] == ["/x?token=%5Bredacted%5D&page=1"] * 2
