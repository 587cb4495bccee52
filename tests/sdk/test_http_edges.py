"""The SDK's HTTP capture against real loopback servers (second review): regression tests.

Each test failed before the fix of its bug: an exchange the record misses or gets wrong, a
credential that reaches the record, or a wrapped client that behaves differently for the agent.
"""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests
import requests.auth

import bitexact
from sdk.conftest import http_calls as _http_calls
from sdk.servers import HandlerBase, SeenServer, serve_seen




# -- a loopback server for these tests (the pattern of tests/sdk/servers.py) ---------------------------


class _Handler(HandlerBase):
    server: SeenServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.server.seen.append({"path": self.path, "headers": dict(self.headers)})
        path = self.path.split("?", 1)[0]
        if path == "/digest":  # HTTP digest authentication: a 401 challenge, then the authorized request
            if self.headers.get("authorization", "").startswith("Digest "):
                self._send(200, b'{"model": "m-after-auth"}', "application/json")
            else:
                self._send(401, b"", "text/plain", {
                    "www-authenticate": 'Digest realm="r", nonce="abc123", qop="auth", algorithm=MD5'})
        elif path == "/lines":
            self._send(200, b"line one\nline two\nline three\n", "text/plain; charset=utf-8")
        elif path == "/scheme-relative":  # a redirect to a network-path reference carrying user info
            self._send(302, b"", "text/plain", {"location": "//ann:hunter2@127.0.0.1:9/final?page=2"})
        else:
            self._send(200, b'{"ok": true}', "application/json")

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        self._send(200, json.dumps({"len": len(body)}).encode(), "application/json")


@pytest.fixture
def srv() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    with serve_seen(_Handler) as running:
        yield running


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- exchanges the record misses ------------------------------------------------------------------------


def test_a_digest_auth_retry_through_a_wrapped_session_is_recorded(srv: tuple[str, list[dict[str, Any]]]) -> None:
    # requests' HTTPDigestAuth (and NTLM/Kerberos auth plugins) re-send through response.connection, which
    # is the inner HTTPAdapter, not the RecordingAdapter: the authorized exchange goes out unrecorded.
    base, seen = srv
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        reply = session.get(base + "/digest", auth=requests.auth.HTTPDigestAuth("ann", "hunter2"))
        assert reply.json() == {"model": "m-after-auth"}
    assert len(seen) == 2, "two exchanges went over the wire"
    calls = _http_calls(r.run_id)
    assert [c["data"]["response"]["status"] for c in calls] == [401, 200]
    assert calls[1]["data"]["request"]["headers"]["authorization"] == "[redacted]"


@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_an_exchange_made_while_another_request_is_being_sent_is_recorded(
    srv: tuple[str, list[dict[str, Any]]], client_kind: str
) -> None:
    # A streamed upload whose parts are fetched as it goes: the part downloads run while the upload is
    # inside send(), where the "already recording" flag is set for the whole context, so they are dropped.
    base, seen = srv
    with bitexact.run() as r:
        if client_kind == "httpx":
            with bitexact.wrap(httpx.Client()) as parts, bitexact.wrap(httpx.Client()) as uploads:
                def body() -> Iterator[bytes]:
                    for i in range(2):
                        yield parts.get(f"{base}/part?i={i}").content

                assert uploads.post(base + "/upload", content=body()).json() == {"len": 24}
        else:
            with bitexact.wrap(requests.Session()) as parts, bitexact.wrap(requests.Session()) as uploads:
                def body() -> Iterator[bytes]:
                    for i in range(2):
                        yield parts.get(f"{base}/part?i={i}").content

                assert uploads.post(base + "/upload", data=body()).json() == {"len": 24}
    assert [s["path"].split("?")[0] for s in seen] == ["/part", "/part", "/upload"], "three exchanges were made"
    recorded = sorted(c["data"]["request"]["path"] + "?" + c["data"]["request"]["query"] for c in _http_calls(r.run_id))
    assert recorded == ["/part?i=0", "/part?i=1", "/upload?"]


def test_a_body_read_with_raw_readline_is_recorded(srv: tuple[str, list[dict[str, Any]]]) -> None:
    # response.raw is a file object (urllib3's HTTPResponse is an io.IOBase); readline/read1/readinto pass
    # through the former proxy _TeeRaw.__getattr__ to urllib3 and are never seen by the exchange.
    base, _ = srv
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        with session.get(base + "/lines", stream=True) as reply:
            got = b""
            while line := reply.raw.readline():
                got += line
    assert got == b"line one\nline two\nline three\n"
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["text"] == got.decode(), "the record says the agent received an empty body"
    assert call["data"]["response"]["complete"] is True


