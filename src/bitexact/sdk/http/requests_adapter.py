"""Recording as a requests transport adapter: every exchange a Session makes becomes an ``http_call``.

``RecordingAdapter`` wraps each adapter mounted on the session (requests'
own hook for transports). The response body reaches the agent chunk by
chunk as urllib3 reads it (``stream=True`` and ``iter_content``/
``iter_lines``, SSE included); the entry is written once, when the body has
been read to its end or the response closed.

``response.raw`` stays urllib3's own response object, of its own type: the
recording shadows its reading methods on that instance only (:class:`_Tee`),
and takes them away again once the body is over.
"""

from __future__ import annotations

import copy
import functools
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

import requests
from requests.adapters import BaseAdapter

from bitexact.sdk.active import current_run
from bitexact.sdk.http.exchange import Attempt, Exchange, HeldFromOthers, claim_request, release_request

if TYPE_CHECKING:
    from bitexact.sdk.run import Run

# The reads the agent may call on ``response.raw`` that return the bytes they read, and those that are
# generators of chunks. Every other read of urllib3's response (readinto, iteration, next(), readlines, data,
# json()) is made of these, through the instance, so it is recorded by them.
_CALLS: Final = ("read", "read1", "readline")
_STREAMS: Final = ("stream", "read_chunked")


class _Tee:
    """The recording of one response body, set on urllib3's response instance itself.

    Each read above is shadowed on the instance by one that calls the class's own and records what it
    returned; a read made inside another (``stream`` calls ``read``, ``readline`` calls ``read(1)``) passes
    through, so every byte is recorded once, by the read the agent called. The type, the class's methods
    and every other attribute stay urllib3's: ``isinstance(raw, HTTPResponse)`` and ``io.IOBase`` hold as
    unwrapped. When the body is over (read to its end, failed or closed) the shadows go.
    """

    def __init__(self, raw: Any, exchange: Exchange, response: requests.Response) -> None:
        self.raw = raw
        self.exchange = exchange
        # The head as it came: a response hook changing response.headers later changes no evidence.
        self.status = response.status_code
        self.headers = list(response.headers.items())
        self.streamed = "content-length" not in response.headers
        self.depth = 0  # how deep inside the recorded reads the current one is (0: the agent's own)
        self.ended = False  # the body was read to its end
        self.cut = False  # closing urllib3's stream early (its consumer let it go) closed the connection
        self.done = False  # the body is recorded: a read method the agent kept reads through
        self.shadows: dict[str, Any] = {}

    def install(self) -> None:
        """Shadow the reads the raw object's class has (an adapter's own raw may lack some); then the body is
        the agent's to read."""
        cls = type(self.raw)
        for names, make in ((_CALLS, _reading), (_STREAMS, _streaming), (("close",), _closing)):
            for name in names:
                original = getattr(cls, name, None)
                if callable(original):
                    self.shadows[name] = types.MethodType(make(self, name, original), self.raw)
        try:
            for name, method in self.shadows.items():
                setattr(self.raw, name, method)
        except (AttributeError, TypeError):  # a raw object that takes no attribute: left as it was
            self.uninstall()
            raise
        self.exchange.responded(self.status, self.headers, self.streamed)

    def uninstall(self) -> None:
        """Take the shadows away (one the agent replaced meanwhile is the agent's: left)."""
        own = getattr(self.raw, "__dict__", {})
        for name, method in self.shadows.items():
            if own.get(name) is method:
                del own[name]

    def __enter__(self) -> None:
        """``with tee:`` runs a read of urllib3 inside a recorded one (its bytes are the outer read's). A plain
        context manager, not a generator one: readline runs one per byte."""
        self.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1

    def decoding(self, decode_content: bool | None) -> None:
        """Whether a read decodes: its own argument, else what the response is set to (the agent may set it)."""
        flag = decode_content if decode_content is not None else getattr(self.raw, "decode_content", False)
        self.exchange.decoded = bool(flag)

    def received(self, data: bytes, *, asked: int | None, whole: bool = False) -> None:
        """What a read gave the agent. An empty read is the end of what can be read (not when it asked for no
        bytes), and so is a read of all that was left (``whole``) or one that left none."""
        if data:
            self.exchange.received(bytes(data))
        if (not data and asked != 0) or whole or (data and _drained(self.raw)):
            self.nothing_left()

    def nothing_left(self) -> None:
        """No more bytes come: the body's end, unless it was cut short first. A stream closed early under the
        tee (``next(r.iter_lines())`` dropping its generator: urllib3 closes the connection, as unwrapped) or a
        body the wire still owes bytes of leaves later reads empty, which is no end of the body."""
        self.ended = not (self.cut or _owed(self.raw))
        self.finish(complete=self.ended)

    def failed(self, error: BaseException) -> None:
        """A read failed: recorded with the error the agent gets (requests' own, when requests was reading).
        A generator closed early by its consumer is no failure: the response's close records the body."""
        if isinstance(error, GeneratorExit):
            return
        try:
            seen = _as_agent_gets(error, self.raw)
        except Exception:  # noqa: BLE001 - recording must never change the agent's error: the read's own, then
            seen = error
        self.finish(complete=False, error=seen)

    def finish(self, *, complete: bool, error: BaseException | None = None) -> None:
        self.done = True
        self.uninstall()
        # Nothing of the tee holds the response now: dropped by the agent, it goes at once, as unwrapped (a
        # read method the agent kept still reads, through).
        self.shadows.clear()
        self.exchange.finish(status=self.status, headers=self.headers, streamed=self.streamed,
                             complete=complete, error=error, decoded=self.exchange.decoded)

    def passing(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        """The chunks of a streaming read, each recorded as it reaches the agent."""
        while True:
            try:
                with self:
                    chunk = next(chunks)
            except StopIteration:
                break
            except BaseException as exc:  # a cancel or Ctrl-C mid-stream is the stream's error too
                self.failed(exc)
                raise
            self.exchange.received(chunk)
            try:
                yield chunk
            except GeneratorExit:
                # Closed early by its consumer: so is urllib3's stream, as unwrapped; the response's close
                # records the body. A chunked one lets its connection go: the rest of the body is lost.
                was_open = not _closed(self.raw)
                with self:
                    close = getattr(chunks, "close", None)
                    if close is not None:
                        close()
                self.cut = self.cut or (was_open and _closed(self.raw))
                raise
        self.nothing_left()


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str) -> Any:
    """A read's argument, given by position or by name (None when not given)."""
    return args[index] if len(args) > index else kwargs.get(name)


