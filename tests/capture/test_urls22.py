"""Session 22: the URL rule's edges in header values and queries (``bitexact.capture.urls``).

Before: a URL inside another header's value ran on through "," and ";" unless the next URL followed at once, so
a credential's redaction took the header's own bytes after it (``report-uri https://r/x?token=T;default-src
'self'`` lost ``;default-src``), and a URL after a list member's name (``a=https://h/x,b=https://u:p@h2/y``) or
inside another URL's query (``?next=https://h2/cb?token=T``) was read as the first URL's bytes, keeping its user
info and token. A network-path reference (``//u:p@host/x``) in such a value was not read at all, and the rule
split a query only on "&", so ``?a=1;token=T`` kept the token (in a request URL and a ``Location`` too).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.capture.urls import redact_headers, redact_query, redact_url

# The project's copy of the protocol vectors: a fresh clone has no seeds beside it.
VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "sdk" / "protocol-vectors.json").read_text())


def _header(value: str, name: str = "x-any") -> str:
    return redact_headers({name: value})[name]


# (header, value sent, value recorded): a credential's value ends where the header's grammar ends it.
HEADER_GRAMMAR = [
    ("content-security-policy", "report-uri https://r/x?token=T0K1;default-src 'self'",
     "report-uri https://r/x?token=%5Bredacted%5D;default-src 'self'"),
    ("x-list", "a=https://h/x?token=T0K3,b=https://h/y", "a=https://h/x?token=%5Bredacted%5D,b=https://h/y"),
    ("x-list", "https://h/x?page=2&key=T0K4,b;c=1", "https://h/x?page=2&key=%5Bredacted%5D,b;c=1"),
    ("report-to", '{"url":"https:\\/\\/r\\/x?key=T0K5;v=1"}', '{"url":"https:\\/\\/r\\/x?key=%5Bredacted%5D;v=1"}'),
    # Each piece after a "," or ";" is still read as a parameter: a credential there is redacted too.
    ("x-list", "https://h/x?a=1,token=T0K6;page=2", "https://h/x?a=1,token=%5Bredacted%5D;page=2"),
]
# A URL after a list member's name, inside another URL's query, path or fragment: read on its own.
SECOND_URL = [
    ("x-list", "a=https://h/x,b=https://u:T0K1@h2/y", "a=https://h/x,b=https://%5Bredacted%5D@h2/y"),
    ("x-list", "a=https://h/x?q=1,b=https://h2/y?token=T0K2", "a=https://h/x?q=1,b=https://h2/y?token=%5Bredacted%5D"),
    ("x-list", "a=https://h/x?q=1;b=https://h2/y?token=T0K3", "a=https://h/x?q=1;b=https://h2/y?token=%5Bredacted%5D"),
    ("x-callback-url", "https://h/login?next=https://h2/cb?token=T0K4",
     "https://h/login?next=https://h2/cb?token=%5Bredacted%5D"),
    ("x-archived", "https://web.archive.example/web/2020/https://u:T0K5@h2/y",
     "https://web.archive.example/web/2020/https://%5Bredacted%5D@h2/y"),
    ("x-callback-url", "https://h/x#https://h2/?token=T0K6", "https://h/x#https://h2/?token=%5Bredacted%5D"),
]
# Network-path references where a URL reference is expected.
NETWORK_PATH = [
    ("x-mirror", "//user:T0K1@host/x", "//%5Bredacted%5D@host/x"),
    ("x-list", "a=//host/x?token=T0K2", "a=//host/x?token=%5Bredacted%5D"),
    ("x-note", 'see "//host/x?sig=T0K4" and (//host/y?sig=T0K5)',
     'see "//host/x?sig=%5Bredacted%5D" and (//host/y?sig=%5Bredacted%5D)'),
    ("report-to", '{"url":"\\/\\/u:T0K6@r\\/x?key=T0K7"}', '{"url":"\\/\\/%5Bredacted%5D@r\\/x?key=%5Bredacted%5D"}'),
    ("x-callback-url", "https://h/x?next=//h2/cb?token=T0K8", "https://h/x?next=//h2/cb?token=%5Bredacted%5D"),
]
# What the rule read right before this session and still reads the same (guards, passing on 0de516f too): a
# list cut right before its next URL, a URL that is a credential's value redacted whole with it, and a "//"
# after a "," inside a URL kept in that URL when what follows is a credential parameter.
GUARDS = [
    ("content-security-policy", "default-src https://c/x.js?sig=T0K2,https://c/y.js;img-src *",
     "default-src https://c/x.js?sig=%5Bredacted%5D,https://c/y.js;img-src *"),
    ("x-callback-url", "https://h/login?token=https://h2/cb?x=T0K7&page=2",
     "https://h/login?token=%5Bredacted%5D&page=2"),
    ("x-list", "https://h/a,//host/x?key=T0K3", "https://h/a,//host/x?key=%5Bredacted%5D"),
    ("x-list", "https://h/a,b/c?token=T0K8", "https://h/a,b/c?token=%5Bredacted%5D"),
    # A URL inside another's query leaves the later parameters the outer query's, and user info holding a ","
    # or ";" stays user info.
    ("x-callback-url", "https://h/x?next=https://h2/cb&token=T0K9",
     "https://h/x?next=https://h2/cb&token=%5Bredacted%5D"),
    ("x-callback-url", "https://h/x?a=1;next=https://h2/cb&key=T0KA",
     "https://h/x?a=1;next=https://h2/cb&key=%5Bredacted%5D"),
    ("x-mirror", "https://u;x:T0KB@h/?next=https://h2/", "https://%5Bredacted%5D@h/?next=https://h2/"),
]
# Look-alikes: recorded byte for byte.
LOOK_ALIKES = [
    ("x-note", "// note ?token=x"),
    ("x-note", "a//b?token=x"),
    ("x-note", "x // note, then //"),
    ("x-path", "/static//app.js?token=x"),
    ("x-fields", "https://h/x?fields=id,key,name;sort=key"),
    ("x-bare", "https://h/x?q=1;key"),
    ("x-percent", "https://h/x?token%3Dx=1&q=a%3Btoken%3Dx"),
    ("content-security-policy", "default-src 'self' https://c; report-uri https://r/x; img-src //cdn"),
    ("x-powered-by", "crawler/1.0 (+http://www.example.com/bot.html)"),
]


@pytest.mark.parametrize(("name", "sent", "recorded"), HEADER_GRAMMAR)
def test_a_credential_in_a_header_url_ends_where_the_headers_grammar_ends_it(name: str, sent: str,
                                                                             recorded: str) -> None:
    assert _header(sent, name) == recorded


@pytest.mark.parametrize(("name", "sent", "recorded"), SECOND_URL)
def test_a_url_after_a_member_name_or_inside_another_url_is_read_on_its_own(name: str, sent: str,
                                                                             recorded: str) -> None:
    assert _header(sent, name) == recorded
    assert "T0K" not in _header(sent, name)


@pytest.mark.parametrize(("name", "sent", "recorded"), NETWORK_PATH)
def test_a_network_path_reference_in_a_header_is_read_by_the_url_rule(name: str, sent: str, recorded: str) -> None:
    assert _header(sent, name) == recorded


@pytest.mark.parametrize(("name", "sent", "recorded"), GUARDS)
def test_what_was_read_before_is_read_the_same(name: str, sent: str, recorded: str) -> None:
    assert _header(sent, name) == recorded


@pytest.mark.parametrize(("name", "sent"), LOOK_ALIKES)
def test_look_alikes_are_recorded_byte_for_byte(name: str, sent: str) -> None:
    assert _header(sent, name) == sent
    assert redact_headers({name: sent.encode("latin-1")})[name] == sent.encode("latin-1")


# (URL sent, recorded): ";" separates query parameters too, in the URL rule itself.
SEMICOLON_QUERIES = [
    ("https://h/x?a=1;token=T0K1", "https://h/x?a=1;token=%5Bredacted%5D"),
    ("https://h/x?a=1;token=T0K2;page=2&key=T0K3;z", "https://h/x?a=1;token=%5Bredacted%5D;page=2&key=%5Bredacted%5D"),
    ("https://h/x?a;API_KEY=T0K4#top", "https://h/x?a;API_KEY=%5Bredacted%5D#top"),
    ("/v1/search?q=claims;api%5Fkey=T0K5", "/v1/search?q=claims;api%5Fkey=%5Bredacted%5D"),
]


@pytest.mark.parametrize(("sent", "recorded"), SEMICOLON_QUERIES)
def test_a_credential_after_a_semicolon_in_a_query_is_redacted(sent: str, recorded: str) -> None:
    assert redact_url(sent) == recorded
    assert redact_query(sent.partition("?")[2].partition("#")[0]) == recorded.partition("?")[2].partition("#")[0]
    assert _header(sent, "location") == recorded


def test_a_credentials_value_in_a_url_still_runs_to_the_next_ampersand() -> None:
    """In the URL rule a credential's value is what a server reading only "&" would read (``a;b``) and what
    one reading ";" would (``a``): no reading leaves a byte of it. A ";" piece with no "=" holds no value."""
    assert redact_url("https://h/x?token=T0K1;b,c&page=2") == "https://h/x?token=%5Bredacted%5D&page=2"
    assert redact_url("https://h/x?q=1;key&key") == "https://h/x?q=1;key&key=%5Bredacted%5D"
    assert redact_url("https://h/x?q=a%3Btoken%3DT") == "https://h/x?q=a%3Btoken%3DT"  # an encoded ";" is a value's


@pytest.mark.parametrize("row", VECTORS["credential_keys"]["recorded_urls"], ids=lambda row: row["name"])
def test_every_recorded_urls_row_is_unchanged_in_a_url_header_and_any_other(row: dict[str, str]) -> None:
    assert redact_url(row["url"]) == row["recorded"]
    assert _header(row["url"], "content-location") == row["recorded"]
    if "//" in row["url"]:  # read in any other header by the same rule
        assert _header(row["url"]) == row["recorded"]


def test_a_token_a_client_sent_encoded_is_redacted_whole_in_a_header() -> None:
    """httpx and requests percent-encode "," and ";" in a parameter's value, so a raw one in a header's URL is
    the header's separator; an encoded one is the token's and is redacted with it."""
    import httpx
    import requests

    params = {"token": "T0K1,b;c", "page": "2"}
    for url in (str(httpx.Request("GET", "https://h/x", params=params).url),
                requests.Request("GET", "https://h/x", params=params).prepare().url):
        assert url == "https://h/x?token=T0K1%2Cb%3Bc&page=2"
        assert _header(f"report-uri {url};default-src 'self'") == \
            "report-uri https://h/x?token=%5Bredacted%5D&page=2;default-src 'self'"
