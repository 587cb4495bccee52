"""HTTP capture against real servers on loopback: httpx sync and async, requests, SSE, failures, instrument()."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
from typing import Any

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import entries
from sdk.servers import LoopbackServer


def _http_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "http_call"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_httpx_exchange_is_an_observed_http_call_with_credentials_redacted(server: LoopbackServer) -> None:
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        response = client.post(server.base_url + "/v1/chat?token=t0k&page=2",
                               json={"model": "m-req", "messages": ["hi"]},
                               headers={"Authorization": "Bearer sk-live-123", "x-trace": "abc"})
        assert response.json()["model"] == "m-echo"
    (call,) = _http_calls(r.run_id)
    assert call["prov"] == "observed"
    request, reply = call["data"]["request"], call["data"]["response"]
    assert request["method"] == "POST"
    assert request["url"] == server.base_url + "/v1/chat?token=%5Bredacted%5D&page=2"
    assert request["path"] == "/v1/chat" and request["query"] == "token=%5Bredacted%5D&page=2"
    assert request["headers"]["authorization"] == "[redacted]" and request["headers"]["x-trace"] == "abc"
    assert json.loads(request["text"]) == {"model": "m-req", "messages": ["hi"]}
    assert reply["status"] == 200 and reply["complete"] is True and reply["streamed"] is False
    assert reply["media_type"] == "application/json"
    assert json.loads(reply["text"])["model"] == "m-echo"
    assert call["data"]["model"] == "m-req"
    assert "sk-live-123" not in json.dumps(call) and "t0k" not in json.dumps(call)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-live-123"  # sent as the agent wrote it


@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_cookies_proxy_credentials_and_a_redirects_token_are_not_recorded(
    server: LoopbackServer, client_kind: str
) -> None:
    sent = {"Cookie": "session=cookie-secret", "Proxy-Authorization": "Basic cHJveHk6c2VjcmV0"}
    with bitexact.run() as r:
        if client_kind == "httpx":
            with bitexact.wrap(httpx.Client()) as client:
                response = client.get(server.base_url + "/redirect", headers=sent)
                location = response.headers["location"]
        else:
            with bitexact.wrap(requests.Session()) as session:
                reply = session.get(server.base_url + "/redirect", headers=sent, allow_redirects=False)
                location = reply.headers["location"]
    assert location == "/json?token=t0k-redirect&x=1"  # the agent is handed the redirect as sent
    (call,) = _http_calls(r.run_id)
    request, reply_data = call["data"]["request"], call["data"]["response"]
    assert request["headers"]["cookie"] == "[redacted]"
    assert request["headers"]["proxy-authorization"] == "[redacted]"
    assert reply_data["status"] == 302
    assert reply_data["headers"]["set-cookie"] == "[redacted]"
    assert reply_data["headers"]["location"] == "/json?token=%5Bredacted%5D&x=1"
    recorded = json.dumps(call)
    for secret in ("cookie-secret", "cHJveHk6c2VjcmV0", "sess-secret", "t0k-redirect"):
        assert secret not in recorded
    assert server.requests[0]["headers"]["Cookie"] == "session=cookie-secret"  # sent as the agent wrote it


def test_bytes_are_b64_and_a_gzip_body_is_recorded_decompressed(server: LoopbackServer) -> None:
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        assert client.get(server.base_url + "/bytes").content == bytes(range(256))
        assert client.get(server.base_url + "/gzip").json() == {"zipped": True}
    raw, zipped = (c["data"]["response"] for c in _http_calls(r.run_id))
    assert base64.b64decode(raw["b64"]) == bytes(range(256)) and "text" not in raw
    assert zipped["text"] == '{"zipped": true}'


def test_sse_reaches_the_agent_chunk_by_chunk_and_is_recorded_once_reassembled(server: LoopbackServer) -> None:
    seen: list[str] = []
    with bitexact.run() as r, bitexact.wrap(httpx.Client(timeout=20)) as client:
        with client.stream("GET", server.base_url + "/sse") as response:
            for line in response.iter_lines():
                seen.append(line)
                if len(seen) == 1:
                    # The server holds the rest until the agent has this first event: it arrived alone.
                    assert _http_calls(r.run_id) == []
                    server.gate.set()
    assert seen[0].startswith("data: ") and "Hel" in seen[0]
    (call,) = _http_calls(r.run_id)
    reply = call["data"]["response"]
    assert reply["streamed"] is True and reply["complete"] is True
    assert reply["media_type"] == "text/event-stream"
    assert reply["text"].count("data: ") == 3 and reply["text"].endswith("data: [DONE]\n\n")
    assert '"lo"' in reply["text"]  # the event split across two chunks is whole in the record
    assert call["data"]["model"] == "m-stream"


def test_async_httpx_sse_and_json(server: LoopbackServer) -> None:
    async def agent() -> tuple[str | None, list[bytes]]:
        chunks: list[bytes] = []
        async with bitexact.run() as r, bitexact.wrap(httpx.AsyncClient(timeout=20)) as client:
            assert (await client.get(server.base_url + "/json")).json()["ok"] is True
            async with client.stream("GET", server.base_url + "/sse") as response:
                async for chunk in response.aiter_raw():
                    chunks.append(chunk)
                    server.gate.set()
        return r.run_id, chunks

    run_id, chunks = asyncio.run(agent())
    assert len(chunks) >= 2
    first, stream = _http_calls(run_id)
    assert first["data"]["response"]["status"] == 200 and first["data"]["model"] == "m-1"
    assert stream["data"]["response"]["text"] == b"".join(chunks).decode()


def test_requests_session_records_and_streams(server: LoopbackServer) -> None:
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        reply = session.post(server.base_url + "/echo?api_key=s3cr3t", data=b"raw-bytes",
                             headers={"X-Api-Key": "k-1"})
        assert reply.json()["echo"] == "raw-bytes"
        lines = []
        with session.get(server.base_url + "/sse", stream=True) as streamed:
            for line in streamed.iter_lines():
                lines.append(line)
                server.gate.set()
    assert lines[0].startswith(b"data: ")
    post, sse = _http_calls(r.run_id)
    assert post["data"]["request"]["url"].endswith("/echo?api_key=%5Bredacted%5D")
    assert post["data"]["request"]["headers"]["x-api-key"] == "[redacted]"
    assert post["data"]["request"]["text"] == "raw-bytes"
    assert sse["data"]["response"]["streamed"] is True and sse["data"]["response"]["complete"] is True
    assert "data: [DONE]" in sse["data"]["response"]["text"]


@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_a_failed_request_is_recorded_with_its_error_and_the_agent_gets_the_same_exception(client_kind: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1/chat"
    with bitexact.run() as r:
        if client_kind == "httpx":
            with bitexact.wrap(httpx.Client()) as client, pytest.raises(httpx.ConnectError):
                client.get(url)
        else:
            with bitexact.wrap(requests.Session()) as session, pytest.raises(requests.ConnectionError):
                session.get(url)
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"] is None
    assert call["data"]["error"]["type"] and call["data"]["request"]["url"] == url


def test_a_body_cut_off_midway_is_recorded_incomplete_with_its_error(server: LoopbackServer) -> None:
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.get(server.base_url + "/cut")
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["complete"] is False
    assert call["data"]["response"]["text"] == "only part of it"
    assert "RemoteProtocolError" in call["data"]["error"]["type"]


def test_outside_a_run_a_wrapped_client_only_forwards(server: LoopbackServer) -> None:
    with bitexact.wrap(httpx.Client()) as client:
        assert client.get(server.base_url + "/json").status_code == 200
    with bitexact.run() as r:
        pass
    assert _http_calls(r.run_id) == []


def test_instrument_records_plain_clients_inside_runs_only_and_once(server: LoopbackServer) -> None:
    instrumentation = bitexact.instrument()
    try:
        assert bitexact.instrument() is instrumentation
        with httpx.Client() as outside:
            outside.get(server.base_url + "/json")  # no run: not recorded anywhere
        with bitexact.run() as r:
            with httpx.Client() as plain:
                plain.get(server.base_url + "/json?n=1")
            with bitexact.wrap(httpx.Client()) as wrapped:
                wrapped.get(server.base_url + "/json?n=2")
            requests.get(server.base_url + "/json?n=3", timeout=10)

            async def fetch() -> None:
                async with httpx.AsyncClient() as client:
                    await client.get(server.base_url + "/json?n=4")

            asyncio.run(fetch())
    finally:
        instrumentation.undo()
    urls = [c["data"]["request"]["url"].rsplit("?", 1)[1] for c in _http_calls(r.run_id)]
    assert urls == ["n=1", "n=2", "n=3", "n=4"]
    with bitexact.run() as after:
        httpx.get(server.base_url + "/json")
    assert _http_calls(after.run_id) == [], "undo() restores the originals"


def test_tool_ctx_is_carried_by_http_calls_made_inside_a_tool(server: LoopbackServer) -> None:
    client = bitexact.wrap(httpx.Client())

    @bitexact.record_tool
    def fetch_claim() -> int:
        return client.get(server.base_url + "/json").status_code

    with bitexact.run() as r:
        assert fetch_claim() == 200
    written = entries(r.run_id)[1:-1]
    assert [(e["kind"], e.get("ctx")) for e in written] == [("http_call", "fetch_claim"), ("tool_call", None)]
    client.close()


def test_wrap_refuses_what_it_cannot_wrap() -> None:
    with pytest.raises(bitexact.sdk.SdkArgumentError) as caught:
        bitexact.wrap(object())
    assert caught.value.field == "client"


def test_threads_sharing_a_wrapped_client_are_all_recorded(server: LoopbackServer) -> None:
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        threads = [threading.Thread(target=lambda i=i: client.get(f"{server.base_url}/json?i={i}")) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(c["data"]["request"]["query"] for c in _http_calls(r.run_id)) == [f"i={i}" for i in range(8)]


def test_under_the_shipped_policy_a_card_split_across_chunks_is_scrubbed_in_the_record_only(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    received = b""
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        with client.stream("GET", server.base_url + "/sse-card") as response:
            for chunk in response.iter_raw():
                received += chunk
    assert b"4111 1111 1111 1111" in received, "the agent receives exactly what was sent"
    (call,) = _http_calls(r.run_id)
    recorded = call["data"]["response"]["text"]
    assert "4111 1111 1111 1111" not in recorded and recorded.endswith("1111] today\n\n")
    assert call["capture"]["fields"], "the scrub is declared in the entry's capture block"


def test_an_instrumented_adapter_still_takes_its_options_positionally(server: LoopbackServer) -> None:
    instrumentation = bitexact.instrument()
    try:
        with bitexact.run() as r:
            request = requests.Request("GET", server.base_url + "/json?n=5").prepare()
            response = requests.adapters.HTTPAdapter().send(request, False, 10)  # stream, timeout
            assert response.status_code == 200
            assert response.content  # the exchange is recorded once its body is read
    finally:
        instrumentation.undo()
    assert [c["data"]["request"]["url"].rsplit("?", 1)[1] for c in _http_calls(r.run_id)] == ["n=5"]
