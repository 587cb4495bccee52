"""Real HTTP servers on loopback for the SDK's capture tests (no mocks: real sockets, real bytes)."""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class LoopbackServer:
    base_url: str
    gate: threading.Event = field(default_factory=threading.Event)
    """The SSE endpoint sends its first event, then waits for this before the rest."""
    requests: list[dict[str, object]] = field(default_factory=list)


class HandlerBase(BaseHTTPRequestHandler):
    """What every loopback server's handler shares: HTTP/1.1, no log lines, a request body read whole
    (sized or chunked), a sized reply."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def _body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(length) if length else b""

    _seen_lock = threading.Lock()

    def _note_seen(self, body: bytes) -> int:
        """Note this request (path and body) in the server's ``seen`` (a :func:`serve_seen` server's); how
        many requests to this path it holds, this one included."""
        with self._seen_lock:
            seen = self.server.seen  # type: ignore[attr-defined]
            seen.append({"path": self.path, "body": body})
            return sum(1 for item in seen if item["path"] == self.path)

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class SeenServer(ThreadingHTTPServer):
    """A loopback server whose handler notes each request it saw in ``seen``."""

    daemon_threads = True
    seen: list[dict[str, Any]]


def latin1_digest(value: str) -> str:
    """The SHA-256 of a header value as sent (latin-1, as HTTP/1.1 carries it)."""
    return hashlib.sha256(value.encode("latin-1")).hexdigest()


def header_cases_handler(cases: list[tuple[str, str, str]]) -> type[HandlerBase]:
    """A handler for header tests: ``/h?i=N`` answers with the header ``cases[N]`` names (name, value sent, ...);
    ``/echo`` answers the SHA-256 of each request header and of the request's path (``:path``) as JSON: what the
    server got, without putting the value in the recorded body."""

    class _Headers(HandlerBase):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.startswith("/echo"):
                got = {name.lower(): latin1_digest(value) for name, value in self.headers.items()}
                self._send(200, json.dumps({**got, ":path": latin1_digest(self.path)}).encode(), "application/json")
                return
            name, sent = cases[int(parse_qs(urlsplit(self.path).query)["i"][0])][:2]
            self._send(200, b"{}", "application/json", {name: sent})

    return _Headers


@contextmanager
def serve_seen(handler: type[BaseHTTPRequestHandler]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``handler`` served on a loopback port for the block: its base URL and the requests it saw."""
    server = SeenServer(("127.0.0.1", 0), handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


class _Handler(HandlerBase):
    server: _Server

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        first = {"model": "m-stream", "choices": [{"delta": {"content": "Hel"}}]}
        self._chunk(f"data: {json.dumps(first)}\n\n".encode())
        self.server.state.gate.wait(10)
        second = {"model": "m-stream", "choices": [{"delta": {"content": "lo"}}]}
        # One event split across two chunks: the record reassembles it.
        text = f"data: {json.dumps(second)}\n\ndata: [DONE]\n\n".encode()
        self._chunk(text[:10])
        self._chunk(text[10:])
        self._chunk(b"")

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.server.state.requests.append({"path": self.path, "headers": dict(self.headers)})
        path = self.path.split("?", 1)[0]
        if path == "/json":
            self._send(200, json.dumps({"ok": True, "model": "m-1"}).encode(), "application/json")
        elif path == "/bytes":
            self._send(200, bytes(range(256)), "application/octet-stream")
        elif path == "/gzip":
            self._send(200, gzip.compress(b'{"zipped": true}'), "application/json", {"content-encoding": "gzip"})
        elif path == "/sse":
            self._sse()
        elif path == "/sse-card":  # a card number split across two chunks
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self._chunk(b"data: pay with 4111 1111 ")
            self._chunk(b"1111 1111 today\n\n")
            self._chunk(b"")
        elif path == "/redirect":  # a redirect carrying a token, and a session cookie
            self._send(302, b"", "text/plain", {"location": "/json?token=t0k-redirect&x=1",
                                                "set-cookie": "session=sess-secret; HttpOnly"})
        elif path == "/cut":
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", "1000")
            self.end_headers()
            self.wfile.write(b"only part of it")
            self.wfile.flush()
            self.close_connection = True
        else:
            self._send(404, b'{"error": "not found"}', "application/json")

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.state.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        self._send(200, json.dumps({"echo": body.decode("utf-8", "replace"), "model": "m-echo"}).encode(),
                   "application/json")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: LoopbackServer


@contextmanager
def serve() -> Iterator[LoopbackServer]:
    """Serve on 127.0.0.1 (a free port) for the block."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = LoopbackServer(f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.state
    finally:
        server.state.gate.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
