"""A wrapped requests session changes nothing the agent gets: the errors a body read raises (and the one
recorded), and ``response.raw``, urllib3's own response object, of its own type. Real servers on loopback."""

from __future__ import annotations

import datetime
import gc
import gzip
import io
import ipaddress
import os
import socket
import ssl
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
import urllib3

import bitexact
from sdk.conftest import entries, http_calls, kinds
from sdk.servers import HandlerBase, serve_seen

GATE = threading.Event()  # the stalled body's server waits for this (set when each test ends)
PART = b"only part of it"
GZIPPED = b"abcdefgh" * 20000  # compresses about 300 to 1: urllib3 decodes far more than it reads


class _Handler(HandlerBase):
    def _head(self, extra: dict[str, str]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = self.path
        if path == "/cut":  # promises 1000 bytes, sends a few, hangs up
            self._head({"content-length": "1000"})
            self.wfile.write(PART)
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif path == "/chunk-cut":  # a chunked body that stops inside its second chunk
            self._head({"transfer-encoding": "chunked"})
            self.wfile.write(b"5\r\nhello\r\n" + b"20\r\nnot 32 bytes")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif path == "/bad-gzip":  # says gzip, is not
            self._head({"content-length": str(len(PART)), "content-encoding": "gzip"})
            self.wfile.write(PART)
        elif path == "/stall":  # a few bytes, then nothing until the test is over
            self._head({"content-length": "1000"})
            self.wfile.write(PART)
            self.wfile.flush()
            GATE.wait(10)
            self.close_connection = True
        elif path == "/tls-broken":  # a few bytes, then a TLS record that is not one
            self._head({"content-length": "1000"})
            self.wfile.write(PART)
            self.wfile.flush()
            with socket.socket(fileno=os.dup(self.connection.fileno())) as under:
                under.sendall(b"\x17\x03\x03\x00\x08garbage!")
            self.close_connection = True
        elif path == "/gzip":
            self._send(200, gzip.compress(GZIPPED), "text/plain", {"content-encoding": "gzip"})
        elif path == "/lines":
            self._send(200, b"one\ntwo\nthree\n", "text/plain")
        elif path == "/chunked":
            self._head({"transfer-encoding": "chunked"})
            for part in (b"first\n", b"second\n", b"third\n"):
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self._send(404, b"", "text/plain")


@pytest.fixture(autouse=True)
def _gate() -> Iterator[None]:
    GATE.clear()
    yield
    GATE.set()


@pytest.fixture
def base() -> Iterator[str]:
    with serve_seen(_Handler) as (url, _):
        yield url


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA): the client verifies the loopback server with it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@contextmanager
def _serve_tls(folder: Path) -> Iterator[tuple[str, Path]]:
    """The handler over TLS on loopback: its base URL and the certificate that verifies it."""
    cert, key = _certificate(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


# -- 1. the error a broken body raises, and the one recorded -----------------------------------------------

# How an agent reads a body: through requests (which turns urllib3's errors into its own), or from raw.
WAYS: dict[str, Callable[[requests.Response], object]] = {
    "content": lambda r: r.content,
    "iter_content": lambda r: list(r.iter_content(64)),
    "iter_lines": lambda r: list(r.iter_lines()),
    "json": lambda r: r.json(),
    "raw.read": lambda r: r.raw.read(),
    "raw.read(decoded)": lambda r: r.raw.read(decode_content=True),
    "raw.stream": lambda r: list(r.raw.stream(64)),
    "raw iterated": lambda r: list(r.raw),
}


def _outcome(session: requests.Session, url: str, way: str, **options: Any) -> str | None:
    """The error the agent gets reading ``url``'s body ``way`` (its type's full name), or None."""
    try:
        response = session.get(url, stream=True, timeout=(5, 0.5), **options)
        WAYS[way](response)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return f"{type(exc).__module__}.{type(exc).__qualname__}"
    return None


def _recorded_error(run_id: str | None) -> str | None:
    (call,) = http_calls(run_id)
    error = call["data"].get("error")
    return error["type"] if error else None


def _compare(url: str, way: str, **options: Any) -> tuple[str | None, str | None, str | None]:
    """(unwrapped, wrapped, recorded): the error the agent gets without and with the recording, and the one
    recorded."""
    plain = _outcome(requests.Session(), url, way, **options)
    with bitexact.run(name="broken-body") as run:
        wrapped = _outcome(bitexact.wrap(requests.Session()), url, way, **options)
    return plain, wrapped, _recorded_error(run.run_id)


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize(("path", "through_requests", "from_raw"), [
    ("/cut", "requests.exceptions.ChunkedEncodingError", "urllib3.exceptions.ProtocolError"),
    ("/chunk-cut", "requests.exceptions.ChunkedEncodingError", "urllib3.exceptions.ProtocolError"),
])
def test_a_body_cut_short_is_recorded_with_the_error_the_agent_got(base: str, path: str, way: str,
                                                                   through_requests: str, from_raw: str) -> None:
    # The http_call recorded urllib3's ProtocolError where the agent, reading through requests, got
    # requests' ChunkedEncodingError: the recording read below requests' own handling of it.
    plain, wrapped, recorded = _compare(base + path, way)
    assert plain == (from_raw if way.startswith("raw") else through_requests)
    assert wrapped == plain
    assert recorded == plain


@pytest.mark.parametrize("way", list(WAYS))
def test_a_body_that_does_not_decode_is_recorded_with_the_error_the_agent_got(base: str, way: str) -> None:
    plain, wrapped, recorded = _compare(base + "/bad-gzip", way)
    # requests leaves raw undecoded (decode_content=False): raw.read() gives the bytes as sent, no error.
    undecoded = way in ("raw.read", "raw.stream")
    assert plain == (None if undecoded else "urllib3.exceptions.DecodeError" if way.startswith("raw")
                     else "requests.exceptions.ContentDecodingError")
    assert wrapped == plain
    assert recorded == plain


@pytest.mark.parametrize("way", ["content", "iter_lines", "raw.read"])
def test_a_body_that_stalls_past_the_timeout_is_recorded_with_the_error_the_agent_got(base: str, way: str) -> None:
    plain, wrapped, recorded = _compare(base + "/stall", way)
    assert plain == ("urllib3.exceptions.ReadTimeoutError" if way == "raw.read"
                     else "requests.exceptions.ConnectionError")
    assert wrapped == plain
    assert recorded == plain


@pytest.mark.parametrize("way", ["content", "iter_content", "raw.read"])
def test_a_tls_stream_broken_mid_body_is_recorded_with_the_error_the_agent_got(tmp_path: Path, way: str) -> None:
    with _serve_tls(tmp_path) as (url, cert):
        plain, wrapped, recorded = _compare(url + "/tls-broken", way, verify=str(cert))
    assert plain == ("urllib3.exceptions.SSLError" if way == "raw.read" else "requests.exceptions.SSLError")
    assert wrapped == plain
    assert recorded == plain


def test_an_instrumented_session_records_the_error_the_agent_got(base: str) -> None:
    handle = bitexact.instrument()
    try:
        with bitexact.run(name="instrumented") as run:
            with pytest.raises(requests.exceptions.ChunkedEncodingError):
                requests.get(base + "/cut", timeout=5)
    finally:
        handle.undo()
    assert _recorded_error(run.run_id) == "requests.exceptions.ChunkedEncodingError"


def test_the_agents_error_is_left_as_it_was(base: str) -> None:
    # Finding requests' error for urllib3's runs requests' own code on it: the agent's exception keeps its
    # traceback and chain.
    with bitexact.run(name="untouched"):
        with pytest.raises(requests.exceptions.ChunkedEncodingError) as caught:
            bitexact.wrap(requests.Session()).get(base + "/cut")
    cause = caught.value.__context__
    assert isinstance(cause, urllib3.exceptions.ProtocolError)
    frames = []
    tb = cause.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_qualname)
        tb = tb.tb_next
    assert frames.count("Response.iter_content.<locals>.generate") == 1, frames
    assert not [name for name in frames if name.startswith("_Failing")], frames
    assert cause.__context__ is not cause


