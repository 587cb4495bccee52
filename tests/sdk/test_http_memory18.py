"""A response body certain to be withheld as too large is not held whole while it streams (mem18).

Under a capture policy a body past BITEXACT_MAX_BODY_BYTES is withheld unread. Before, the exchange held
every chunk until its end and then joined and decoded them: a 200 MiB download through a wrapped client
peaked at 861 MiB against 62 unwrapped. Now it lets go of the body once every form it could be recorded in
is past the bound, keeping only the SHA-256 of the canonical ``{path: value}`` the withheld digest is over,
so the entry declares what it declared before: ``"[withheld]"``, the ``too_large`` field, and a
``scrub_failed`` gap whose keyed digest opens for the body as it would have been recorded. Real servers on
loopback, real clients, the real store.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests

import bitexact
from bitexact.canon import canonicalize
from bitexact.capture import open_withheld
from bitexact.crypto.keysources import load_key_file
from bitexact.sdk.http.exchange import body_fields
from sdk.conftest import entries, http_calls
from sdk.servers import HandlerBase, serve_seen

BOUND = 1 << 20  # BITEXACT_MAX_BODY_BYTES in these tests
BIG = 48 << 20  # the body the memory tests stream
PIECE = ("é\x01" + "x" * 60 + "\n").encode("utf-8") * 1024  # 64 KiB of whole characters
TOO_LARGE = {"mode": "withheld", "cause": "scrub_failed", "reason": "too_large"}
SIZE = 12 << 20  # each body of the declaration tests: three times what is held before letting go
BODIES: dict[str, tuple[bytes, str]] = {
    # Multi-byte characters cut across chunks, control characters (six bytes each as stored), quotes.
    "/text": (("aé\x01\"\\€😀" * (SIZE // 15)).encode("utf-8"), "text/plain; charset=utf-8"),
    # Bytes that are not UTF-8 past the point the body was let go of: recorded as b64.
    "/bytes": (b"a" * (10 << 20) + b"\xff\xfe" + b"b" * (2 << 20) + b"z", "application/octet-stream"),
    # A text cut inside its last character: its text, and the character's bytes as tail_b64.
    "/cut": (("ü" * (6 << 20)).encode("utf-8") + "€".encode("utf-8")[:2], "text/plain"),
    # JSON in UTF-16 (told from its first bytes, whatever the header says).
    "/utf16": (('{"k": "' + "ä\n" * (3 << 20) + '"}').encode("utf-16-le"), "application/json; charset=utf-8"),
    # Latin-1: more bytes as stored than on the wire.
    "/latin1": (("ÿ" * SIZE).encode("latin-1"), "text/plain; charset=iso-8859-1"),
}


class _Big(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path == "/big":
            # Written a piece at a time: the server (in this process) holds no body of its own.
            self.send_response(200)
            self.send_header("content-type", "text/plain; charset=utf-8")
            self.send_header("content-length", str(BIG))
            self.end_headers()
            for _ in range(BIG // len(PIECE)):
                self.wfile.write(PIECE)
            return
        body, media = BODIES[self.path]
        self.send_response(200)
        self.send_header("content-type", media)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        for start in range(0, len(body), 65_537):  # an odd chunk size: characters cut across chunks
            self.wfile.write(body[start : start + 65_537])


    def do_POST(self) -> None:  # noqa: N802
        self._body()  # read, and let go of
        self.do_GET()


@pytest.fixture
def base() -> Iterator[str]:
    with serve_seen(_Big) as (url, _):
        yield url


@pytest.fixture
def policy(monkeypatch: pytest.MonkeyPatch, key_file: Path) -> Path:
    monkeypatch.setenv("BITEXACT_MAX_BODY_BYTES", str(BOUND))
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(key_file))
    return key_file


def _httpx_stream(url: str) -> int:
    with bitexact.wrap(httpx.Client()) as client, client.stream("GET", url) as response:
        return sum(len(chunk) for chunk in response.iter_bytes(65536))


def _requests_stream(url: str) -> int:
    with bitexact.wrap(requests.Session()) as session:
        response = session.get(url, stream=True)
        return sum(len(chunk) for chunk in response.iter_content(65536))


READS: dict[str, Callable[[str], int]] = {"httpx": _httpx_stream, "requests": _requests_stream}


def _gap_after(run_id: str | None, call: dict[str, Any]) -> dict[str, Any]:
    later = [e for e in entries(run_id) if e["step"] == call["step"] + 1]
    assert later and later[0]["kind"] == "marker", "the scrub_failed gap follows its entry"
    return later[0]["data"]["gap"]


@pytest.mark.parametrize("client", sorted(READS))
def test_a_body_past_the_bound_is_not_held_while_it_streams(base: str, client: str, policy: Path) -> None:
    tracemalloc.start()
    try:
        with bitexact.run(strict=True) as r:
            got = READS[client](base + "/big")
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == BIG, "the agent reads the whole body"
    # Held up to 4 MiB (the most a model is read from), then only a digest: before, 48 MiB of chunks and
    # their join (96 MiB and more at the peak).
    assert peak < 16 << 20, f"{peak:,} bytes allocated at the peak"
    (call,) = http_calls(r.run_id)
    assert call["data"]["response"]["text"] == "[withheld]"
    assert call["capture"]["fields"] == {"response.text": TOO_LARGE}
    gap = _gap_after(r.run_id, call)
    assert gap["cause"] == "scrub_failed" and gap["fields"] == {"response.text": "too_large"}
    content = canonicalize({"response.text": (PIECE * (BIG // len(PIECE))).decode("utf-8")})
    assert gap["withheld"]["bytes"] == len(content)
    assert open_withheld(gap["withheld"], content, load_key_file(policy))


@pytest.mark.parametrize("path", sorted(BODIES))
def test_the_declaration_is_the_one_the_whole_body_gives(base: str, path: str, policy: Path) -> None:
    """What the entry stores and declares, and the content its digest opens for, are those of the body
    recorded whole (body_fields, then the walk's too_large): the same path, text or b64, tail_b64."""
    body, media = BODIES[path]
    whole = body_fields(body, media)
    field = "text" if "text" in whole else "b64"
    tracemalloc.start()
    try:
        with bitexact.run(strict=True) as r:
            assert _httpx_stream(base + path) == len(body)
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Held up to 4 MiB, then let go of: before, the whole body and its join (twice its size and more).
    assert peak < 8 << 20, f"{peak:,} bytes allocated at the peak: the body was held whole"
    (call,) = http_calls(r.run_id)
    response = call["data"]["response"]
    assert response[field] == "[withheld]"
    assert response.get("tail_b64") == whole.get("tail_b64")
    assert {"text", "b64"} & set(response) == {field}
    assert call["capture"]["fields"] == {f"response.{field}": TOO_LARGE}
    gap = _gap_after(r.run_id, call)
    assert gap["fields"] == {f"response.{field}": "too_large"}
    content = canonicalize({f"response.{field}": whole[field]})
    assert gap["withheld"]["bytes"] == len(content)
    assert open_withheld(gap["withheld"], content, load_key_file(policy))
    assert not open_withheld(gap["withheld"], content[:-2] + b'x"}', load_key_file(policy))


def test_with_the_policy_off_the_body_is_held_and_kept(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_MAX_BODY_BYTES", str(BOUND))  # the policy is off (sdk tests' default)
    body, media = BODIES["/latin1"]
    with bitexact.run(strict=True) as r:
        assert _httpx_stream(base + "/latin1") == len(body)
    (call,) = http_calls(r.run_id)
    assert call["data"]["response"]["text"] == body.decode("latin-1") and call.get("capture") is None


def test_a_rule_that_keeps_the_body_holds_it(base: str, policy: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "policy.json"
    rules.write_text('{"fields": [{"kind": "http_call", "path": "response.text", "mode": "keep"},'
                     ' {"kind": "*", "path": "*", "mode": "scrub"}]}', encoding="utf-8")
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", str(rules))
    body, _ = BODIES["/latin1"]
    with bitexact.run(strict=True) as r:
        assert _httpx_stream(base + "/latin1") == len(body)
    (call,) = http_calls(r.run_id)
    assert call["data"]["response"]["text"] == body.decode("latin-1")


def test_an_entry_written_after_the_call_carries_the_digest_through_its_journal(base: str, policy: Path) -> None:
    """A request body past 1 MiB makes the entry large: journaled, then written after the call (not strict).
    The body's digest travels with it; the request body, withheld by the walk, has a gap of its own first."""
    request = "r\x02" * (1 << 20)
    body, media = BODIES["/text"]
    with bitexact.run() as r:
        with bitexact.wrap(httpx.Client()) as client, client.stream(
                "POST", base + "/text", content=request.encode(), headers={"content-type": "text/plain"}) as got:
            assert sum(len(chunk) for chunk in got.iter_bytes(65536)) == len(body)
    (call,) = http_calls(r.run_id)
    assert call["data"]["request"]["text"] == call["data"]["response"]["text"] == "[withheld]"
    assert call["capture"]["fields"] == {"request.text": TOO_LARGE, "response.text": TOO_LARGE}
    markers = [e["data"]["gap"] for e in entries(r.run_id) if e["step"] in (call["step"] + 1, call["step"] + 2)]
    assert [gap["fields"] for gap in markers] == [{"request.text": "too_large"}, {"response.text": "too_large"}]
    key = load_key_file(policy)
    assert open_withheld(markers[0]["withheld"], canonicalize({"request.text": request}), key)
    assert open_withheld(markers[1]["withheld"], canonicalize({"response.text": body_fields(body, media)["text"]}),
                         key)


_KILLED_AGENT = '''
import fcntl, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import httpx
import bitexact
from bitexact import config

BODY = sys.argv[1].encode("utf-8") * int(sys.argv[2])

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/plain; charset=utf-8")
        self.send_header("content-length", str(len(BODY)))
        self.end_headers()
        for start in range(0, len(BODY), 65_537):
            self.wfile.write(BODY[start:start + 65_537])

server = ThreadingHTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=server.serve_forever, daemon=True).start()
with bitexact.run() as r:
    print(f"run {r.run_id}", flush=True)
    fd = os.open(config.home() / "bitexact.db.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a slow writer: the entry stays in its journal
    with bitexact.wrap(httpx.Client()) as client, client.stream(
            "POST", f"http://127.0.0.1:{server.server_address[1]}/", content=b"q" * (2 << 20)) as got:
        print(f"read {sum(len(chunk) for chunk in got.iter_bytes())}", flush=True)
    print("ready", flush=True)
    time.sleep(600)
'''


def test_killed_before_the_write_bitexact_repair_folds_the_digest_from_the_journal(
        policy: Path, home: Path, tmp_path: Path) -> None:
    """kill -9 once the call returned, its entry only in its journal: the fold declares the streamed body."""
    import os
    import signal
    import subprocess
    import sys

    from bitexact.recording.fold import fold_orphans
    from bitexact.sdk.stores import recorder_for

    agent = tmp_path / "agent.py"
    agent.write_text(_KILLED_AGENT, encoding="utf-8")
    unit, times = "é\x01xyz", 2 << 20  # 12 MiB
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("BITEXACT_HOST_KEY", None)
    process = subprocess.Popen([sys.executable, str(agent), unit, str(times)], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line.strip())
            if line.strip() == "ready":
                break
        else:
            raise AssertionError(process.stderr.read() if process.stderr else "the agent ended")
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(30)
    run_id = lines[0].split()[1]
    assert lines[1] == f"read {len(unit.encode()) * times}"
    assert http_calls(run_id) == [], "the store was held: the entry is only in its journal"
    recorder, _ = recorder_for()
    assert fold_orphans(recorder, run_id)
    (call,) = http_calls(run_id)
    assert call["data"]["response"]["text"] == "[withheld]"
    assert call["capture"]["fields"]["response.text"] == TOO_LARGE
    gaps = [e["data"]["gap"] for e in entries(run_id) if e["kind"] == "marker" and "gap" in e["data"]]
    (gap,) = [g for g in gaps if g.get("fields") == {"response.text": "too_large"}]
    assert open_withheld(gap["withheld"], canonicalize({"response.text": unit * times}), load_key_file(policy))
