"""Property: under the shipped default, no card number, IBAN or credential survives anywhere.

Runs are recorded through the SDK - the door a Python agent uses, which ends
in the one write path - full of card numbers (in several scripts' digits,
spaced, hyphenated, URL-encoded, inside JSON documents held in strings,
under duplicate keys, as object keys, as numbers), IBANs and credentials.
Then every byte under ``BITEXACT_HOME`` (the database and its WAL, journals,
failures records, exports), every row the store keeps (read through SQLite,
so a value split across database pages is read whole), every log line the
package emitted and every export (json, jsonl, dsse) is searched for them.

The search normalizes before it looks: ``\\uXXXX`` escapes decoded (twice,
for a document in a string in a document), every decimal digit of any script
made ASCII, every separator the detectors accept (space, hyphen, ``+``,
no-break space, ``%20``, ``%2D``) removed, IBANs compared upper-cased. So a
value found in any of the forms it was written in, or any the product could
re-encode it into, fails the test.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import tempfile
import threading
import unicodedata
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bitexact
from bitexact.capture.detectors import luhn_ok
from bitexact.crypto.keystore import KeyStore
from bitexact.evidence.export import RunSource, export_run
from bitexact.sdk import close_stores
from bitexact.store import DB_NAME, open_store

ISSUERS = [("4", 16), ("4", 13), ("51", 16), ("2221", 16), ("34", 15), ("6011", 16), ("3528", 16), ("62", 17),
           ("36", 14), ("65", 19)]
ZEROS = [ord("0"), 0x0660, 0x06F0, 0x0966, 0x09E6, 0x0E50, 0xFF10]  # ASCII, Arabic-Indic, ..., fullwidth
SEPARATORS = [" ", "-", "%20", "%2D", "+", "\u00a0"]
IBAN_BBANS = {"DE": 18, "FR": 23, "GB": 18, "NL": 14, "ES": 20, "IT": 23}  # BBAN lengths (IBAN length - 4)
CREDENTIAL_KEYS = ["password", "api_key", "token", "secret", "access_token"]
_SEPARATORS = re.compile(r"%2[0dD]|[\s\-+\u00a0]")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def pan_from(prefix: str, length: int, body: str) -> str:
    digits = (prefix + body)[: length - 1]
    return next(digits + d for d in "0123456789" if luhn_ok(digits + d))


def iban_from(country: str, digits: str) -> str:
    bban = digits[: IBAN_BBANS[country]]
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


pans = st.builds(
    lambda issuer, body: pan_from(issuer[0], issuer[1], body),
    st.sampled_from(ISSUERS),
    st.text("0123456789", min_size=19, max_size=19),
)
ibans = st.builds(iban_from, st.sampled_from(sorted(IBAN_BBANS)), st.text("0123456789", min_size=23, max_size=23))
tokens = st.text("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", min_size=12, max_size=20).map(
    lambda s: s + "9Q7"
)


def in_script(pan: str, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in pan)


def grouped(text: str, separator: str) -> str:
    return separator.join(text[i : i + 4] for i in range(0, len(text), 4))


@st.composite
def written_pan(draw: st.DrawFn, pan: str) -> str:
    digits = in_script(pan, draw(st.sampled_from(ZEROS)))
    return grouped(digits, draw(st.sampled_from(SEPARATORS))) if draw(st.booleans()) else digits


@st.composite
def agent_data(draw: st.DrawFn) -> tuple[list[tuple[str, dict[str, Any]]], list[str], list[str], list[str]]:
    """Steps an agent records, and the card numbers, IBANs and credentials hidden in them."""
    card_numbers = draw(st.lists(pans, min_size=3, max_size=3, unique=True))
    accounts = draw(st.lists(ibans, min_size=2, max_size=2, unique=True))
    secrets = draw(st.lists(tokens, min_size=3, max_size=3, unique=True))
    a, b, c = card_numbers
    spaced = grouped(accounts[1], draw(st.sampled_from([" ", "-", "%20"])))
    cred_key = draw(st.sampled_from(CREDENTIAL_KEYS))
    steps: list[tuple[str, dict[str, Any]]] = [
        ("tool_call", {"tool": "pay", "args": [f"paid with {draw(written_pan(a))} today"],
                       "kwargs": {"iban": accounts[0].lower() if draw(st.booleans()) else accounts[0],
                                  cred_key: secrets[0]}}),
        # a JSON document in a string, its digits escaped, a duplicate key shadowing the card number
        ("tool_call", {"tool": "echo", "result": '{"card": "%s", "card": "ok", "n": %s}' % (
            "".join(f"\\u{ord(ch):04x}" for ch in in_script(b, draw(st.sampled_from(ZEROS)))), c)}),
        # the card number as an object key and as a number
        ("tool_call", {"tool": "index", "result": {a: "seen", "amount": int(c)}}),
        # in a request path and query, URL-encoded
        ("tool_call", {"tool": "http", "args": [f"/v1/cards/{grouped(b, '%20')}?iban={grouped(accounts[1], '+')}"
                                                f"&access_token={secrets[1]}"]}),
        ("context", {"name": "notes", "content": {"text": f"customer said {spaced} and Bearer {secrets[2]}"}}),
        ("marker", {"note": json.dumps({"nested": json.dumps({"pan": grouped(c, "-")})})}),
    ]
    return steps, card_numbers, accounts, secrets


def normalized(text: str) -> str:
    for _ in range(2):  # a document in a string in a document: escapes twice over
        text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    text = "".join(str(unicodedata.digit(ch)) if ch.isdigit() and unicodedata.digit(ch, None) is not None else ch
                   for ch in text)
    return _SEPARATORS.sub("", text)


def leaks(haystack: str, card_numbers: list[str], accounts: list[str], secrets: list[str]) -> list[str]:
    flat = normalized(haystack)
    upper = flat.upper()
    found = [p for p in card_numbers if p in flat]
    found += [i for i in accounts if i in upper]
    found += [s for s in secrets if s in haystack or s in flat]
    return found


def files_under(root: Path) -> Iterator[Path]:
    yield from (p for p in sorted(root.rglob("*")) if p.is_file())


def stored_rows(home: Path) -> Iterator[str]:
    """Every row the store keeps, read through SQLite (a value split across pages is read whole)."""
    conn = sqlite3.connect(home / DB_NAME)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):  # noqa: S608 - names from sqlite_master
                yield " ".join(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in row)
    finally:
        conn.close()


class LogLines(logging.Handler):
    """Every record the package logs, formatted as a handler would write it (exception text included)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(logging.Formatter("%(name)s %(levelname)s %(message)s").format(record))


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    handler = LogLines()
    package = logging.getLogger("bitexact")
    level = package.level
    package.addHandler(handler)
    package.setLevel(logging.DEBUG)
    yield handler
    package.removeHandler(handler)
    package.setLevel(level)


