"""Session 21: an absolute URL in any header's value is recorded by the URL rule, not only in the listed ones.

Sessions 19 and 20 read ``Location``, ``Content-Location``, ``Referer``, ``Link`` and ``Refresh`` by the rule; a
URL in any other header was recorded as sent: a CSP's ``report-uri https://r/x?token=T`` and its source list,
``Report-To``'s and ``NEL``'s JSON, ``Reporting-Endpoints``, ``SourceMap``, user info in an ``Origin`` or an
``Access-Control-Allow-Origin``, and a URL the agent sends in a header of its own. With the capture policy off
(these tests' default) every one kept its token; under the shipped policy a ``key=`` value the detectors take
for ordinary evidence did, and the rest were recorded ``[CREDENTIAL]``, not as the URL rule records a URL.
Values holding ``://`` and no credential are left byte for byte. Real servers on loopback, httpx and requests.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

import bitexact
from sdk.conftest import http_calls
from sdk.header_exchanges import request_header, response_header
from sdk.servers import header_cases_handler, serve_seen

# (header, value sent, value recorded): response headers.
RESPONSE_CASES = [
    ("content-security-policy", "default-src 'self' https://cdn.example/lib.js?sig=T0K1; report-uri https://r.example/x?token=T0K2",
     "default-src 'self' https://cdn.example/lib.js?sig=%5Bredacted%5D; report-uri https://r.example/x?token=%5Bredacted%5D"),
    ("content-security-policy-report-only", "report-uri https://r.example/x?api_key=T0K3;",
     "report-uri https://r.example/x?api_key=%5Bredacted%5D;"),
    ("report-to", '{"group":"g","max_age":1,"endpoints":[{"url":"https://r.example/rep?page=2&token=T0K4"}]}',
     '{"group":"g","max_age":1,"endpoints":[{"url":"https://r.example/rep?page=2&token=%5Bredacted%5D"}]}'),
    ("report-to", '{"endpoints":[{"url":"https:\\/\\/u:T0K5@r.example\\/rep?key=T0K6"}]}',  # PHP's escaped slashes
     '{"endpoints":[{"url":"https:\\/\\/%5Bredacted%5D@r.example\\/rep?key=%5Bredacted%5D"}]}'),
    ("reporting-endpoints", 'default="https://r.example/rep?access_token=T0K7", csp=https://r.example/c?key=T0K8',
     'default="https://r.example/rep?access_token=%5Bredacted%5D", csp=https://r.example/c?key=%5Bredacted%5D'),
    ("nel", '{"report_to":"g","max_age":1,"failure_url":"https://r.example/f?key=T0K9"}',
     '{"report_to":"g","max_age":1,"failure_url":"https://r.example/f?key=%5Bredacted%5D"}'),
    ("sourcemap", "https://cdn.example/app.js.map?token=T0KA", "https://cdn.example/app.js.map?token=%5Bredacted%5D"),
    ("x-sourcemap", "https://cdn.example/app.js.map?key=T0KB", "https://cdn.example/app.js.map?key=%5Bredacted%5D"),
    ("access-control-allow-origin", "https://u:T0KC@a.example", "https://%5Bredacted%5D@a.example"),
    ("x-mirrors", "https://a.example/?token=T0KF,https://b.example/?q=1;http://c.example/?sig=T0KG",  # no blanks
     "https://a.example/?token=%5Bredacted%5D,https://b.example/?q=1;http://c.example/?sig=%5Bredacted%5D"),
]
# Values holding "://" with no credential: recorded exactly as sent.
LOOK_ALIKES = [
    ("content-security-policy", "default-src 'self' https://cdn.example/x.js?v=2&page=1; report-uri https://r.example/x,"),
    ("report-to", '{"endpoints":[{"url":"https:\\/\\/r.example\\/rep?keys=1&%E2%84%AAey=k"}]}'),
    ("access-control-allow-origin", "https://a.example"),
    ("x-note", "see (https://a.example/@bob?q=a%20b+c&tokens=1#token=x). ok"),
    ("x-powered-by", "crawler/1.0 (+http://www.example.com/bot.html)"),
]
# (header, value the agent sends, value recorded): request headers.
REQUEST_CASES = [
    ("origin", "https://u:T0KD@a.example", "https://%5Bredacted%5D@a.example"),
    ("x-callback-url", "https://cb.example/hook?id=7&key=T0KE#f", "https://cb.example/hook?id=7&key=%5Bredacted%5D#f"),
    ("x-origin-note", "https://a.example/p?q=1", "https://a.example/p?q=1"),
]
ALL = RESPONSE_CASES + [(name, sent, sent) for name, sent in LOOK_ALIKES]


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serve_seen(header_cases_handler(ALL)) as (url, _seen):
        yield url


def _recorded(run_id: str | None, side: str) -> list[dict[str, str]]:
    return [call["data"][side]["headers"] for call in http_calls(run_id)]


@pytest.mark.parametrize("index", range(len(ALL)))
def test_a_url_in_any_response_header_is_recorded_by_the_url_rule(base: str, index: int) -> None:
    name, sent, recorded = ALL[index]
    got = response_header(base, index, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


@pytest.mark.parametrize(("name", "sent", "recorded"), REQUEST_CASES)
def test_a_url_in_a_request_header_is_recorded_by_the_url_rule(base: str, name: str, sent: str,
                                                                recorded: str) -> None:
    got = request_header(base, name, sent)
    assert got.values == [recorded] * 2
    assert "T0K" not in got.stored


def test_under_the_shipped_policy_the_url_rule_records_a_short_key(base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped detectors leave a short ``key=`` value (ordinary evidence under a bare ``key``); the URL
    rule, which the vectors give ``key`` to, records it ``%5Bredacted%5D`` as it does in the request URL."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    index = next(i for i, case in enumerate(ALL) if case[0] == "nel")
    with bitexact.run() as r:
        bitexact.wrap(httpx.Client()).get(f"{base}/h?i={index}")
    assert [headers["nel"] for headers in _recorded(r.run_id, "response")] == [ALL[index][2]]
