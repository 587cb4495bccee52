"""A small claims API on loopback: the real HTTP peer the demo agent calls."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CLAIMS = {
    "CLM-4471": {
        "claim": "CLM-4471",
        "policy": "HX-20931",
        "peril": "escape_of_water",
        "reported": "2026-10-12",
        "estimate_eur": 3840,
        "status": "open",
    }
}


class _Handler(BaseHTTPRequestHandler):
    server_version = "ClaimsAPI/1.0"

    def _send(self, status: int, body: object) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        claim_id = self.path.rsplit("/", 1)[-1].split("?", 1)[0]
        if self.path.startswith("/v1/claims/") and claim_id in CLAIMS:
            self._send(200, CLAIMS[claim_id])
        else:
            self._send(404, {"error": "not_found", "path": self.path})

    def log_message(self, format: str, *args: object) -> None:  # keep the demo's output clean
        return


@contextmanager
def claims_api() -> Iterator[str]:
    """Serve the claims API on 127.0.0.1 (a free port); yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, name="bitexact-demo-api", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