def record_and_export(home: Path, steps: list[tuple[str, dict[str, Any]]], exports: Path, *,
                      fail_with: str) -> str:
    with pytest.raises(RuntimeError):
        with bitexact.run(name="leaky", home=home) as r:
            for kind, data in steps:
                r.record(kind, data)
            r.record_tool_call("lookup", args=[f"card {fail_with}"], result={"ok": True})
            r.record("tool_call", {"tool": "x", "args": [fail_with]}, custody={"args": "not-a-hint"})
            raise RuntimeError(f"declined card {fail_with}")  # the run records the exception as a marker
    run_id = r.run_id
    close_stores()
    store = open_store(home)
    (home / "exports").mkdir(exist_ok=True)
    try:
        key = KeyStore(home).current_or_init()
        for fmt in ("json", "jsonl", "dsse"):
            export_run(RunSource.from_store(store, run_id), exports / f"run.{fmt}", key, fmt=fmt)
            export_run(RunSource.from_store(store, run_id), home / "exports" / f"run.{fmt}", key, fmt=fmt)
    finally:
        store.close()
    return run_id


def assert_nothing_survives(home: Path, exports: Path, lines: list[str], values: tuple[list[str], ...]) -> None:
    places: dict[str, str] = {}
    for root in (home, exports):
        for path in files_under(root):
            places[str(path)] = path.read_bytes().decode("utf-8", "replace")
    for index, row in enumerate(stored_rows(home)):
        places[f"row {index}"] = row
    for index, line in enumerate(lines):
        places[f"log line {index}"] = line
    assert any(p.endswith("bitexact.db") for p in places) and any(p.startswith(str(exports)) for p in places)
    found = {where: hit for where, text in places.items() if (hit := leaks(text, *values))}
    assert found == {}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(agent_data())
