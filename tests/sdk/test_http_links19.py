"""Session 19: the URLs of a ``Link`` response header go through the URL rule, as the request URL does.

An API that pages its answers hands back ``Link: <https://api/x?page=2&access_token=T>; rel="next"``, the
token it was called with in each link. The request URL was recorded with ``access_token=%5Bredacted%5D``
(protocol-vectors.json ``credential_keys.recorded_urls``) and the ``Link`` header beside it with the token as
sent. A redirect's ``Location`` is checked here too (it was recorded by the rule already). Real servers on
loopback, through httpx and requests.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

LINK = ('<http://api.example/x?page=2&access_token=T0KEN&per_page=5>; rel="next", '
        '</x?page=9&API%5FKEY=K3Y#f>; rel="last"; title="<b>"')
RECORDED = ('<http://api.example/x?page=2&access_token=%5Bredacted%5D&per_page=5>; rel="next", '
            '</x?page=9&API%5FKEY=%5Bredacted%5D#f>; rel="last"; title="<b>"')


class _Paged(HandlerBase):
    """``/x`` answers with a ``Link`` header; ``/moved`` redirects to ``/x`` with a token in the ``Location``."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.server.seen.append({"path": self.path})  # type: ignore[attr-defined]
        if self.path.startswith("/moved"):
            self._send(302, b"", "text/plain", {"location": "/x?page=1&token=S3CRET"})
            return
        self._send(200, b"[]", "application/json", {"link": LINK})


@pytest.fixture
def base() -> Iterator[str]:
    with serve_seen(_Paged) as (url, _seen):
        yield url


def _headers(run_id: str | None) -> list[dict[str, str]]:
    return [call["data"]["response"]["headers"] for call in http_calls(run_id)]


def test_httpx_link_header_urls_are_recorded_by_the_url_rule(base: str) -> None:
    with bitexact.run() as r:
        client = bitexact.wrap(httpx.Client())
        reply = client.get(f"{base}/x?page=1&access_token=T0KEN")
    assert reply.headers["link"] == LINK  # the agent gets the header as sent
    [headers] = _headers(r.run_id)
    assert headers["link"] == RECORDED
    assert http_calls(r.run_id)[0]["data"]["request"]["url"].endswith("/x?page=1&access_token=%5Bredacted%5D")


def test_requests_link_header_urls_are_recorded_by_the_url_rule(base: str) -> None:
    with bitexact.run() as r:
        session = bitexact.wrap(requests.Session())
        reply = session.get(f"{base}/x?page=1&access_token=T0KEN")
    assert reply.headers["link"] == LINK
    [headers] = _headers(r.run_id)
    assert headers["link"] == RECORDED


def test_a_followed_redirect_records_its_location_by_the_url_rule(base: str) -> None:
    with bitexact.run() as r:
        session = bitexact.wrap(requests.Session())
        assert session.get(f"{base}/moved").status_code == 200
        client = bitexact.wrap(httpx.Client(follow_redirects=True))
        assert client.get(f"{base}/moved").status_code == 200
    headers = _headers(r.run_id)
    assert [h.get("location") for h in headers] == ["/x?page=1&token=%5Bredacted%5D", None] * 2
    assert [h.get("link") for h in headers] == [None, RECORDED] * 2
    assert "S3CRET" not in str(http_calls(r.run_id)) and "T0KEN" not in str(http_calls(r.run_id))
