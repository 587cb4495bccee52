"""A body cut short is recorded ``complete: false``, even when a later read finds nothing left.

``next(r.iter_lines())`` drops its generator: urllib3 closes a chunked body's connection (as unwrapped), and
the agent's next read (``r.content``) gets ``b''``. That empty read is the closed connection, not the body's
end. A sized body whose stream is dropped early keeps its connection, and read on to its end it is complete.
Real servers on loopback.
"""

from __future__ import annotations

import httpx
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

LINE = b"0123456789abcdefghijklmnopqrstuvwxyz\n"
LINES = 300


class _Lines(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = LINE * LINES
        if self.path == "/sized":
            self._send(200, body, "text/plain")
            return
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for start in range(0, len(body), 512):
            part = body[start:start + 512]
            self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


def _response(run_id: str) -> dict[str, object]:
    (call,) = http_calls(run_id)
    response = call["data"]["response"]
    assert isinstance(response, dict)
    return response


def test_a_chunked_body_peeked_then_read_is_incomplete() -> None:
    with serve_seen(_Lines) as (base, _), bitexact.run() as run:
        session = bitexact.wrap(requests.Session())
        r = session.get(base + "/chunked", stream=True)
        first = next(r.iter_lines())
        rest = r.content  # the connection is closed: b'', as unwrapped
    assert first == LINE.rstrip(b"\n") and rest == b""
    response = _response(run.run_id)
    assert response["complete"] is False
    assert len(str(response["text"])) < len(LINE) * LINES


def test_a_sized_body_read_on_after_its_stream_was_dropped_is_complete() -> None:
    with serve_seen(_Lines) as (base, _), bitexact.run() as run:
        session = bitexact.wrap(requests.Session())
        r = session.get(base + "/sized", stream=True)
        stream = r.raw.stream(10)
        first = next(stream)
        del stream  # a sized body keeps its connection: the rest is read below
        rest = r.raw.read()
    assert first + rest == LINE * LINES
    response = _response(run.run_id)
    assert response["complete"] is True
    assert response["text"] == (LINE * LINES).decode()


def test_an_httpx_stream_left_early_is_incomplete() -> None:
    with serve_seen(_Lines) as (base, _), bitexact.run() as run:
        with bitexact.wrap(httpx.Client()) as client, client.stream("GET", base + "/chunked") as r:
            for _ in r.iter_lines():
                break
    assert _response(run.run_id)["complete"] is False