def _reading(tee: _Tee, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``read``, ``read1`` or ``readline`` recorded: (amt | size, decode_content) as urllib3 takes them."""

    @functools.wraps(original)
    def read(raw: Any, *args: Any, **kwargs: Any) -> Any:
        if tee.depth or tee.done:  # a read inside a recorded one (readline's read(1)s), or after the body
            return original(raw, *args, **kwargs)
        asked = _argument(args, kwargs, 0, "size" if name == "readline" else "amt")
        tee.decoding(None if name == "readline" else _argument(args, kwargs, 1, "decode_content"))
        try:
            with tee:
                data = original(raw, *args, **kwargs)
        except BaseException as exc:  # a cancel or Ctrl-C mid-read is the stream's error too
            tee.failed(exc)
            raise
        # read() with no size (or a negative one) reads all that is left.
        whole = name == "read" and (asked is None or (isinstance(asked, int) and asked < 0)) and data is not None
        tee.received(data or b"", asked=asked, whole=whole)
        return data

    return read


def _streaming(tee: _Tee, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``stream`` or ``read_chunked`` recorded: (amt, decode_content) as urllib3 takes them."""

    @functools.wraps(original)
    def stream(raw: Any, *args: Any, **kwargs: Any) -> Any:
        if tee.depth or tee.done or _argument(args, kwargs, 0, "amt") == 0:  # amt=0 reads nothing, ends nothing
            return original(raw, *args, **kwargs)
        decode = _argument(args, kwargs, 1, "decode_content")
        try:
            with tee:
                chunks = original(raw, *args, **kwargs)
        except BaseException as exc:
            tee.failed(exc)
            raise
        tee.decoding(decode)
        return tee.passing(iter(chunks))

    return stream


def _closing(tee: _Tee, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``close`` recorded: the body as read so far, complete if it was read to its end."""

    @functools.wraps(original)
    def close(raw: Any, *args: Any, **kwargs: Any) -> Any:
        if tee.depth or tee.done or getattr(raw, "_finalizing", False):
            # io's finalizer closes a response dropped unclosed, at a moment of the collector's choosing (a
            # lock of the run may be held): the run's end records it instead.
            return original(raw, *args, **kwargs)
        try:
            with tee:
                return original(raw, *args, **kwargs)
        finally:
            tee.finish(complete=tee.ended)

    return close


def _closed(raw: Any) -> bool:
    """urllib3 has let the response's connection go (False for a raw object that cannot say)."""
    try:
        return bool(raw.isclosed())
    except Exception:  # noqa: BLE001 - an unusual raw object
        return False


def _owed(raw: Any) -> bool:
    """The wire still owes bytes of the body: a sized one short of its length, or a chunk not read to its end
    (urllib3 counts both; a chunked body read through ``read()`` is counted by http.client, which tells no
    cut from an end once closed: the tee's own ``cut`` says that)."""
    try:
        remaining = getattr(raw, "length_remaining", None)
        chunk_left = getattr(raw, "chunk_left", None) if getattr(raw, "chunked", False) else None
        return (isinstance(remaining, int) and remaining > 0) or (isinstance(chunk_left, int) and chunk_left > 0)
    except Exception:  # noqa: BLE001 - an unusual raw object: its end is an empty read
        return False


def _drained(raw: Any) -> bool:
    """No byte of the body is left for the agent: the wire is read (urllib3 closed it, or counts none left)
    and urllib3 holds nothing decoded back (its own ``stream()`` reads on while it does)."""
    try:
        if not (raw.isclosed() or getattr(raw, "length_remaining", None) == 0):
            return False
        decoder = getattr(raw, "_decoder", None)
        held = len(getattr(raw, "_decoded_buffer", b"")) or getattr(decoder, "has_unconsumed_tail", False)
        return not held
    except Exception:  # noqa: BLE001 - an unusual raw object: its end is an empty read
        return False


@functools.cache
def _iter_content_reader() -> types.CodeType | None:
    """The code of the generator in ``requests.Response.iter_content`` that reads ``raw`` (under ``content``,
    ``text``, ``json()``, ``iter_lines``): it turns urllib3's errors into requests' own."""
    for const in requests.Response.iter_content.__code__.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == "generate":
            return const
    return None


def _as_agent_gets(error: BaseException, raw: Any) -> BaseException:
    """The error the agent gets for ``error``, raised by a read of ``raw``: when requests' own reading made
    that read, the one requests raises for it (ChunkedEncodingError for urllib3's ProtocolError...), found
    by running requests' own code on it; else ``error`` itself (the agent read ``raw``)."""
    reader = _iter_content_reader()
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is reader and getattr(frame.f_locals.get("self"), "raw", None) is raw:
            return _raised_by_requests(error)
        frame = frame.f_back  # type: ignore[assignment]
    return error


class _Failing:
    """A raw response whose stream fails with ``error``: what requests' reading raises for it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        raise self.error


def _raised_by_requests(error: BaseException) -> BaseException:
    """What ``requests.Response.iter_content`` raises when its raw read fails with ``error``. The agent's
    ``error`` object is left as it was (raising it again would lengthen its traceback)."""
    probe = requests.Response()
    probe.raw = _Failing(error)
    kept = (error.__traceback__, error.__context__, error.__cause__, error.__suppress_context__)
    try:
        for _ in requests.Response.iter_content(probe, 1):
            pass
    except BaseException as raised:  # noqa: BLE001 - whatever requests raises is the answer
        return raised
    finally:
        error.__traceback__, error.__context__, error.__cause__, error.__suppress_context__ = kept
    return error


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
        exchange.sending()
        response = send(request)
    except BaseException as exc:  # a KeyboardInterrupt too: the request may have reached the server
        exchange.retried = _retried_before_failing(exc)
        exchange.fail(exc)
        raise
    finally:
        release_request(request)  # sent: the same object sent again is another exchange
        if swapped is not None:
            # The body goes back to the agent's own: requests re-sends it on a 307/308 redirect (and
            # the agent may send the request again), which a spent tee would send empty.
            request.body = swapped
    exchange.retried = _retried(response)
    content = getattr(response, "_content", False)
    if content is not False or response.raw is None:
        # Read already by its adapter (a cache, a mock), or nothing to read: recorded now, as requests
        # decoded it, and the raw left as the agent would have it (no tee would see a read).
        exchange.received(content if isinstance(content, bytes) else b"")
        exchange.finish(status=response.status_code, headers=list(response.headers.items()),
                        streamed="content-length" not in response.headers, complete=True, decoded=True)
        return response
    try:
        _Tee(response.raw, exchange, response).install()
    except Exception as exc:  # noqa: BLE001 - a raw object the body cannot be recorded from: a gap, as declared
        exchange.abandon()
        run._declare_failure("http_call", exc)
    return response


def _retried(response: requests.Response) -> list[Attempt]:
    """The attempts urllib3's Retry made before ``response`` (``raw.retries.history``): each may have reached
    the server (a 503 retried under ``status_forcelist``, a POST retried after a read error), so the record
    says so rather than reading as one request sent once."""
    try:
        return _attempts(getattr(getattr(response.raw, "retries", None), "history", None) or ())
    except Exception:  # noqa: BLE001 - an adapter's own raw object: its attempts are not known
        return []


def _attempts(history: Any) -> list[Attempt]:
    """urllib3's ``RequestHistory`` items as attempts."""
    return [Attempt(_text(item.method), _text(item.url), item.status if isinstance(item.status, int) else None,
                    item.error if isinstance(item.error, BaseException) else None) for item in history]


def _retried_before_failing(error: BaseException) -> list[Attempt]:
    """The attempts urllib3's Retry made when the request failed instead of returning a response.

    urllib3 hands them to no one then: ``MaxRetryError`` holds only the pool, the URL and the last reason,
    and the exhausted Retry is a local of ``Retry.increment``, whose frame the error's traceback keeps
    (requests raises its own error from urllib3's: the chain is walked). Read from there, and only from
    those functions' own code: every attempt when the retries ran out (``increment``'s ``history``, the last
    one included: no response is recorded, so its status is nowhere else); else the attempts before the one
    that failed (``increment``'s own, when it re-raised an error it may not retry; or the ``retries`` of the
    innermost ``urlopen``, for an error raised past it: a request body that failed when sent again)."""
    try:
        from urllib3.connectionpool import HTTPConnectionPool
        from urllib3.util.retry import Retry
    except ImportError:
        return []
    increment = getattr(Retry.increment, "__code__", None)
    urlopen = getattr(HTTPConnectionPool.urlopen, "__code__", None)
    try:
        history: Any = None
        seen: set[int] = set()
        chained: BaseException | None = error
        while chained is not None and id(chained) not in seen:
            seen.add(id(chained))
            for frame, _ in traceback.walk_tb(chained.__traceback__):
                names = frame.f_locals if frame.f_code in (increment, urlopen) else None
                if names is None:
                    continue
                if frame.f_code is increment:
                    found = names.get("history")
                    return _attempts(found if isinstance(found, tuple) else
                                     getattr(names.get("self"), "history", None) or ())
                history = getattr(names.get("retries"), "history", history)  # the innermost is walked last
            chained = chained.__cause__ or chained.__context__
        return _attempts(history) if isinstance(history, tuple) else []
    except Exception:  # noqa: BLE001 - recording must never change the agent's error: its attempts unknown
        return []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


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
