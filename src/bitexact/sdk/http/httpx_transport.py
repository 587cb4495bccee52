"""Recording as an httpx transport: every exchange a client makes becomes an ``http_call``.

``RecordingTransport`` (sync) and ``AsyncRecordingTransport`` wrap the
client's own transport, the hook httpx offers for this, so nothing is
monkey-patched. The response body passes through to the agent chunk by
chunk as it arrives (``client.stream(...)``, SSE included); the entry is
written once, when the body has been read to its end or the response closed.
Outside a run the transport only forwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Self

import httpx

from bitexact.sdk.active import current_run
from bitexact.sdk.http.exchange import Exchange, HeldFromOthers, claim_request, release_request

if TYPE_CHECKING:
    from types import TracebackType

    from bitexact.sdk.run import Run


def _streamed(response: httpx.Response) -> bool:
    return "content-length" not in response.headers


class _TeeRequest(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A streamed request body, seen by the exchange as it goes out."""

    def __init__(self, inner: httpx.SyncByteStream | httpx.AsyncByteStream, exchange: Exchange) -> None:
        self._inner = inner
        self._exchange = exchange

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:  # type: ignore[union-attr]
            self._exchange.sent(chunk)
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:  # type: ignore[union-attr]
            self._exchange.sent(chunk)
            yield chunk

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()

    async def aclose(self) -> None:
        aclose = getattr(self._inner, "aclose", None)
        if aclose is not None:
            await aclose()


class _ResponseTee:
    """What the sync and async response tees share: the exchange, and recording its end once."""

    def __init__(self, inner: Any, exchange: Exchange, response: httpx.Response) -> None:
        self._inner = inner
        self._exchange = exchange
        self._response = response
        self._ended = False
        self._cut = False  # its consumer closed the stream before its end: a later iteration ends nothing
        exchange.responded(response.status_code, response.headers.multi_items(), _streamed(response))

    def _finish(self, *, complete: bool, error: BaseException | None = None) -> None:
        self._exchange.finish(status=self._response.status_code, headers=self._response.headers.multi_items(),
                              streamed=_streamed(self._response), complete=complete, error=error)


class _TeeResponse(_ResponseTee, httpx.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                self._exchange.received(chunk)
                yield chunk
        except GeneratorExit:
            self._cut = True
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        self._ended = not self._cut

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._finish(complete=self._ended)


class _AsyncTeeResponse(_ResponseTee, httpx.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._inner:
                self._exchange.received(chunk)
                yield chunk
        except GeneratorExit:
            self._cut = True
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        self._ended = not self._cut

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._finish(complete=self._ended)


def _begin(run: Run, request: httpx.Request) -> Exchange | None:
    try:
        exchange = Exchange(run, request.method, str(request.url), request.headers.multi_items())
        if isinstance(request.stream, httpx.ByteStream):
            exchange.request_body = request.read()
        else:
            request.stream = _TeeRequest(request.stream, exchange)
        return exchange
    except Exception as exc:  # noqa: BLE001 - recording must never break the agent's request
        run._declare_failure("http_call", exc)
        return None


def record_sync(
    run: Run | None, request: httpx.Request, send: Callable[[httpx.Request], httpx.Response]
) -> httpx.Response:
    """Send ``request`` with ``send`` and record the exchange into ``run`` (or the current run)."""
    if run is not None and not run.open:  # wrapped for a run that has ended: recorded into no other one
        with HeldFromOthers(request):
            return send(request)
    run = run if run is not None else current_run()
    if run is None or not claim_request(request):
        return send(request)
    exchange = _begin(run, request)
    if exchange is None:
        release_request(request)
        return send(request)
    try:
        exchange.sending()
        response = send(request)
    except BaseException as exc:  # a KeyboardInterrupt too: the request may have reached the server
        exchange.fail(exc)
        raise
    finally:
        release_request(request)  # sent: the same object sent again is another exchange
    if _already_read(response, exchange):
        return response
    response.stream = _TeeResponse(response.stream, exchange, response)  # type: ignore[arg-type]
    return response


def _already_read(response: httpx.Response, exchange: Exchange) -> bool:
    """A response its transport built already read (a mock, a cache): recorded now, since no tee will see it."""
    if not hasattr(response, "_content"):
        return False
    exchange.received(response.content)  # as httpx read it: already decoded (gzip and the like)
    exchange.finish(status=response.status_code, headers=response.headers.multi_items(),
                    streamed=_streamed(response), complete=True, decoded=True)
    return True


async def record_async(
    run: Run | None, request: httpx.Request, send: Callable[[httpx.Request], Awaitable[httpx.Response]]
) -> httpx.Response:
    """The async twin of :func:`record_sync`."""
    if run is not None and not run.open:  # wrapped for a run that has ended: recorded into no other one
        with HeldFromOthers(request):
            return await send(request)
    run = run if run is not None else current_run()
    if run is None or not claim_request(request):
        return await send(request)
    exchange = _begin(run, request)
    if exchange is None:
        release_request(request)
        return await send(request)
    try:
        exchange.sending()
        response = await send(request)
    except BaseException as exc:  # asyncio.CancelledError too: the request may have reached the server
        exchange.fail(exc)
        raise
    finally:
        release_request(request)  # sent: the same object sent again is another exchange
    if _already_read(response, exchange):
        return response
    response.stream = _AsyncTeeResponse(response.stream, exchange, response)  # type: ignore[arg-type]
    return response


class RecordingTransport(httpx.BaseTransport):
    """Wraps a sync transport; records each exchange into ``run`` (default: the current run)."""

    def __init__(self, inner: httpx.BaseTransport, run: Run | None = None) -> None:
        self.inner = inner
        self.run = run

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return record_sync(self.run, request, self.inner.handle_request)

    # A client used as a context manager enters and exits its transports: the agent's, wrapped here, too.
    def __enter__(self) -> Self:
        self.inner.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None = None, exc_value: BaseException | None = None,
                 traceback: TracebackType | None = None) -> None:
        self.inner.__exit__(exc_type, exc_value, traceback)

    def close(self) -> None:
        self.inner.close()


class AsyncRecordingTransport(httpx.AsyncBaseTransport):
    """Wraps an async transport; records each exchange into ``run`` (default: the current run)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, run: Run | None = None) -> None:
        self.inner = inner
        self.run = run

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await record_async(self.run, request, self.inner.handle_async_request)

    async def __aenter__(self) -> Self:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None = None, exc_value: BaseException | None = None,
                        traceback: TracebackType | None = None) -> None:
        await self.inner.__aexit__(exc_type, exc_value, traceback)

    async def aclose(self) -> None:
        await self.inner.aclose()


def wrap_httpx(client: httpx.Client | httpx.AsyncClient, run: Run | None = None) -> None:
    """Put a recording transport around the client's transport and each mounted one; on a client wrapped
    already, bind its recording transports to ``run`` instead (a client kept from run to run)."""
    recording: type[RecordingTransport | AsyncRecordingTransport]
    recording = AsyncRecordingTransport if isinstance(client, httpx.AsyncClient) else RecordingTransport

    def wrap_one(transport: Any) -> Any:
        if isinstance(transport, recording):
            transport.run = run
            return transport
        return recording(transport, run)

    client._transport = wrap_one(client._transport)
    client._mounts = {k: (wrap_one(t) if t is not None else None) for k, t in client._mounts.items()}
