"""Session 20: a requests session whose urllib3 ``Retry`` runs out records the attempts it made.

Session 18 recorded ``retried`` when a retry ended in a response. When the retries ran out requests raised
``RetryError`` / ``ConnectionError`` (from urllib3's ``MaxRetryError``) and the failed exchange was recorded with
no ``retried`` at all, though the server had taken every attempt: three POSTs answered 503 read as one request
sent once. urllib3 puts no history on the error; the exhausted Retry is a local of ``Retry.increment``, whose
frame the error's traceback keeps. httpx's transport retries only connections that never opened (no request
byte sent): nothing to record there, as docs/sdk.md says. Real servers on loopback.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen


class _Busy(HandlerBase):
    """``/busy`` is always answered 503; ``/drop`` has its connection closed unanswered; ``/then-drop`` is
    answered 503 the first time and has its connection closed after; ``/once`` is answered 503, unless its
body never came. Each request is noted in ``seen``."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self._body()
        count = self._note_seen(body)
        if not body and self.path.startswith("/once"):
            self.close_connection = True
            return  # the client gave up sending the body: nobody to answer
        if self.path.startswith("/drop") or (self.path.startswith("/then-drop") and count > 1):
            self.close_connection = True
            return  # no reply: the client reads a remote disconnect
        self._send(503, b"busy", "text/plain")


@pytest.fixture
def srv() -> Iterator[tuple[str, list[dict[str, object]]]]:
    with serve_seen(_Busy) as served:
        yield served


def _session(retry: Retry) -> requests.Session:
    session = requests.Session()
    session.mount("http://", HTTPAdapter(max_retries=retry))
    return bitexact.wrap(session)


def test_retries_that_run_out_on_a_status_record_every_attempt(srv: tuple[str, list[dict[str, object]]]) -> None:
    base, seen = srv
    retry = Retry(total=2, status_forcelist=[503], allowed_methods=None, backoff_factor=0)
    with bitexact.run() as r, pytest.raises(requests.exceptions.RetryError):
        _session(retry).post(base + "/busy?token=t0k", data=b"pay once")
    assert len(seen) == 3, "the first attempt and two retries reached the server"
    (call,) = http_calls(r.run_id)
    assert call["data"]["response"] is None and call["data"]["request"]["text"] == "pay once"
    assert call["data"]["error"]["type"] == "requests.exceptions.RetryError"
    assert call["data"]["retried"] == [
        {"method": "POST", "url": "/busy?token=%5Bredacted%5D", "status": 503}] * 3
    assert "t0k" not in str(call)


def test_retries_that_run_out_on_dropped_connections_record_each_error(
    srv: tuple[str, list[dict[str, object]]]
) -> None:
    base, seen = srv
    retry = Retry(total=1, read=1, allowed_methods=None, backoff_factor=0)
    with bitexact.run() as r, pytest.raises(requests.exceptions.ConnectionError):
        _session(retry).post(base + "/drop", data=b"x")
    assert len(seen) == 2
    (call,) = http_calls(r.run_id)
    assert call["data"]["error"]["type"] == "requests.exceptions.ConnectionError"
    attempts = call["data"]["retried"]
    assert [(a["method"], a["url"], a["status"]) for a in attempts] == [("POST", "/drop", None)] * 2
    assert {a["error"]["type"] for a in attempts} == {"urllib3.exceptions.ProtocolError"}


def test_an_error_the_retry_may_not_retry_records_the_attempts_before_it(
    srv: tuple[str, list[dict[str, object]]]
) -> None:
    # A 503 is retried; the retry's dropped connection is a read error, which read=False does not retry:
    # urllib3 re-raises it (no MaxRetryError). The 503 before it reached the server all the same.
    base, seen = srv
    retry = Retry(total=3, read=False, status_forcelist=[503], allowed_methods=None, backoff_factor=0)
    with bitexact.run() as r, pytest.raises(requests.exceptions.ConnectionError):
        _session(retry).post(base + "/then-drop", data=b"x")
    assert len(seen) == 2
    (call,) = http_calls(r.run_id)
    assert call["data"]["retried"] == [{"method": "POST", "url": "/then-drop", "status": 503}]
    assert call["data"]["error"]["type"] == "requests.exceptions.ConnectionError"


def test_a_failure_with_no_retry_records_no_attempts(srv: tuple[str, list[dict[str, object]]]) -> None:
    base, seen = srv
    with bitexact.run() as r, pytest.raises(requests.exceptions.ConnectionError):
        bitexact.wrap(requests.Session()).post(base + "/drop", data=b"x")
    assert len(seen) == 1
    (call,) = http_calls(r.run_id)
    assert "retried" not in call["data"]


def test_httpx_connect_retries_send_no_request_and_record_none() -> None:
    # httpx (httpcore) retries only a connection that did not open: no byte of the request went out, so the
    # one exchange recorded, its error the last connect error, is all the server could have seen.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with bitexact.run() as r, pytest.raises(httpx.ConnectError):
        bitexact.wrap(httpx.Client(transport=httpx.HTTPTransport(retries=2))).get(f"http://127.0.0.1:{port}/x")
    (call,) = http_calls(r.run_id)
    assert call["data"]["error"]["type"] == "httpx.ConnectError" and "retried" not in call["data"]


class _OnceOnly:
    """A request body that can be sent once: sending it again (a retry) fails in the agent's own code."""

    def __init__(self) -> None:
        self.passes = 0

    def __iter__(self) -> Iterator[bytes]:
        self.passes += 1
        if self.passes > 1:
            raise RuntimeError("this body can be sent once")
        yield b"chunk"


def test_an_error_raised_past_urllib3_mid_retry_records_the_attempts_before_it(
    srv: tuple[str, list[dict[str, object]]]
) -> None:
    # The 503 is retried; sending the body again raises the agent's own error through urllib3 (no Retry
    # step sees it): the innermost urlopen's Retry holds the attempt before it.
    base, seen = srv
    retry = Retry(total=3, status_forcelist=[503], allowed_methods=None, backoff_factor=0)
    with bitexact.run() as r, pytest.raises(RuntimeError, match="sent once"):
        _session(retry).post(base + "/once", data=_OnceOnly())
    assert [item["body"] for item in seen] == [b"chunk", b""], "the second attempt's head went out, no body"
    (call,) = http_calls(r.run_id)
    assert call["data"]["error"]["type"] == "builtins.RuntimeError"
    assert call["data"]["retried"] == [{"method": "POST", "url": "/once", "status": 503}]