def test_no_card_number_iban_or_credential_survives_anywhere(
    log_lines: LogLines, monkeypatch: pytest.MonkeyPatch, data: Any
) -> None:
    steps, card_numbers, accounts, secrets = data
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    with tempfile.TemporaryDirectory() as tmp:
        home, exports = Path(tmp) / "home", Path(tmp) / "exports"
        exports.mkdir()
        monkeypatch.setenv("BITEXACT_HOST_KEY", str(Path(tmp) / "host.key"))
        start = len(log_lines.lines)
        record_and_export(home, steps, exports, fail_with=card_numbers[0])
        assert_nothing_survives(home, exports, log_lines.lines[start:], (card_numbers, accounts, secrets))
        rows = " ".join(stored_rows(home))
        # Recorded and scrubbed, not dropped: every kind of token is in the store.
        assert all(token in rows for token in ("[PAN ****", "[IBAN]", "[CREDENTIAL]", "declined card [PAN"))


# --- the seeded checks: the search finds what it looks for, and a large entry and HTTP are covered too ---


def test_the_search_finds_a_value_in_each_form_it_could_take() -> None:
    pan, iban = "4111111111111111", "DE89370400440532013000"
    for written in (pan, grouped(pan, " "), grouped(pan, "%20"), grouped(pan, "%2D"), in_script(pan, 0x0660),
                    "".join(f"\\u{ord(ch):04x}" for ch in pan), json.dumps(json.dumps(grouped(pan, "-")))):
        assert leaks(f"x {written} y", [pan], [], []) == [pan], written
    assert leaks(grouped(iban.lower(), "+"), [], [iban], []) == [iban]
    assert leaks("[PAN ****1111] and [IBAN]", [pan], [iban], []) == []


def test_under_the_policy_off_the_same_search_finds_them(
    log_lines: LogLines, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The search is not vacuous: with nothing removing them, every kind of value is found.
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(tmp_path / "host.key"))
    pan, iban, token = "4111111111111111", "DE89370400440532013000", "Qwertyuiopasdf9Q7"
    steps = [("tool_call", {"tool": "pay", "args": [grouped(pan, "%20")], "kwargs": {"iban": iban, "token": token}})]
    home, exports = tmp_path / "home", tmp_path / "exports"
    exports.mkdir()
    record_and_export(home, steps, exports, fail_with=pan)
    with pytest.raises(AssertionError):
        assert_nothing_survives(home, exports, log_lines.lines, ([pan], [iban], [token]))
    found = {hit for path in files_under(exports) for hit in leaks(path.read_text("utf-8", "replace"),
                                                                   [pan], [iban], [token])}
    assert found == {pan, iban, token}