# -- 2. response.raw is urllib3's response, of its own type ------------------------------------------------

def test_raw_is_urllib3s_own_response_object(base: str) -> None:
    plain = requests.get(base + "/lines", stream=True)
    with bitexact.run(name="raw-type") as run:
        response = bitexact.wrap(requests.Session()).get(base + "/lines", stream=True)
        raw = response.raw
        assert type(raw) is type(plain.raw) is urllib3.response.HTTPResponse
        assert isinstance(raw, io.IOBase) and isinstance(raw, urllib3.response.BaseHTTPResponse)
        assert raw.readable() and raw.tell() == 0 and not raw.closed
        buffer = bytearray(4)
        assert raw.readinto(buffer) == 4 and bytes(buffer) == b"one\n"
        assert raw.read() == b"two\nthree\n" and raw.tell() == len(b"one\ntwo\nthree\n")
        # The body is over: the instance is as unwrapped again, to its attribute names.
        plain.raw.readinto(bytearray(4))
        plain.raw.read()
        assert sorted(vars(raw)) == sorted(vars(plain.raw))
    (call,) = http_calls(run.run_id)
    assert call["data"]["response"]["text"] == "one\ntwo\nthree\n" and call["data"]["response"]["complete"]


def test_a_closed_response_leaves_no_recording_read_on_raw(base: str) -> None:
    with bitexact.run(name="closed") as run:
        response = bitexact.wrap(requests.Session()).get(base + "/lines", stream=True)
        assert response.raw.read(3) == b"one"
        assert "read" in vars(response.raw), "while the body is open, its reads are recorded"
        assert response.raw.read.__wrapped__ is urllib3.response.HTTPResponse.read  # as docs/sdk.md says
        response.close()
        assert not {"read", "read1", "readline", "stream", "read_chunked", "close"} & set(vars(response.raw))
    (call,) = http_calls(run.run_id)
    assert call["data"]["response"]["text"] == "one" and not call["data"]["response"]["complete"]


