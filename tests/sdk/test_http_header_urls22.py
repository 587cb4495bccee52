"""Session 22: the URL rule's edges in what a wrapped client records of headers and request URLs.

On 0de516f a URL in another header's value ran on through "," and ";", so a credential's redaction took the
header's own bytes after it (a CSP's ``;default-src 'self'``, a list's ``,b=...``); a URL after a list member's
name or inside another URL's query was read as the first URL's bytes (its user info and token recorded as sent);
a network-path reference (``//u:p@host/x``, ``a=//host/x?token=T``) was not read; and ``?a=1;token=T`` kept its
token in the request URL and a ``Location``. Look-alikes are recorded byte for byte. Real servers on loopback,
httpx and requests; the capture policy off (the SDK tests' default), so the URL rule alone decides.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.header_exchanges import request_header, response_header
from sdk.servers import header_cases_handler, latin1_digest as _digest, serve_seen

# (header, value sent, value recorded): response headers.
RESPONSE_CASES = [
    ("content-security-policy", "report-uri https://r.example/x?token=T0K1;default-src 'self'",
     "report-uri https://r.example/x?token=%5Bredacted%5D;default-src 'self'"),
    ("reporting-endpoints", "a=https://r.example/x?token=T0K2,b=https://r.example/y",
     "a=https://r.example/x?token=%5Bredacted%5D,b=https://r.example/y"),
    ("reporting-endpoints", "a=https://r.example/x?q=1,b=https://u:T0K3@r.example/y?key=T0K4",
     "a=https://r.example/x?q=1,b=https://%5Bredacted%5D@r.example/y?key=%5Bredacted%5D"),
    ("x-mirror", "//user:T0K5@mirror.example/x", "//%5Bredacted%5D@mirror.example/x"),
    ("x-next", "a=//h.example/x?token=T0K6", "a=//h.example/x?token=%5Bredacted%5D"),
    ("location", "/next?a=1;token=T0K7", "/next?a=1;token=%5Bredacted%5D"),
    ("link", '<https://a.example/x?page=2;access_token=T0KD>; rel="next"',
     '<https://a.example/x?page=2;access_token=%5Bredacted%5D>; rel="next"'),
    ("refresh", "0; url=/y?a=1;key=T0KE", "0; url=/y?a=1;key=%5Bredacted%5D"),
    ("x-callback-url", "https://h.example/login?next=https://h2.example/cb?token=T0K8",
     "https://h.example/login?next=https://h2.example/cb?token=%5Bredacted%5D"),
]
# Values holding "//" that the rule leaves: recorded exactly as sent.
LOOK_ALIKES = [
    ("x-note", "// note ?token=x"),
    ("x-note", "a//b?token=x, x // y"),
    ("x-fields", "https://h.example/x?fields=id,key,name;sort=key"),
    ("content-security-policy", "default-src 'self'; img-src //cdn.example; report-uri https://r.example/x"),
]
# (header, value the agent sends, value recorded): request headers.
REQUEST_CASES = [
    ("x-callback-url", "https://cb.example/hook?id=7;key=T0K9,https://cb.example/alt",
     "https://cb.example/hook?id=7;key=%5Bredacted%5D,https://cb.example/alt"),
    ("x-forwarded-from", "//u:T0KA@a.example/", "//%5Bredacted%5D@a.example/"),
    ("x-note", "a//b?token=x"),
]
ALL = RESPONSE_CASES + [(name, sent, sent) for name, sent in LOOK_ALIKES]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(header_cases_handler(ALL)) as (url, _seen):
        yield url


def _recorded(run_id: str | None, side: str) -> list[dict[str, str]]:
    return [call["data"][side]["headers"] for call in http_calls(run_id)]


@pytest.mark.parametrize("index", range(len(ALL)))
def test_a_header_url_is_recorded_to_the_headers_own_grammar(base: str, index: int) -> None:
    name, sent, recorded = ALL[index]
    got = response_header(base, index, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


@pytest.mark.parametrize(("name", "sent", "recorded"),
                         [case if len(case) == 3 else (*case, case[1]) for case in REQUEST_CASES])
def test_a_request_header_url_is_recorded_to_the_headers_own_grammar(base: str, name: str, sent: str,
                                                                     recorded: str) -> None:
    got = request_header(base, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


def test_a_credential_after_a_semicolon_in_the_request_url_is_redacted(base: str) -> None:
    """Both clients send ``?a=1;token=T`` as written (a raw ";" is kept); the server gets it whole, the record
    holds the token redacted and every other byte as sent."""
    path = "/echo?a=1;token=T0KB;page=2"
    with bitexact.run() as r:
        assert bitexact.wrap(httpx.Client()).get(base + path).json()[":path"] == _digest(path)
        assert bitexact.wrap(requests.Session()).get(base + path).json()[":path"] == _digest(path)
    assert [call["data"]["request"]["url"] for call in http_calls(r.run_id)] == \
        [f"{base}/echo?a=1;token=%5Bredacted%5D;page=2"] * 2
    assert "T0K" not in str(http_calls(r.run_id))


def test_a_token_the_client_encoded_is_redacted_whole_when_a_header_carries_its_url(base: str) -> None:
    """httpx and requests percent-encode "," and ";" in a parameter's value (``%2C``, ``%3B``), so the raw ","
    or ";" that ends a credential in a header's URL is never one of a token they sent."""
    params = {"token": "T0KC,x;y", "page": "2"}
    for client in (httpx.Client(), requests.Session()):
        with bitexact.run() as r:
            sent = bitexact.wrap(client).get(f"{base}/echo", params=params)
            callback = f"{sent.url};v=1"  # the URL the client sent, carried in a header of the agent's
            bitexact.wrap(client).get(f"{base}/echo", headers={"x-callback-url": callback})
        recorded = [call["data"] for call in http_calls(r.run_id)]
        assert recorded[0]["request"]["url"] == f"{base}/echo?token=%5Bredacted%5D&page=2"
        assert recorded[1]["request"]["headers"]["x-callback-url"] == f"{base}/echo?token=%5Bredacted%5D&page=2;v=1"
        assert "T0K" not in str(recorded)


def test_under_the_shipped_policy_the_bytes_after_a_credential_are_kept(base: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped detectors find nothing more in what the URL rule records: the CSP keeps ``;default-src``."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    with bitexact.run() as r:
        bitexact.wrap(httpx.Client()).get(f"{base}/h?i=0")
        bitexact.wrap(requests.Session()).get(f"{base}/h?i=0")
    assert [headers["content-security-policy"] for headers in _recorded(r.run_id, "response")] == [ALL[0][2]] * 2
    assert "T0K" not in str(http_calls(r.run_id))
