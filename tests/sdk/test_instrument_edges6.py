"""HTTP capture, instrument() and wrap() (the sixth review): regression tests, each for a bug its docstring
names (real loopback servers, no mocks of the SDK): which run an exchange lands in, and a wrapped or
instrumented client behaving otherwise than the same client unwrapped."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from typing import Any, Self

import httpx
import pytest
import requests
from requests.adapters import BaseAdapter

import bitexact
from sdk.conftest import entries
from sdk.servers import LoopbackServer


def _queries(run_id: str | None) -> list[str]:
    return [e["data"]["request"]["query"] for e in entries(run_id) if e["kind"] == "http_call"]


@pytest.mark.parametrize("bad", ["run-1", 7, object()])
@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_wrap_refuses_a_run_that_is_not_one_where_the_client_is_wrapped(bad: Any, client_kind: str) -> None:
    """wrap(client, run=<not a Run>) was accepted, and every request then raised AttributeError into the agent."""
    client: Any = httpx.Client() if client_kind == "httpx" else requests.Session()
    with pytest.raises(bitexact.sdk.SdkArgumentError) as caught:
        bitexact.wrap(client, run=bad)
    assert caught.value.field == "run"
    client.close()


def test_wrap_refuses_the_run_scope_in_place_of_its_run(server: LoopbackServer) -> None:
    """wrap(client, run=bitexact.run()) (the scope, not the run it opens) broke every request of the client."""
    scope = bitexact.run()
    with pytest.raises(bitexact.sdk.SdkArgumentError) as caught:
        bitexact.wrap(requests.Session(), run=scope)
    assert caught.value.field == "run" and "RunScope" in str(caught.value)


@pytest.mark.parametrize("instrumented", [False, True])
@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_a_client_wrapped_for_a_run_that_ended_records_into_no_other_run(
    server: LoopbackServer, client_kind: str, instrumented: bool
) -> None:
    """A client wrapped with run=a recorded, once a had ended, into whichever run was open (another thread's)."""
    instrumentation = bitexact.instrument() if instrumented else None
    with bitexact.run() as a:
        client: Any = bitexact.wrap(httpx.Client() if client_kind == "httpx" else requests.Session(), run=a)
        client.get(server.base_url + "/json?in=a")
    ready, done = threading.Event(), threading.Event()
    opened: list[bitexact.sdk.run.Run] = []

    def other_run() -> None:
        with bitexact.run() as b:
            opened.append(b)
            ready.set()
            done.wait(10)

    thread = threading.Thread(target=other_run)
    thread.start()
    try:
        assert ready.wait(10)
        with bitexact.run() as c:  # this thread's own run: not the client's either
            assert client.get(server.base_url + "/json?after=a").status_code == 200
    finally:
        done.set()
        thread.join(10)
        if instrumentation is not None:
            instrumentation.undo()
    client.close()
    assert _queries(a.run_id) == ["in=a"]
    assert _queries(opened[0].run_id) == [] and _queries(c.run_id) == []


class _EnteredTransport(httpx.BaseTransport):
    """An agent's transport that sets up in __enter__ and tears down in __exit__ (as httpx's own do)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.entered = 0
        self.exited = 0

    def __enter__(self) -> Self:
        self.entered += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.exited += 1
        self.inner.close()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.entered == self.exited:
            raise RuntimeError("used outside its with block")
        return self.inner.handle_request(request)


class _AsyncEnteredTransport(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.entered = 0
        self.exited = 0

    async def __aenter__(self) -> Self:
        self.entered += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.exited += 1
        await self.inner.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.entered == self.exited:
            raise RuntimeError("used outside its with block")
        return await self.inner.handle_async_request(request)


def test_a_wrapped_client_used_as_a_context_manager_enters_and_exits_its_own_transports(
    server: LoopbackServer
) -> None:
    """The recording transport did not pass the client's __enter__/__exit__ on to the agent's transport."""
    transport, mounted = _EnteredTransport(), _EnteredTransport()
    with bitexact.run() as r:
        client = bitexact.wrap(httpx.Client(transport=transport, mounts={"http://127.0.0.1": mounted}))
        with client:
            assert client.get(server.base_url + "/json?n=1").status_code == 200
    assert (transport.entered, transport.exited, mounted.entered, mounted.exited) == (1, 1, 1, 1)
    assert _queries(r.run_id) == ["n=1"]


def test_a_wrapped_async_client_used_as_a_context_manager_enters_and_exits_its_own_transport(
    server: LoopbackServer
) -> None:
    """The async recording transport did not pass __aenter__/__aexit__ on to the agent's transport."""
    transport = _AsyncEnteredTransport()

    async def main() -> str | None:
        async with bitexact.run() as r, bitexact.wrap(httpx.AsyncClient(transport=transport)) as client:
            assert (await client.get(server.base_url + "/json?n=2")).status_code == 200
        return r.run_id

    run_id = asyncio.run(main())
    assert (transport.entered, transport.exited) == (1, 1)
    assert _queries(run_id) == ["n=2"]


class _CannedAdapter(BaseAdapter):
    """An agent's adapter answering from its own store: the response comes already read, with no raw."""

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        response = requests.Response()
        response.status_code = 200
        response.headers["content-type"] = "application/json"
        response._content = b'{"cached": true}'
        response.url = str(request.url)
        response.request = request
        return response

    def close(self) -> None:
        return None


def test_a_requests_response_its_adapter_returned_already_read_is_recorded_as_read(server: LoopbackServer) -> None:
    """A response already read (a cache's, a mock's) got a recording raw the agent never had (raw was None),
    and was recorded with an empty body, incomplete, at the run's end."""
    unwrapped = requests.Session()
    unwrapped.mount("http://canned/", _CannedAdapter())
    plain = unwrapped.get("http://canned/claims?n=3")
    with bitexact.run() as r:
        session = requests.Session()
        session.mount("http://canned/", _CannedAdapter())
        bitexact.wrap(session)
        response = session.get("http://canned/claims?n=3")
        assert response.raw is plain.raw is None
        assert response.content == plain.content == b'{"cached": true}'
    (call,) = [e for e in entries(r.run_id) if e["kind"] == "http_call"]
    assert call["data"]["response"]["text"] == '{"cached": true}'
    assert call["data"]["response"]["complete"] is True


@pytest.mark.parametrize("client_kind", ["httpx", "async-httpx", "requests"])
def test_wrapping_a_wrapped_client_again_binds_it_to_the_run_given(server: LoopbackServer, client_kind: str) -> None:
    """wrap(client, run=b) on a client wrapped with run=a did nothing: its exchanges still went to a, or
    (once a had ended) to no run at all."""
    client: Any = {"httpx": httpx.Client, "async-httpx": httpx.AsyncClient, "requests": requests.Session}[client_kind]()
    loop = asyncio.new_event_loop()  # one loop for every exchange of the async client

    def get(query: str) -> None:
        if isinstance(client, httpx.AsyncClient):
            loop.run_until_complete(client.get(f"{server.base_url}/json?{query}"))
        else:
            client.get(f"{server.base_url}/json?{query}")

    try:
        with bitexact.run() as a:
            bitexact.wrap(client, run=a)
            get("n=a")
            with bitexact.run() as b:  # a is still open
                assert bitexact.wrap(client, run=b) is client
                get("n=b")
        with bitexact.run() as c:
            bitexact.wrap(client, run=c)
            get("n=c")
        with bitexact.run() as d:
            bitexact.wrap(client)  # no run: the run current at each exchange
            get("n=d")
    finally:
        if isinstance(client, httpx.AsyncClient):
            loop.run_until_complete(client.aclose())
        else:
            client.close()
        loop.close()
    assert [_queries(x.run_id) for x in (a, b, c, d)] == [["n=a"], ["n=b"], ["n=c"], ["n=d"]]


def test_a_session_wrapped_for_a_run_pickles_and_copies_as_unwrapped(server: LoopbackServer) -> None:
    """A session wrapped with run=r could not be pickled or deep-copied (TypeError: the run's locks),
    where the same session unwrapped can."""
    with bitexact.run() as r:
        session = bitexact.wrap(requests.Session(), run=r)
        session.headers["x-agent"] = "a1"
        restored = pickle.loads(pickle.dumps(session))
        copied = copy.deepcopy(session)
        assert restored.headers["x-agent"] == copied.headers["x-agent"] == "a1"
        assert copied.get(server.base_url + "/json?via=copy", timeout=10).status_code == 200
        assert restored.get(server.base_url + "/json?via=pickle", timeout=10).status_code == 200
    # The copy keeps its run; the pickled one (a run cannot cross processes) records into the run current.
    assert _queries(r.run_id) == ["via=copy", "via=pickle"]