def test_a_read_method_kept_after_the_response_is_dropped_still_reads(base: str) -> None:
    # A bound method holds its object, unwrapped: iter(partial(get(...).raw.read, n), b"") is an idiom.
    with bitexact.run(name="kept") as run:
        read = bitexact.wrap(requests.Session()).get(base + "/lines", stream=True).raw.read
        gc.collect()
        assert b"".join(iter(lambda: read(5), b"")) == b"one\ntwo\nthree\n"
    (call,) = http_calls(run.run_id)
    assert call["data"]["response"]["text"] == "one\ntwo\nthree\n" and call["data"]["response"]["complete"]


def test_a_gzip_body_read_in_sized_decoded_reads_is_recorded_whole(base: str) -> None:
    # urllib3 holds back decoded bytes it has read off the wire already: the body was taken as over (and
    # recorded, complete) at the first read that reached the wire's end, the rest never recorded.
    with bitexact.run(name="gzip-sized") as run:
        raw = bitexact.wrap(requests.Session()).get(base + "/gzip", stream=True).raw
        got = b""
        while chunk := raw.read(4096, decode_content=True):
            got += chunk
        assert got == GZIPPED
        (call,) = http_calls(run.run_id)  # recorded at the body's end, not the run's
    response = call["data"]["response"]
    assert response["text"] == GZIPPED.decode() and response["complete"]


@pytest.mark.parametrize("read", ["readline", "iterated", "next", "readlines", "readinto", "read1", "data"])
def test_each_way_of_reading_raw_is_recorded_once_and_whole(base: str, read: str) -> None:
    def drain(raw: Any) -> bytes:
        if read == "readline":
            return b"".join(iter(raw.readline, b""))
        if read == "iterated":
            return b"".join(raw)
        if read == "next":
            return b"".join(iter(lambda: next(raw, b""), b""))  # a chunked body's end is its last empty read
        if read == "readlines":
            return b"".join(raw.readlines())
        if read == "readinto":
            out, buffer = b"", bytearray(5)
            while count := raw.readinto(buffer):
                out += bytes(buffer[:count])
            return out
        if read == "read1":
            return b"".join(iter(lambda: raw.read1(5), b""))
        return bytes(raw.data)

    for path in ("/lines", "/chunked"):
        expected = drain(requests.get(base + path, stream=True).raw)
        with bitexact.run(name=read) as run:
            assert drain(bitexact.wrap(requests.Session()).get(base + path, stream=True).raw) == expected
            calls = http_calls(run.run_id)  # recorded when the body ended, before the run's end
        assert len(calls) == 1
        assert calls[0]["data"]["response"]["text"] == expected.decode() and calls[0]["data"]["response"]["complete"]


