"""A tiny OpenAI-compatible chat server on loopback, so the examples run with no network and no key.

POST /v1/chat/completions answers like the real API: a JSON completion, or
server-sent events with ``"stream": true``. Given ``tools`` and no tool
result yet, it asks for the first tool; given a tool result, it answers with
it. It is a stand-in for a model, not a model.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "local-echo-1"


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    messages = request.get("messages", [])
    last = messages[-1] if messages else {"role": "user", "content": ""}
    tools = request.get("tools") or []
    if tools and last.get("role") != "tool":
        fn = tools[0]["function"]
        args = {name: "HX-20931" for name in fn.get("parameters", {}).get("properties", {})}
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": fn["name"], "arguments": json.dumps(args)}}]}
    if last.get("role") == "tool":
        return {"role": "assistant", "content": f"The tool says: {last.get('content')}"}
    return {"role": "assistant", "content": f"You said {len(str(last.get('content', '')))} characters: "
                                            f"{last.get('content')}"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        message = _reply(body)
        created = int(time.time())
        if body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            words = (message.get("content") or "").split(" ")
            for i, word in enumerate(words):
                chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": created, "model": MODEL,
                         "choices": [{"index": 0, "delta": {"content": word + (" " if i < len(words) - 1 else "")}}]}
                self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")
            return
        payload = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": created, "model": MODEL,
                              "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


@contextmanager
def local_llm() -> Iterator[str]:
    """Serve on 127.0.0.1 (a free port); yields the base URL (``.../v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
