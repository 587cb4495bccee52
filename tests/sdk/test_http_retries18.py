"""A requests session whose adapter retries (urllib3's Retry) records the attempts it gave up on: the server
may have received each, and the record said one request was sent once. Real servers on loopback.

Before, a POST answered 503 and retried was recorded as one exchange answered 200 while the server had
taken it twice.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen


class _Flaky(HandlerBase):
    """Every odd request to /flaky is answered 503, every even one 200; the first to /drop has its connection
    closed unanswered. Each request is counted in ``seen``."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self._body()
        count = self._note_seen(body)
        if self.path.startswith("/drop") and count == 1:
            self.close_connection = True
            return  # no reply: the client reads a remote disconnect
        if self.path.startswith("/flaky") and count % 2 == 1:
            self._send(503, b"busy", "text/plain")
            return
        self._send(200, b'{"ok": true}', "application/json")


@pytest.fixture
def srv() -> Iterator[tuple[str, list[dict[str, object]]]]:
    with serve_seen(_Flaky) as served:
        yield served


def _session(retry: Retry | int) -> requests.Session:
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    return bitexact.wrap(session)


def test_a_request_retried_on_its_status_records_the_attempt_it_gave_up_on(
    srv: tuple[str, list[dict[str, object]]]
) -> None:
    base, seen = srv
    retry = Retry(total=3, status_forcelist=[503], allowed_methods=None, backoff_factor=0)
    with bitexact.run() as r:
        reply = _session(retry).post(base + "/flaky?token=t0k", data=b"pay once")
    assert reply.status_code == 200 and len(seen) == 2, "the agent sees the last answer; the server took two"
    (call,) = http_calls(r.run_id)
    assert call["data"]["response"]["status"] == 200 and call["data"]["request"]["text"] == "pay once"
    assert call["data"]["retried"] == [
        {"method": "POST", "url": "/flaky?token=%5Bredacted%5D", "status": 503}]


def test_a_request_retried_after_its_connection_dropped_records_the_error(
    srv: tuple[str, list[dict[str, object]]]
) -> None:
    base, seen = srv
    retry = Retry(total=2, read=2, allowed_methods=None, backoff_factor=0)
    with bitexact.run() as r:
        reply = _session(retry).post(base + "/drop", data=b"x")
    assert reply.status_code == 200 and len(seen) == 2
    (call,) = http_calls(r.run_id)
    (attempt,) = call["data"]["retried"]
    assert attempt["method"] == "POST" and attempt["url"] == "/drop" and attempt["status"] is None
    assert attempt["error"]["type"] == "urllib3.exceptions.ProtocolError"
    assert "Remote end closed connection without response" in attempt["error"]["message"]


def test_a_request_sent_once_records_no_attempts(srv: tuple[str, list[dict[str, object]]]) -> None:
    base, seen = srv
    with bitexact.run() as r:
        assert _session(Retry(total=3, status_forcelist=[503])).post(base + "/ok", data=b"x").status_code == 200
    (call,) = http_calls(r.run_id)
    assert len(seen) == 1 and "retried" not in call["data"]