def test_a_stream_closed_early_closes_urllib3s_stream_as_unwrapped(base: str) -> None:
    def closed_early(session: requests.Session) -> tuple[bool, bool]:
        raw = session.get(base + "/chunked", stream=True).raw
        chunks = raw.stream(4)
        next(chunks)
        chunks.close()
        return raw.isclosed(), raw.connection is None

    plain = closed_early(requests.Session())
    with bitexact.run(name="closed-early"):
        assert closed_early(bitexact.wrap(requests.Session())) == plain


def test_a_response_dropped_unread_is_recorded_by_the_runs_end_not_by_the_collector(base: str) -> None:
    # io's finalizer closes a dropped response from wherever the collector runs (a lock of the run may be
    # held there): that close records nothing, the run's end records the body as it stands.
    with bitexact.run(name="dropped") as run:
        response = bitexact.wrap(requests.Session()).get(base + "/lines", stream=True)
        assert response.raw.read(3) == b"one"
        # http.client's response under it kept alive: else the collector may close that one first, and
        # io's finalizer then finds urllib3's closed already and calls no close.
        under = response.raw._fp
        del response
        gc.collect()
        assert under.isclosed(), "io's finalizer closed urllib3's response, as unwrapped (its close closes this)"
        run.record("marker", {"note": "after the collector"})
    assert kinds(run.run_id).index("marker") < kinds(run.run_id).index("http_call")
    (call,) = http_calls(run.run_id)
    assert call["data"]["response"]["text"] == "one" and not call["data"]["response"]["complete"]


def test_a_response_read_to_its_end_and_dropped_is_freed_at_once_as_unwrapped(base: str) -> None:
    # While the body is open its reads on the instance hold it (a cycle the collector frees); once the body
    # is recorded nothing of the recording holds it: its socket goes when the agent drops it, as unwrapped.
    def freed(session: requests.Session) -> bool:
        response = session.get(base + "/lines", stream=True)
        assert response.content == b"one\ntwo\nthree\n"
        raw = weakref.ref(response.raw)
        del response
        return raw() is None

    gc.disable()
    try:
        assert freed(requests.Session())
        with bitexact.run(name="freed"):
            assert freed(bitexact.wrap(requests.Session()))
    finally:
        gc.enable()


class _FileAdapter(requests.adapters.BaseAdapter):
    """An adapter whose response body is a plain file object (as test doubles and file:// adapters give)."""

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        response = requests.Response()
        response.status_code = 200
        response.headers["content-type"] = "text/plain"
        response.raw = io.BytesIO(b"from a file object")
        response.request = request
        response.url = str(request.url)
        return response

    def close(self) -> None:
        return


def test_a_raw_that_is_a_plain_file_object_keeps_its_type_and_is_recorded() -> None:
    session = requests.Session()
    session.mount("mem://", _FileAdapter())
    with bitexact.run(name="file-raw") as run:
        response = bitexact.wrap(session).get("mem://body", stream=True)
        assert type(response.raw) is io.BytesIO
        assert response.text == "from a file object"  # requests reads a raw with no stream() by read(n)
        assert response.raw.read() == b""
    (call,) = http_calls(run.run_id)
    assert call["data"]["response"]["text"] == "from a file object" and call["data"]["response"]["complete"]


class _SlottedBody:
    """A raw body object that takes no attribute (``__slots__``): its reads cannot be shadowed."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def read(self, amt: int | None = None) -> bytes:
        data, self._data = (self._data, b"") if amt is None else (self._data[:amt], self._data[amt:])
        return data


def test_a_raw_that_takes_no_attribute_is_a_declared_gap_and_the_agent_reads_on() -> None:
    class Adapter(_FileAdapter):
        def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
            response = super().send(request)
            response.raw = _SlottedBody(b"slotted")
            return response

    session = requests.Session()
    session.mount("mem://", Adapter())
    with bitexact.run(name="slotted") as run:
        assert bitexact.wrap(session).get("mem://body").content == b"slotted"
    assert not http_calls(run.run_id)
    (gap,) = [e["data"]["gap"] for e in entries(run.run_id) if e["kind"] == "marker" and "gap" in e["data"]]
    assert gap["kind"] == "http_call" and gap["detail"] == "capture failed: AttributeError"
