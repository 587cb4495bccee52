"""Session 25: a URL nested in a query parameter's value, in what a wrapped client records of the request URL and
of a redirect's ``Location`` (and a ``Link``'s target, a ``Refresh``'s URL).

On 6ae0a3d the URL rule read only the outer URL: a login's ``next=https://h2/cb?token=T``, the same URL as httpx
and requests send ``params={"next": ...}`` (percent-encoded: ``next=https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT``), its user
info, and ``?a=1?token=T`` were stored with the credential as sent. Real servers on loopback, httpx (sync) and
requests; the capture policy off (the SDK tests' default), so the URL rule alone decides, and once under the
shipped policy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import http_calls
from sdk.servers import HandlerBase, latin1_digest, serve_seen

R = "%5Bredacted%5D"
# (path and query the agent asks for, as recorded after the base URL): both clients send these bytes as written.
REQUEST_PATHS = [
    ("/echo?next=https://h2.example/cb?token=T0K1&page=2", f"/echo?next=https://h2.example/cb?token={R}&page=2"),
    ("/echo?next=https://u:T0K2@h2.example/cb", f"/echo?next=https://{R}@h2.example/cb"),
    ("/echo?next=https%3A%2F%2Fh2.example%2Fcb%3Ftoken%3DT0K3",
     f"/echo?next=https%3A%2F%2Fh2.example%2Fcb%3Ftoken%3D{R}"),
    ("/echo?a=1?token=T0K4", f"/echo?a=1?token={R}"),
    ("/echo?redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fstate%3Dxyz%26access_token%3DT0K5&client_id=c",
     f"/echo?redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fstate%3Dxyz%26access_token%3D{R}&client_id=c"),
]
# (response header, value sent, value recorded) on a 302.
REDIRECTS = [
    ("location", "https://sso.example/login?next=https://h2.example/cb?token=T0K6",
     f"https://sso.example/login?next=https://h2.example/cb?token={R}"),
    ("location", "/login?next=https%3A%2F%2Fu%3AT0K7%40h2.example%2Fcb%3Fsig%3DT0K8",
     f"/login?next=https%3A%2F%2F{R}%40h2.example%2Fcb%3Fsig%3D{R}"),
    ("location", "/cb?a=1?key=T0K9", f"/cb?a=1?key={R}"),
    ("link", '</x?next=%2Fcb%3Faccess_token%3DT0KA>; rel="next"', f'</x?next=%2Fcb%3Faccess_token%3D{R}>; rel="next"'),
    ("refresh", "0; url=/y?next=/cb?token=T0KB", f"0; url=/y?next=/cb?token={R}"),
]
# Recorded byte for byte: a second "?" before a name that is no credential's, an encoded nested URL holding none.
LOOK_ALIKES = [
    ("location", "/search?q=a?token_count=3"),
    ("location", "/login?next=https%3A%2F%2Fh2.example%2Fcb%3Fpage%3D2%26q%3Dx"),
    ("x-bar", "https://h.example/x?q=a?b"),
]
CASES = REDIRECTS + [(name, sent, sent) for name, sent in LOOK_ALIKES]


class _Handler(HandlerBase):
    """``/echo`` answers the SHA-256 of the path it got (what the server saw, kept out of the recorded body);
    ``/moved?i=N`` answers 302 with the header ``CASES[N]`` names."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if self.path.startswith("/echo"):
            self._send(200, json.dumps({":path": latin1_digest(self.path)}).encode(), "application/json")
            return
        name, sent = CASES[int(parse_qs(urlsplit(self.path).query)["i"][0])][:2]
        self._send(302, b"", "text/plain", {name: sent})


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(_Handler) as (url, _seen):
        yield url


def _clients() -> list[httpx.Client | requests.Session]:
    return [httpx.Client(), requests.Session()]


@pytest.mark.parametrize(("path", "recorded"), REQUEST_PATHS)
def test_a_url_nested_in_the_request_url_is_recorded_by_the_url_rule(base: str, path: str, recorded: str) -> None:
    with bitexact.run() as r:
        for client in _clients():  # the server gets the path as written; the record holds it redacted
            assert bitexact.wrap(client).get(base + path).json()[":path"] == latin1_digest(path)
    assert [call["data"]["request"]["url"] for call in http_calls(r.run_id)] == [base + recorded] * 2
    assert "T0K" not in str(http_calls(r.run_id))


def test_a_url_given_in_params_is_recorded_with_its_credentials_redacted_as_encoded(base: str) -> None:
    """httpx and requests percent-encode a ``params`` value whole, so the nested token arrives encoded once."""
    params = {"next": "https://u:T0K1@h2.example/cb?a=1&token=T0K2", "page": "2"}
    sent = "/echo?next=https%3A%2F%2Fu%3AT0K1%40h2.example%2Fcb%3Fa%3D1%26token%3DT0K2&page=2"
    with bitexact.run() as r:
        for client in _clients():
            assert bitexact.wrap(client).get(f"{base}/echo", params=params).json()[":path"] == latin1_digest(sent)
    assert [call["data"]["request"]["url"] for call in http_calls(r.run_id)] == \
        [f"{base}/echo?next=https%3A%2F%2F{R}%40h2.example%2Fcb%3Fa%3D1%26token%3D{R}&page=2"] * 2
    assert "T0K" not in str(http_calls(r.run_id))


@pytest.mark.parametrize("index", range(len(CASES)))
def test_a_url_nested_in_a_redirects_headers_is_recorded_by_the_url_rule(base: str, index: int) -> None:
    name, sent, recorded = CASES[index]
    with bitexact.run() as r:
        assert bitexact.wrap(httpx.Client()).get(f"{base}/moved?i={index}").headers[name] == sent  # the agent's
        assert bitexact.wrap(requests.Session()).get(f"{base}/moved?i={index}",
                                                     allow_redirects=False).headers[name] == sent
    calls = http_calls(r.run_id)
    assert [call["data"]["response"]["status"] for call in calls] == [302] * 2
    assert [call["data"]["response"]["headers"][name] for call in calls] == [recorded] * 2
    assert "T0K" not in str(calls)


def test_under_the_shipped_policy_the_url_rule_has_redacted_it_first(base: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped detectors leave ``%5Bredacted%5D`` as it is: the record reads as with the policy off."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    path, recorded = REQUEST_PATHS[2]
    with bitexact.run() as r:
        for client in _clients():
            bitexact.wrap(client).get(base + path)
        bitexact.wrap(httpx.Client()).get(f"{base}/moved?i=1")
    calls = http_calls(r.run_id)
    assert [call["data"]["request"]["url"] for call in calls[:2]] == [base + recorded] * 2
    assert calls[2]["data"]["response"]["headers"]["location"] == REDIRECTS[1][2]
    assert "T0K" not in str(calls)
