"""A request sent while the run is open whose response head comes after the run's exit began is in the chain:
recorded by the run's end as it stands (the request, no response, a note saying why), in the run it was made
in; no gap, and nothing left held by the ended run. Real servers on loopback; the server holds the head back
until the run has ended (events, not sleeps).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
import requests

import bitexact
from bitexact.sdk.http.exchange import NO_RESPONSE_NOTE
from sdk.conftest import http_calls, kinds
from sdk.servers import HandlerBase, serve_seen

BODY = b'{"transfer": 100}'
ARRIVED = threading.Event()  # the server has the request
RELEASE = threading.Event()  # the server may answer


@pytest.fixture(autouse=True)
def _events() -> Any:
    ARRIVED.clear()
    RELEASE.clear()
    yield
    RELEASE.set()


class _SlowHead(HandlerBase):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self._body()
        ARRIVED.set()
        RELEASE.wait(10)
        self._send(200, b'{"done": true}', "application/json")


def _assert_recorded_unanswered(run: bitexact.Run) -> None:
    assert kinds(run.run_id) == ["run_meta", "http_call", "run_end"]
    (call,) = http_calls(run.run_id)
    data = call["data"]
    assert data["request"]["method"] == "POST" and data["request"]["text"] == BODY.decode()
    assert data["response"] is None and data["note"] == NO_RESPONSE_NOTE and "error" not in data
    assert run.failures.gaps == [] and run.sealed
    assert not run._open_calls


@pytest.mark.parametrize("bound", [False, True], ids=["current-run", "bound"])
def test_a_request_in_flight_in_a_thread_when_the_run_ends_is_recorded(bound: bool) -> None:
    got: dict[str, Any] = {}
    with serve_seen(_SlowHead) as (base, _):
        with bitexact.run() as run:
            session = bitexact.wrap(requests.Session(), run=run if bound else None)

            def agent() -> None:
                r = session.post(base + "/pay", data=BODY, stream=True)
                got["body"] = r.content

            thread = threading.Thread(target=agent)
            thread.start()
            assert ARRIVED.wait(10)
        RELEASE.set()
        thread.join(10)
    assert got["body"] == b'{"done": true}'  # the agent gets its reply, as unwrapped
    _assert_recorded_unanswered(run)


def test_an_async_request_in_flight_when_the_run_ends_is_recorded() -> None:
    async def main(base: str) -> tuple[bitexact.Run, bytes]:
        client = bitexact.wrap(httpx.AsyncClient())
        async with bitexact.run() as run:
            task = asyncio.create_task(client.post(base + "/pay", content=BODY))
            assert await asyncio.to_thread(ARRIVED.wait, 10)
        RELEASE.set()
        reply = await task
        await client.aclose()
        return run, reply.content

    with serve_seen(_SlowHead) as (base, _):
        run, content = asyncio.run(main(base))
    assert content == b'{"done": true}'
    _assert_recorded_unanswered(run)
