"""HTTP capture (the sixth review): regression tests, each for a bug its docstring names (real loopback
servers, no mocks): what a wrapped client sends or gives the agent differs from unwrapped, or an exchange
the record misses or gets wrong."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls as _http_calls
from sdk.servers import HandlerBase, SeenServer, serve_seen




class _Handler(HandlerBase):
    server: SeenServer

    def do_GET(self) -> None:
        self.server.seen.append({"path": self.path, "body": None})
        path = self.path.split("?", 1)[0]
        if path == "/charset":  # a charset Python names, whose codec refuses every byte
            self._send(200, b"plain words", "text/plain; charset=undefined")
        elif path == "/deep":  # JSON nested deeper than Python's json module recurses
            self._send(200, b'{"model": "m-deep", "a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                       "application/json")
        elif path == "/deep-sse":
            self._send(200, b'data: {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b'}\n\ndata: {"model": "m-sse"}\n\n',
                       "text/event-stream")
        elif path == "/gzip":
            self._send(200, gzip.compress(b"zipped text"), "text/plain", {"content-encoding": "gzip"})
        else:
            self._send(200, b'{"ok": true}', "application/json")

    def do_PUT(self) -> None:
        self.do_POST()

    def do_POST(self) -> None:
        body = self._body()
        self.server.seen.append({"path": self.path, "body": body})
        if self.path == "/307":
            self._send(307, b"", "text/plain", {"location": "/echo"})
        elif self.path == "/drop-first" and len(self.server.seen) == 1:  # the body read, then no answer
            self.close_connection = True
        else:
            self._send(200, json.dumps({"len": len(body)}).encode(), "application/json")


@pytest.fixture
def srv() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with serve_seen(_Handler) as running:
        yield running


# -- requests: a body the agent can iterate again -------------------------------------------------------


class _Chunks:
    """A request body requests streams (chunked) and can iterate again, as a 307 redirect does."""

    def __iter__(self) -> Iterator[bytes]:
        yield b"abc"
        yield b"def"


def test_a_re_iterable_body_is_sent_whole_again_on_a_307_redirect(srv: tuple[str, list[dict[str, Any]]]) -> None:
    """The recording tee replaced the PreparedRequest's body with a one-shot generator for good: requests
    re-sends that body on a 307, so the redirected request went out empty (unwrapped: the body again)."""
    base, seen = srv
    with requests.Session() as plain:
        assert plain.post(base + "/307", data=_Chunks()).json() == {"len": 6}
    assert [s["body"] for s in seen] == [b"abcdef", b"abcdef"]
    seen.clear()
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        assert session.post(base + "/307", data=_Chunks()).json() == {"len": 6}
    assert [s["body"] for s in seen] == [b"abcdef", b"abcdef"], "the redirected request lost its body"
    calls = _http_calls(r.run_id)
    assert [(c["data"]["request"]["text"], c["data"]["response"]["status"]) for c in calls] == [
        ("abcdef", 307), ("abcdef", 200)]


def test_a_re_iterable_body_is_sent_whole_again_when_urllib3_retries_the_request(
    srv: tuple[str, list[dict[str, Any]]]
) -> None:
    """Same cause, inside one send: urllib3 retries a PUT whose connection dropped by iterating its body
    again, and got the spent tee: the retry went out empty."""
    from urllib3.util.retry import Retry

    base, seen = srv

    def session() -> requests.Session:
        made = requests.Session()
        made.mount("http://", requests.adapters.HTTPAdapter(max_retries=Retry(total=1, backoff_factor=0)))
        return made

    with session() as plain:
        assert plain.put(base + "/drop-first", data=_Chunks()).json() == {"len": 6}
    assert [s["body"] for s in seen] == [b"abcdef", b"abcdef"]
    seen.clear()
    with bitexact.run() as r, bitexact.wrap(session()) as wrapped:
        assert wrapped.put(base + "/drop-first", data=_Chunks()).json() == {"len": 6}
    assert [s["body"] for s in seen] == [b"abcdef", b"abcdef"], "the retried request lost its body"
    (call,) = _http_calls(r.run_id)
    assert call["data"]["request"]["text"] == "abcdef", "the body as sent (once), not both attempts joined"


# -- requests: response.raw reads as urllib3's ----------------------------------------------------------


def test_raw_read1_takes_urllib3s_keywords_and_a_decoded_read_is_recorded_as_text(
    srv: tuple[str, list[dict[str, Any]]]
) -> None:
    """The former proxy _TeeRaw.read1 took positional arguments only (raw.read1(amt=100) raised TypeError), and ignored a
    decode_content it was given: the decoded text was recorded as b64 said to be gzip."""
    base, _ = srv
    with requests.Session() as plain:
        expected = plain.get(base + "/gzip", stream=True).raw.read1(amt=100, decode_content=True)
    assert expected == b"zipped text"
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        with session.get(base + "/gzip", stream=True) as reply:
            assert reply.raw.read1(amt=100, decode_content=True) == expected
        with session.get(base + "/gzip", stream=True) as reply:
            got = reply.raw.read1(100, True)
            assert got == expected and reply.raw.read1(100, True) == b""
    first, second = (c["data"]["response"] for c in _http_calls(r.run_id))
    assert first["text"] == "zipped text"
    assert second.get("text") == "zipped text" and second["complete"] is True, second


@pytest.mark.parametrize("read", ["read", "read1", "readline", "readinto"])
def test_a_raw_read_of_zero_bytes_does_not_end_the_recorded_body(srv: tuple[str, list[dict[str, Any]]],
                                                                read: str) -> None:
    """An empty read was taken as the body's end even when the agent asked for 0 bytes: the entry was
    written there (complete, body empty) and what the agent read next never reached the record."""
    base, _ = srv
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session, \
            session.get(base + "/json", stream=True) as reply:
        if read == "readinto":
            assert reply.raw.readinto(bytearray()) == 0
        else:
            assert getattr(reply.raw, read)(0) == b""
        assert reply.raw.read() == b'{"ok": true}'
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["text"] == '{"ok": true}'
    assert call["data"]["response"]["complete"] is True


# -- a body the record can hold turned the whole exchange into a gap ---------------------------------------


@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_a_charset_whose_codec_refuses_the_body_is_recorded_as_b64(srv: tuple[str, list[dict[str, Any]]],
                                                                   client_kind: str) -> None:
    """body_fields caught UnicodeDecodeError only: a server's "charset=undefined" raises UnicodeError, so
    the http_call (request, status, headers) was lost, a gap in its place."""
    base, _ = srv
    with bitexact.run() as r:
        if client_kind == "httpx":
            with bitexact.wrap(httpx.Client()) as client:
                assert client.get(base + "/charset").content == b"plain words"
        else:
            with bitexact.wrap(requests.Session()) as session:
                assert session.get(base + "/charset").content == b"plain words"
    assert r.failures.gaps == []
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["b64"] == "cGxhaW4gd29yZHM="


@pytest.mark.parametrize(("path", "model"), [("/deep", None), ("/deep-sse", "m-sse")])
def test_a_json_body_nested_past_pythons_recursion_limit_is_still_recorded(
    srv: tuple[str, list[dict[str, Any]]], path: str, model: str | None
) -> None:
    """The model sniff caught ValueError only: json.loads raises RecursionError on a deeply nested body,
    so the exchange became a gap, although its body is plain text the record holds."""
    base, _ = srv
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        body = client.get(base + path).text
    assert r.failures.gaps == []
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["text"] == body
    assert call["data"]["model"] == model


# -- a response the agent leaves open when the run ends ------------------------------------------------


@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_a_response_left_open_when_the_run_ends_is_recorded_in_the_run(
    srv: tuple[str, list[dict[str, Any]]], client_kind: str
) -> None:
    """A streamed response the agent never read nor closed (it looked at the status only) was written when
    closed, never: the run sealed with no trace of an exchange that reached the server (and closing it
    after the run was a gap outside it)."""
    base, seen = srv
    with bitexact.run() as r:
        if client_kind == "httpx":
            client = bitexact.wrap(httpx.Client())
            reply: Any = client.send(client.build_request("GET", base + "/json?token=t0k"), stream=True)
        else:
            session = bitexact.wrap(requests.Session())
            reply = session.get(base + "/json?token=t0k", stream=True)
        assert reply.status_code == 200
    assert len(seen) == 1, "the exchange was made inside the run"
    (call,) = _http_calls(r.run_id)
    assert call["data"]["request"]["url"].endswith("/json?token=%5Bredacted%5D")
    assert call["data"]["response"]["status"] == 200 and call["data"]["response"]["complete"] is False
    # The agent still reads the body as unwrapped; nothing more is recorded, and no gap is declared.
    assert (reply.read() if client_kind == "httpx" else reply.content) == b'{"ok": true}'
    reply.close()
    assert r.failures.gaps == [] and len(_http_calls(r.run_id)) == 1
