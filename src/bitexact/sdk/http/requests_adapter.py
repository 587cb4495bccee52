"""Recording as a requests transport adapter: every exchange a Session makes becomes an ``http_call``.

``RecordingAdapter`` wraps each adapter mounted on the session (requests'
own hook for transports). The response body reaches the agent chunk by
chunk as urllib3 reads it (``stream=True`` and ``iter_content``/
``iter_lines``, SSE included); the entry is written once, when the body has
been read to its end or the response closed.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import requests
from requests.adapters import BaseAdapter

from bitexact.sdk.active import current_run
from bitexact.sdk.http.exchange import Exchange, HeldFromOthers, claim_request, release_request

if TYPE_CHECKING:
    from bitexact.sdk.run import Run


class _TeeRaw:
    """Stands in for ``response.raw``: passes every read through, and keeps what the agent read."""

    def __init__(self, raw: Any, exchange: Exchange, response: requests.Response) -> None:
        self._raw = raw
        self._exchange = exchange
        self._response = response
        self._ended = False
        self._decoded = True
        exchange.responded(response.status_code, list(response.headers.items()),
                           "content-length" not in response.headers)

    _OWN = frozenset({"_raw", "_exchange", "_response", "_ended", "_decoded"})

    @property
    def _decoded(self) -> bool:
        """Whether the reads so far were decoded (kept on the exchange, which the run's end may record)."""
        return self._exchange.decoded

    @_decoded.setter
    def _decoded(self, value: bool) -> None:
        self._exchange.decoded = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # What the agent sets (``raw.decode_content = True``) must reach the response it reads from.
        if name in _TeeRaw._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._raw, name, value)

    def __iter__(self) -> Iterator[bytes]:
        """Lines, as iterating urllib3's response gives them (decoded), each recorded as read."""
        self._decoded = True
        try:
            for line in self._raw:
                self._exchange.received(line)
                yield line
        except GeneratorExit:
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        self._ended = True
        self._finish(complete=True)

    def __enter__(self) -> _TeeRaw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _decodes(self, decode_content: bool | None) -> bool:
        """Whether a read decodes: its own argument, else what the response was set to (the agent may set it)."""
        return bool(decode_content if decode_content is not None else getattr(self._raw, "decode_content", False))

    def _finish(self, *, complete: bool, error: BaseException | None = None) -> None:
        headers = list(self._response.headers.items())
        self._exchange.finish(status=self._response.status_code, headers=headers,
                              streamed="content-length" not in self._response.headers,
                              complete=complete, error=error, decoded=self._decoded)

    def stream(self, amt: int | None = 2**16, decode_content: bool | None = None) -> Iterator[bytes]:
        return self._passing(self._raw.stream(amt, decode_content=decode_content), decode_content)

    def read_chunked(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        return self._passing(self._raw.read_chunked(amt, decode_content=decode_content), decode_content)

    @property
    def data(self) -> Any:
        # urllib3's own ``data`` (which ``json()`` reads), run with its reads through this tee: on the raw
        # response itself, they would give the agent the body and the record none.
        own = getattr(type(self._raw), "data", None)
        return own.fget(self) if isinstance(own, property) and own.fget else self._raw.data

    def json(self) -> Any:
        own = getattr(type(self._raw), "json", None)
        return own(self) if callable(own) else self._raw.json()

    def _passing(self, chunks: Iterator[bytes], decode_content: bool | None) -> Iterator[bytes]:
        """The chunks of a streaming read, each recorded as it reaches the agent."""
        self._decoded = self._decodes(decode_content)
        try:
            for chunk in chunks:
                self._exchange.received(chunk)
                yield chunk
        except GeneratorExit:
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        self._ended = True
        self._finish(complete=True)

    def read(self, amt: int | None = None, *args: Any, **kwargs: Any) -> bytes:
        self._decoded = self._decodes(kwargs.get("decode_content", args[0] if args else None))
        try:
            data = self._raw.read(amt, *args, **kwargs)
        except GeneratorExit:
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        if data:
            self._exchange.received(data)
        if (not data and amt != 0) or amt is None or self._at_end():  # read(0) is no end: nothing was asked
            self._ended = True
            self._finish(complete=True)
        return data

    def _at_end(self) -> bool:
        """The body is read to its end (a sized read took its last bytes): urllib3 closed it, or counts none left."""
        try:
            return bool(self._raw.isclosed()) or getattr(self._raw, "length_remaining", None) == 0
        except Exception:  # noqa: BLE001 - an unusual raw object: its end is an empty read, as before
            return False

    def _read_through(self, data: bytes, asked: int | None) -> bytes:
        """What a line or buffer read gave the agent, recorded; an empty read is the end of the body (not
        when the agent asked for no bytes at all)."""
        if data:
            self._exchange.received(data)
        elif asked != 0:
            self._ended = True
            self._finish(complete=True)
        return data

    def _reading(self, read: Any, *args: Any, asked_: int | None = None, decode_: bool | None = None,
                 **kwargs: Any) -> bytes:
        self._decoded = self._decodes(decode_)
        try:
            data = read(*args, **kwargs)
        except GeneratorExit:
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        return self._read_through(bytes(data), asked_)

    def readline(self, *args: Any) -> bytes:
        return self._reading(self._raw.readline, *args, asked_=args[0] if args else None)

    def read1(self, *args: Any, **kwargs: Any) -> bytes:
        # urllib3's read1(amt=None, decode_content=None), by position or keyword, passed on as given.
        return self._reading(self._raw.read1, *args, asked_=args[0] if args else kwargs.get("amt"),
                             decode_=args[1] if len(args) > 1 else kwargs.get("decode_content"), **kwargs)

    def readinto(self, buffer: Any) -> int:
        self._decoded = self._decodes(None)
        try:
            count = self._raw.readinto(buffer)
        except GeneratorExit:
            raise  # closed early by its consumer: the close records it
        except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
            self._finish(complete=False, error=exc)
            raise
        self._read_through(bytes(memoryview(buffer)[:count]), memoryview(buffer).nbytes)
        return int(count)

    def readlines(self, hint: int = -1) -> list[bytes]:
        lines: list[bytes] = []
        while line := self.readline():
            lines.append(line)
            if 0 < hint <= sum(len(x) for x in lines):
                break
        return lines

    def __next__(self) -> bytes:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            self._finish(complete=self._ended)


def _request_body(exchange: Exchange, request: requests.PreparedRequest) -> Any:
    """Let ``exchange`` see the request body; returns the agent's own body when it was swapped for a tee."""
    body = request.body
    if body is None:
        exchange.request_body = b""
    elif isinstance(body, str):
        exchange.request_body = body.encode("utf-8")
    elif isinstance(body, (bytes, bytearray, memoryview)):
        exchange.request_body = bytes(body)
    elif hasattr(body, "read"):
        exchange.request_body = b""
        exchange.request_note = "a file-like request body is sent as is and not recorded"
    else:
        exchange.request_body = None
        request.body = _TeeBody(body, exchange)  # type: ignore[assignment]
        return body
    return None


class _TeeBody:
    """An iterable request body, seen by the exchange as it goes out. Iterable as often as the agent's
    body is (urllib3 iterates it again to retry): each pass is the body as sent, the last one recorded."""

    def __init__(self, inner: Any, exchange: Exchange) -> None:
        self._inner = inner
        self._exchange = exchange

    def __iter__(self) -> Iterator[bytes | str]:
        self._exchange.resent()
        for chunk in self._inner:
            self._exchange.sent(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            yield chunk


class RecordingAdapter(BaseAdapter):
    """Wraps a requests adapter; records each exchange into ``run`` (default: the current run)."""

    def __init__(self, inner: BaseAdapter, run: Run | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.run = run

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        # Options pass through as given, positionally too (stream, timeout, verify, cert, proxies).
        response = record_requests(self.run, request, lambda r: self.inner.send(r, *args, **kwargs))
        # An auth handler re-sends through the response's connection (digest, NTLM): through this
        # adapter, so that exchange is recorded too.
        response.connection = self  # type: ignore[assignment]  # requests types it as its own HTTPAdapter
        return response

    def close(self) -> None:
        self.inner.close()

    # A session pickles and copies as unwrapped: a copy keeps the run; a pickled one cannot carry it (a run
    # does not cross processes), so it records into the run current at each exchange.
    def __reduce__(self) -> tuple[Any, ...]:
        return (RecordingAdapter, (self.inner,))

    def __copy__(self) -> RecordingAdapter:
        return RecordingAdapter(self.inner, self.run)

    def __deepcopy__(self, memo: dict[int, Any]) -> RecordingAdapter:
        return RecordingAdapter(copy.deepcopy(self.inner, memo), self.run)

    def __getattr__(self, name: str) -> Any:
        # The wrapped adapter's own attributes (max_retries, its pool manager...) read as before wrapping.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # ...and set on it: an agent setting adapter.max_retries after wrapping keeps its retries.
        if name in ("inner", "run") or "inner" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)


def record_requests(run: Run | None, request: requests.PreparedRequest, send: Any) -> requests.Response:
    """Send ``request`` with ``send`` and record the exchange into ``run`` (or the current run)."""
    if run is not None and not run.open:  # wrapped for a run that has ended: recorded into no other one
        with HeldFromOthers(request):
            return send(request)
    run = run if run is not None else current_run()
    if run is None or not claim_request(request):
        return send(request)
    try:
        exchange = Exchange(run, str(request.method), str(request.url), list(request.headers.items()))
        swapped = _request_body(exchange, request)
    except Exception as exc:  # noqa: BLE001 - recording must never break the agent's request
        run._declare_failure("http_call", exc)
        release_request(request)
        return send(request)
    try:
        response = send(request)
    except BaseException as exc:  # a KeyboardInterrupt too: the request may have reached the server
        exchange.fail(exc)
        raise
    finally:
        release_request(request)  # sent: the same object sent again is another exchange
        if swapped is not None:
            # The body goes back to the agent's own: requests re-sends it on a 307/308 redirect (and
            # the agent may send the request again), which a spent tee would send empty.
            request.body = swapped
    content = getattr(response, "_content", False)
    if content is not False or response.raw is None:
        # Read already by its adapter (a cache, a mock), or nothing to read: recorded now, as requests
        # decoded it, and the raw left as the agent would have it (no tee would see a read).
        exchange.received(content if isinstance(content, bytes) else b"")
        exchange.finish(status=response.status_code, headers=list(response.headers.items()),
                        streamed="content-length" not in response.headers, complete=True, decoded=True)
        return response
    response.raw = _TeeRaw(response.raw, exchange, response)
    return response


def wrap_session(session: requests.Session, run: Run | None = None) -> None:
    """Mount a recording adapter around every adapter the session has; on a session wrapped already, bind
    its recording adapters to ``run`` instead (a session kept from run to run)."""
    for prefix, adapter in list(session.adapters.items()):
        if isinstance(adapter, RecordingAdapter):
            adapter.run = run
        else:
            type(session).mount(session, prefix, RecordingAdapter(adapter, run))
    # An adapter the agent mounts afterwards (a retry policy) records too, into the same run. An attribute
    # of this session alone, which requests' pickling and copying (its __attrs__) leave out.
    session.mount = functools.partial(_mount_recording, session, run)  # type: ignore[method-assign]


def _mount_recording(session: requests.Session, run: Run | None, prefix: str, adapter: BaseAdapter) -> None:
    if not isinstance(adapter, RecordingAdapter):
        adapter = RecordingAdapter(adapter, run)
    type(session).mount(session, prefix, adapter)
