"""A reply HTTP gives no body (204, 304, a reply to HEAD) is not recorded as streamed.

A 204 or 304 carries no content-length, which the recorder took for a
streamed (chunked or close-delimited) body: such a reply read as a stream
in the evidence. Real clients against a loopback server.
"""

from __future__ import annotations

from typing import Any

import httpx
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen


class _Bodyless(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path == "/streamed":
            self.send_response(200)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"2\r\nok\r\n0\r\n\r\n")
            return
        self.send_response(204 if self.path == "/none" else 304)
        self.end_headers()

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.end_headers()


def _responses(run_id: str) -> list[tuple[str, int, bool]]:
    return [(c["data"]["request"]["method"], c["data"]["response"]["status"], c["data"]["response"]["streamed"])
            for c in http_calls(run_id)]


def _exchanges(base: str, client: Any) -> None:
    for path in ("/none", "/same", "/streamed"):
        client.get(base + path)
    client.head(base + "/head")


def test_a_reply_with_no_body_is_not_recorded_as_streamed() -> None:
    expected = [("GET", 204, False), ("GET", 304, False), ("GET", 200, True), ("HEAD", 200, False)]
    with serve_seen(_Bodyless) as (base, _), bitexact.run() as r:
        with bitexact.wrap(httpx.Client()) as client:
            _exchanges(base, client)
        with bitexact.wrap(requests.Session()) as session:
            _exchanges(base, session)
    assert _responses(r.run_id) == expected + expected
