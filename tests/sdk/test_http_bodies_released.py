"""The recording keeps no body once its entry is written: an httpx response the agent keeps holds no second
copy of its body, and what the agent reads of a stream after its run ended (recorded then, as it stood) is
not collected. Real servers on loopback.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import httpx
import pytest
import requests

import bitexact
from bitexact.sdk.http.exchange import Exchange
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, serve_seen

BLOCK = b"z" * 65536
BLOCKS = 40


class _Big(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._send(200, BLOCK * BLOCKS, "application/octet-stream")


_made: weakref.WeakSet[Exchange] = weakref.WeakSet()
"""Every exchange made in these tests, held weakly: found without ``gc.get_objects()``, which hands out
references to objects other threads are still building (a tuple a recording thread is still filling then
fails to resize: SystemError)."""


@pytest.fixture(autouse=True)
def _track_exchanges(monkeypatch: pytest.MonkeyPatch) -> None:
    made = Exchange.__init__

    def init(self: Exchange, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        _made.add(self)

    monkeypatch.setattr(Exchange, "__init__", init)


def _held(url: str) -> int:
    """Bytes the recording of ``url``'s exchange still holds (its exchange still alive: the agent's response
    holds it)."""
    found = [o for o in list(_made) if o.url == url]
    assert found, "the exchange is alive (the agent's response holds it)"
    return sum(len(chunk) for o in found for chunk in o._chunks)


def test_a_kept_httpx_response_holds_no_second_copy_of_its_body() -> None:
    with serve_seen(_Big) as (base, _), bitexact.run() as run:
        client = bitexact.wrap(httpx.Client())
        kept = client.get(base + "/kept")
        assert len(kept.content) == len(BLOCK) * BLOCKS
        assert _held(base + "/kept") == 0
        client.close()
    (call,) = http_calls(run.run_id)
    assert call["data"]["response"]["complete"] is True  # recorded whole before it was let go


def test_requests_bytes_read_after_the_run_ended_are_not_kept() -> None:
    with serve_seen(_Big) as (base, _):
        with bitexact.run():
            r = bitexact.wrap(requests.Session()).get(base + "/after", stream=True)
            chunks = r.iter_content(65536)
            next(chunks)
        read_after = sum(len(next(chunks)) for _ in range(BLOCKS // 2))  # the body still open
        assert read_after == len(BLOCK) * (BLOCKS // 2)
        assert _held(base + "/after") == 0
        r.close()


def test_httpx_bytes_read_after_the_run_ended_are_not_kept() -> None:
    with serve_seen(_Big) as (base, _):
        client = bitexact.wrap(httpx.Client())
        with bitexact.run():
            cm = client.stream("GET", base + "/after")
            r = cm.__enter__()
            chunks = r.iter_raw()
            next(chunks)
        assert sum(len(next(chunks)) for _ in range(BLOCKS // 2)) > 0  # the body still open
        assert _held(base + "/after") == 0
        cm.__exit__(None, None, None)
        client.close()


def test_async_httpx_bytes_read_after_the_run_ended_are_not_kept() -> None:
    async def main(base: str) -> int:
        client = bitexact.wrap(httpx.AsyncClient())
        async with bitexact.run():
            cm = client.stream("GET", base + "/after")
            r = await cm.__aenter__()
            chunks = r.aiter_raw()
            await chunks.__anext__()
        read = sum([len(await chunks.__anext__()) for _ in range(BLOCKS // 2)])  # the body still open
        held = _held(base + "/after")
        await cm.__aexit__(None, None, None)
        await client.aclose()
        assert read > 0
        return held

    with serve_seen(_Big) as (base, _):
        assert asyncio.run(main(base)) == 0