# -- what the agent gets from a wrapped session -----------------------------------------------------------


def test_next_on_a_wrapped_sessions_raw_works_as_unwrapped(srv: tuple[str, list[dict[str, Any]]]) -> None:
    base, _ = srv
    with requests.Session() as plain:
        expected = next(plain.get(base + "/lines", stream=True).raw)
    assert expected == b"line one\n"
    with bitexact.run(), bitexact.wrap(requests.Session()) as session:
        reply = session.get(base + "/lines", stream=True)
        assert next(reply.raw) == expected  # was: TypeError: '_TeeRaw' object is not an iterator (the former proxy)
        reply.close()


def test_a_wrapped_sessions_adapter_keeps_its_attributes() -> None:
    # Agents tune a session's adapter after building it (session.get_adapter(url).max_retries = Retry(3)).
    with requests.Session() as plain:
        expected = plain.get_adapter("http://api.example.test/").max_retries.total
    with bitexact.wrap(requests.Session()) as session:
        adapter = session.get_adapter("http://api.example.test/")
        assert adapter.max_retries.total == expected  # AttributeError on the RecordingAdapter


# -- the record is wrong ------------------------------------------------------------------------------


def test_header_values_given_as_bytes_are_recorded_as_sent(srv: tuple[str, list[dict[str, Any]]]) -> None:
    # requests accepts bytes header values and sends their bytes; the record keeps Python's repr of them.
    base, seen = srv
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        session.get(base + "/json", headers={"X-Trace": b"trace-1", "Referer": b"http://app.test/page?token=t0k"})
    assert seen[0]["headers"]["X-Trace"] == "trace-1"
    (call,) = _http_calls(r.run_id)
    headers = call["data"]["request"]["headers"]
    assert headers["x-trace"] == "trace-1"  # now "b'trace-1'"
    assert headers["referer"] == "http://app.test/page?token=%5Bredacted%5D"


def test_a_gzip_request_body_is_recorded_decompressed(srv: tuple[str, list[dict[str, Any]]]) -> None:
    # exchange.py: "A compressed body is recorded decompressed (gzip, deflate ...)"; a request body sent
    # with Content-Encoding: gzip is recorded as the compressed bytes (b64), unread by any detector.
    base, seen = srv
    with bitexact.run() as r, bitexact.wrap(httpx.Client()) as client:
        client.post(base + "/upload", content=gzip.compress(b'{"model": "m-gz"}'),
                    headers={"content-encoding": "gzip", "content-type": "application/json"})
    assert gzip.decompress(seen[0]["body"]) == b'{"model": "m-gz"}'
    (call,) = _http_calls(r.run_id)
    assert call["data"]["request"].get("text") == '{"model": "m-gz"}'
    assert call["data"]["model"] == "m-gz"


# -- credentials reaching the record ----------------------------------------------------------------------


@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_user_info_in_a_scheme_relative_location_is_not_recorded(
    srv: tuple[str, list[dict[str, Any]]], client_kind: str
) -> None:
    # docs/capture.md: a Location "absolute or relative - is recorded by redact_url", which replaces user
    # info; redact_url looks for "://" and so misses the network-path reference //user:pass@host/...
    base, _ = srv
    with bitexact.run() as r:
        if client_kind == "httpx":
            with bitexact.wrap(httpx.Client()) as client:
                location = client.get(base + "/scheme-relative").headers["location"]
        else:
            with bitexact.wrap(requests.Session()) as session:
                location = session.get(base + "/scheme-relative", allow_redirects=False).headers["location"]
    assert location == "//ann:hunter2@127.0.0.1:9/final?page=2", "the agent gets the header as sent"
    (call,) = _http_calls(r.run_id)
    assert call["data"]["response"]["headers"]["location"] == "//%5Bredacted%5D@127.0.0.1:9/final?page=2"
    assert "hunter2" not in json.dumps(call)


def test_a_failed_requests_exchange_does_not_record_the_query_credential_in_its_error() -> None:
    # The URL is recorded by the credential rule, but requests' ConnectionError message repeats the path and
    # query ("Max retries exceeded with url: /v1/chat?token=...") and is recorded as is.
    url = f"http://127.0.0.1:{_closed_port()}/v1/chat?token=t0k-secret&page=2"
    with bitexact.run() as r, bitexact.wrap(requests.Session()) as session:
        with pytest.raises(requests.ConnectionError):
            session.get(url)
    (call,) = _http_calls(r.run_id)
    assert call["data"]["request"]["url"].endswith("/v1/chat?token=%5Bredacted%5D&page=2")
    assert "t0k-secret" not in call["data"]["error"]["message"]
