"""HTTP capture, nondeterminism and causal context (the seventh review): regression tests, each for a bug its
docstring names (real loopback servers, real clients, no mocks)."""

from __future__ import annotations

import json
import socket
import threading

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls as _http_calls
from sdk.servers import LoopbackServer

SECRET = "sk-live-9f8e7d6c5b4a"


def test_a_credential_header_quoted_by_a_clients_error_is_not_recorded_in_the_clear(server: LoopbackServer) -> None:
    """A header value the client refuses (a token read with its newline) made the request fail with an error
    quoting the value; the header was recorded `[redacted]`, but the error's message kept the credential."""
    with bitexact.run() as r:
        client = bitexact.wrap(httpx.Client())
        with pytest.raises(httpx.LocalProtocolError, match="sk-live"):  # the agent's error is unchanged
            client.get(server.base_url + "/json", headers={"Authorization": f"Bearer {SECRET}\n"})
        session = bitexact.wrap(requests.Session())
        prepared = requests.Request("GET", server.base_url + "/json").prepare()
        prepared.headers["X-Api-Key"] = f"{SECRET}\r\n"  # past requests' own check: http.client refuses it
        with pytest.raises(ValueError, match="sk-live"):
            session.send(prepared)
    calls = _http_calls(r.run_id)
    assert [c["data"]["error"]["type"] for c in calls] == ["httpx.LocalProtocolError", "builtins.ValueError"]
    for call in calls:
        assert SECRET not in json.dumps(call), call["data"]["error"]
        assert "[redacted]" in call["data"]["error"]["message"]


def test_a_body_read_through_urllib3s_data_json_or_read_chunked_is_recorded(server: LoopbackServer) -> None:
    """`response.raw.data`, `.json()` and `.read_chunked()` read the body past the recording tee: the agent
    got the body, the record said none came (empty text, `complete` false)."""
    with bitexact.run() as r:
        session = bitexact.wrap(requests.Session())
        by_data = session.get(server.base_url + "/json", stream=True)
        assert by_data.raw.data == b'{"ok": true, "model": "m-1"}'
        assert by_data.raw.data == b'{"ok": true, "model": "m-1"}'  # kept by urllib3: not read (nor recorded) again
        by_data.close()
        assert session.get(server.base_url + "/json", stream=True).raw.json() == {"ok": True, "model": "m-1"}
        server.gate.set()
        chunked = session.get(server.base_url + "/sse", stream=True)
        body = b"".join(chunked.raw.read_chunked())
        chunked.close()
    calls = _http_calls(r.run_id)
    assert [(c["data"]["response"]["text"], c["data"]["response"]["complete"]) for c in calls] == [
        ('{"ok": true, "model": "m-1"}', True), ('{"ok": true, "model": "m-1"}', True), (body.decode(), True)]
    assert calls[2]["data"]["model"] == "m-stream"


def test_an_adapter_mounted_on_a_wrapped_session_afterwards_records_too(server: LoopbackServer) -> None:
    """An adapter mounted after the session was wrapped (a retry policy, the usual way to set one) replaced
    the recording adapter: every exchange through it went unrecorded."""
    with bitexact.run() as r:
        session = bitexact.wrap(requests.Session())
        session.mount("http://", requests.adapters.HTTPAdapter(max_retries=2))
        session.mount(server.base_url + "/json", requests.adapters.HTTPAdapter(max_retries=3))
        assert session.get(server.base_url + "/json").json() == {"ok": True, "model": "m-1"}
        assert session.get(server.base_url + "/bytes").content == bytes(range(256))
        assert session.get_adapter(server.base_url + "/json").max_retries.total == 3
        assert list(session.adapters) == [server.base_url + "/json", "https://", "http://"]  # as unwrapped
    assert [c["data"]["request"]["path"] for c in _http_calls(r.run_id)] == ["/json", "/bytes"]


def test_a_credential_header_line_a_clients_error_quotes_from_the_reply_is_not_recorded_in_the_clear() -> None:
    """A reply whose Set-Cookie line h11 refuses failed the exchange with an error quoting the whole line: the
    cookie the header rule records as `[redacted]` was in the record's error message in the clear."""
    listener = socket.create_server(("127.0.0.1", 0))

    def reply() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nSet-Cookie : session=" + SECRET.encode() + b"\r\n"
                         b"Content-Length: 2\r\n\r\nok")

    server = threading.Thread(target=reply, daemon=True)
    server.start()
    try:
        with bitexact.run() as r:
            client = bitexact.wrap(httpx.Client())
            with pytest.raises(httpx.RemoteProtocolError, match=SECRET):  # the agent's error is unchanged
                client.get(f"http://127.0.0.1:{listener.getsockname()[1]}/x")
    finally:
        server.join(5)
        listener.close()
    (call,) = _http_calls(r.run_id)
    assert SECRET not in json.dumps(call)
    assert call["data"]["error"]["message"] == "illegal header line: bytearray(b'Set-Cookie : [redacted]')"
