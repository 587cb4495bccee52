"""A streamed httpx request body whose generator yields what is not bytes (session 32): httpx refuses it with its
own error; the wrapped client raised another one, from the recording's ``bytes(chunk)`` (a str: "string
argument without an encoding"; an int n: n zero bytes made first, then httpx's error)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

import bitexact
from sdk.conftest import http_calls
from sdk.servers import LoopbackServer


def _body(item: Any) -> Iterator[Any]:
    yield b"first "
    yield item


async def _abody(item: Any) -> AsyncIterator[Any]:
    yield b"first "
    yield item


def _sync_error(url: str, item: Any, wrapped: bool) -> BaseException:
    client = httpx.Client()
    with bitexact.run():
        with bitexact.wrap(client) if wrapped else client as used:
            with pytest.raises(Exception) as caught:
                used.post(url, content=_body(item))
    return caught.value


def _async_error(url: str, item: Any, wrapped: bool) -> BaseException:
    async def go() -> BaseException:
        client = httpx.AsyncClient()
        async with bitexact.run():
            async with bitexact.wrap(client) if wrapped else client as used:
                with pytest.raises(Exception) as caught:
                    await used.post(url, content=_abody(item))
        return caught.value
    return asyncio.run(go())


@pytest.mark.parametrize("item", ["text, not bytes", 7])
@pytest.mark.parametrize("error_of", [_sync_error, _async_error], ids=["sync", "async"])
def test_a_body_chunk_that_is_not_bytes_raises_what_httpx_raises_unwrapped(
        server: LoopbackServer, item: Any, error_of: Any) -> None:
    url = server.base_url + "/echo"
    unwrapped = error_of(url, item, wrapped=False)
    wrapped = error_of(url, item, wrapped=True)
    assert (type(wrapped), str(wrapped)) == (type(unwrapped), str(unwrapped))


@pytest.mark.parametrize("item", ["text, not bytes", 7])
def test_the_exchange_is_recorded_with_the_error_httpx_raised(server: LoopbackServer, item: Any) -> None:
    with bitexact.run() as r:
        client = bitexact.wrap(httpx.Client())
        with pytest.raises(Exception) as caught:
            client.post(server.base_url + "/echo", content=_body(item))
    [call] = http_calls(r.run_id)
    assert call["data"]["error"] == {"type": type_name(caught.value), "message": str(caught.value)}
    assert call["data"]["request"]["text"] == "first "


def type_name(error: BaseException) -> str:
    return f"{type(error).__module__}.{type(error).__qualname__}"
