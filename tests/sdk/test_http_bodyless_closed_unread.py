"""A reply with no body (HEAD, 204, 304, ``content-length: 0``) taken as a stream and closed unread is recorded
complete: there was nothing to read. A reply with a body closed unread stays incomplete. Real servers on loopback.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

CASES = [("HEAD", "/head", 200), ("GET", "/204", 204), ("GET", "/304", 304), ("GET", "/empty", 200)]


class _Bodyless(HandlerBase):
    def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("content-length", "1234")  # the size a GET would get: no body follows
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/full":
            self._send(200, b"x" * 5000, "text/plain")
            return
        if self.path == "/empty":
            self._send(200, b"", "text/plain")
            return
        self.send_response(int(self.path.strip("/")))
        self.end_headers()


def _recorded(run_id: str) -> list[tuple[str, int, bool]]:
    return [(c["data"]["request"]["method"], c["data"]["response"]["status"], c["data"]["response"]["complete"])
            for c in http_calls(run_id)]


def _closed_unread(client: Any, base: str, method: str, path: str) -> None:
    if isinstance(client, httpx.Client):
        with client.stream(method, base + path):
            pass
    else:
        with client.request(method, base + path, stream=True):
            pass


@pytest.mark.parametrize("make", [requests.Session, httpx.Client], ids=["requests", "httpx"])
def test_a_reply_with_no_body_closed_unread_is_complete(make: Any) -> None:
    with serve_seen(_Bodyless) as (base, _), bitexact.run() as run:
        client = bitexact.wrap(make())
        for method, path, _ in CASES:
            _closed_unread(client, base, method, path)
        _closed_unread(client, base, "GET", "/full")
        client.close()
    assert _recorded(run.run_id) == [(m, s, True) for m, _, s in CASES] + [("GET", 200, False)]