def test_a_large_entry_written_after_the_call_leaves_nothing_behind(
    log_lines: LogLines, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Over 1 MiB: journaled (sealed under the host key) before the call returns, scrubbed when written.
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(tmp_path / "host.key"))
    pan, iban = "4111111111111111", "FR1420041010050500013M02606"
    filler = "lorem ipsum dolor sit amet " * 45_000
    steps = [("tool_call", {"tool": "bulk", "result": f"{filler} {grouped(pan, '-')} {filler} {iban}"})]
    home, exports = tmp_path / "home", tmp_path / "exports"
    exports.mkdir()
    record_and_export(home, steps, exports, fail_with="4012888888881881")
    assert_nothing_survives(home, exports, log_lines.lines, ([pan, "4012888888881881"], [iban], []))


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _stream(self) -> None:
        # A card number split across two chunks of an event stream.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in (b'data: {"text": "card 5500 00', b'00 0000 0004"}\n\n', b"data: [DONE]\n\n"):
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _reply(self) -> None:
        if self.path.startswith("/sse"):
            self._stream()
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        payload = json.dumps({"path": self.path, "echo": body.decode("utf-8", "replace")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _reply

    def log_message(self, *args: Any) -> None:
        pass


def test_http_exchanges_through_a_wrapped_client_leave_nothing_behind(
    log_lines: LogLines, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import httpx

    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(tmp_path / "host.key"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pan, iban, token = "5500000000000004", "GB82WEST12345698765432", "Zxcvbnmasdfghj9Q7"
    home, exports = tmp_path / "home", tmp_path / "exports"
    exports.mkdir()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with bitexact.run(name="http", home=home) as r:
            client = bitexact.wrap(httpx.Client())
            client.get(f"{base}/v1/cards/{grouped(pan, '%20')}", params={"iban": iban, "api_key": token})
            client.post(f"{base}/pay", json={"card": grouped(pan, " "), "iban": iban},
                        headers={"Authorization": f"Bearer {token}"})
            with client.stream("GET", f"{base}/sse") as streamed:
                body = b"".join(streamed.iter_bytes())
            assert b"5500 0000 0000 0004" in body  # the agent gets what was sent; only the record changes
            client.close()
            run_id = r.run_id
    finally:
        server.shutdown()
        close_stores()
    store = open_store(home)
    try:
        kinds = [e["kind"] for e in store.entries(run_id)]
        assert kinds.count("http_call") == 3
        recorded = json.dumps([e["data"] for e in store.entries(run_id) if e["kind"] == "http_call"])
        assert recorded.count("[PAN ****0004]") >= 4  # path, request body, echoed body, the stream: all recorded
        key = KeyStore(home).current_or_init()
        export_run(RunSource.from_store(store, run_id), exports / "run.json", key, fmt="json")
    finally:
        store.close()
    assert_nothing_survives(home, exports, log_lines.lines, ([pan], [iban], [token]))


def test_a_card_number_given_as_a_custody_hint_leaves_nothing_behind(
    log_lines: LogLines, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    monkeypatch.setenv("BITEXACT_HOST_KEY", str(tmp_path / "host.key"))
    pan = "4111111111111111"
    home = tmp_path / "home"
    with bitexact.run(name="hint", home=home) as r:
        r.record("tool_call", {"tool": "t", "args": ["x"]}, custody={"args": pan})
    close_stores()
    exports = tmp_path / "exports"
    exports.mkdir()
    (exports / "none").write_text("")
    assert_nothing_survives(home, exports, log_lines.lines, ([pan], [], []))


def test_a_journal_at_rest_is_sealed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What waits in a journal has not met the policy yet: it must be sealed, whatever the policy.
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import JournalRecord, read_journal, write_journal

    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    home = tmp_path / "home"
    home.mkdir()
    host_key = load_host_key(home)
    pan, iban, token = "4111111111111111", "DE89370400440532013000", "Qwertyuiopasdf9Q7"
    data = {"tool": "pay", "args": [grouped(pan, " ")], "kwargs": {"iban": iban, "token": token}}
    path = write_journal(home, host_key, JournalRecord(run_id="run-x", seq=0, kind="tool_call", data=data))
    assert leaks(path.read_bytes().decode("utf-8", "replace"), [pan], [iban], [token]) == []
    assert read_journal(path, host_key).data == data  # sealed, not lost
