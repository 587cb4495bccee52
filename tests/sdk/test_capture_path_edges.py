"""Edges of the SDK's capture paths (HTTP, identity), found in review: each test pins one behaviour that used
to break."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import entries
from sdk.servers import LoopbackServer


def _http_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "http_call"]


# -- httpx: a response the transport hands back already read ------------------------------------------


def test_a_wrapped_httpx_client_records_a_response_its_transport_returned_already_read() -> None:
    # httpx.MockTransport (and any transport that builds httpx.Response(content=...)) returns a response
    # whose body is already read: the tee put on response.stream is never iterated nor closed.
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"model": "m-mock"}))
    with bitexact.run() as r, bitexact.wrap(httpx.Client(transport=transport)) as client:
        assert client.get("http://api.example.test/v1/models").json() == {"model": "m-mock"}
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["status"] == 200
    assert call["data"]["response"]["text"] == '{"model":"m-mock"}'


def test_a_wrapped_async_httpx_client_records_a_response_its_transport_returned_already_read() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="pong")

    async def agent() -> str | None:
        async with bitexact.run() as r, bitexact.wrap(httpx.AsyncClient(transport=httpx.MockTransport(handler))) as c:
            assert (await c.get("http://api.example.test/ping")).text == "pong"
        return r.run_id

    run_id = asyncio.run(agent())
    (call,) = _http_calls(run_id)
    assert call["data"]["response"]["text"] == "pong"


# -- httpx async: a request cancelled while it waits for its response -------------------------------------


@contextmanager
def _silent_server() -> Iterator[tuple[str, threading.Event]]:
    """Reads one request, says so, and never answers until the block ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    received = threading.Event()
    done = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            received.set()
            done.wait(10)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", received
    finally:
        done.set()
        thread.join(5)
        listener.close()


def test_an_async_request_cancelled_after_it_was_sent_is_recorded_with_its_error() -> None:
    with _silent_server() as (base_url, received):
        async def agent() -> str | None:
            async with bitexact.run() as r, bitexact.wrap(httpx.AsyncClient(timeout=30)) as client:
                task = asyncio.create_task(client.get(base_url + "/v1/chat"))
                assert await asyncio.to_thread(received.wait, 10), "the server got the request"
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            return r.run_id

        run_id = asyncio.run(agent())
    calls = _http_calls(run_id)
    assert len(calls) == 1, "the request reached the server; the run has no http_call and no gap for it"
    assert calls[0]["data"]["response"] is None and "CancelledError" in calls[0]["data"]["error"]["type"]


# -- requests: response.raw as the agent uses it --------------------------------------------------------


def test_requests_raw_decode_content_set_by_the_agent_still_decodes(server: LoopbackServer) -> None:
    # The documented idiom for saving a streamed body: r.raw.decode_content = True; shutil.copyfileobj(r.raw, f)
    with requests.Session() as plain:
        unwrapped = plain.get(server.base_url + "/gzip", stream=True)
        unwrapped.raw.decode_content = True
        expected = unwrapped.raw.read()
    assert expected == b'{"zipped": true}'
    with bitexact.run(), bitexact.wrap(requests.Session()) as session:
        response = session.get(server.base_url + "/gzip", stream=True)
        response.raw.decode_content = True
        assert response.raw.read() == expected, "the agent gets the gzip bytes: the setting never reached urllib3"


def test_requests_raw_is_still_iterable(server: LoopbackServer) -> None:
    with requests.Session() as plain:
        expected = list(plain.get(server.base_url + "/json", stream=True).raw)
    with bitexact.run(), bitexact.wrap(requests.Session()) as session:
        response = session.get(server.base_url + "/json", stream=True)
        assert list(response.raw) == expected  # was: TypeError: '_TeeRaw' object is not iterable (the former proxy)


def test_a_wrapped_session_adapter_still_takes_its_options_positionally(server: LoopbackServer) -> None:
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        request = requests.Request("GET", server.base_url + "/json?n=6").prepare()
        response = session.get_adapter(request.url).send(request, False, 10)  # stream, timeout
        assert response.status_code == 200 and response.content
    assert [c["data"]["request"]["query"] for c in _http_calls(r.run_id)] == ["n=6"]


# -- identity: the rule applied to the agent's values, not to their JSON stand-ins --------------------------


@pytest.mark.parametrize("value", [2**60, math.nan], ids=["int-past-2^53", "nan"])
def test_identity_refuses_a_party_that_is_a_number_whatever_its_size(value: float) -> None:
    # Vector "a party that is a number": on_behalf_of=7 is refused. 2**60 and NaN are numbers too,
    # but are turned into text ("1152921504606846976", "nan") before the rule runs, and kept.
    with bitexact.run() as r:
        r.identity(principal="svc:a", on_behalf_of=value)
    (identity,) = [e for e in entries(r.run_id) if e["kind"] == "identity"]
    assert identity["data"] == {"principal": "svc:a"}
    (gap,) = [e for e in entries(r.run_id) if e["kind"] == "marker" and "gap" in e["data"]]
    assert list(gap["data"]["gap"]["fields"]) == ["on_behalf_of"]
