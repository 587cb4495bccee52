"""Session 28: a URL percent-encoded in a path segment, in any other header's free text (``bitexact.capture.urls``).

On 530f8fa ``redact_url`` (the request URL, ``Location``, ``Link``, ``Refresh``) read a URL written inside a URL's
path, plain or percent-encoded (session 26), but any other header's value went through ``_redact_in_text``, which
read only the plain form (its ``//`` is an event): ``X-Original-URL: https://proxy/r/https%3A%2F%2Fu%3Ap%40h2%2Fx``
and ``X-Debug: fetched https://proxy/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT ok`` were recorded with the credential.
A URL so encoded outside any absolute URL (a relative ``X-Original-URL: /r/https%3A%2F%2Fu%3Ap%40h2%2Fx``, as IIS and
proxies write it) was not read at all: a value holding no ``//`` was returned as sent. Through the public
``redact_headers``; tests/sdk/test_http_header_paths28.py records them from a loopback server.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.capture.urls import redact_headers, redact_url

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "sdk" / "protocol-vectors.json").read_text())
R = "%5Bredacted%5D"

# (header, value sent, value recorded): each kept its T0K on 530f8fa.
LEAKS = [
    ("X-Original-URL", "https://proxy/r/https%3A%2F%2Fu%3AT0K1%40h2%2Fx", f"https://proxy/r/https%3A%2F%2F{R}%40h2%2Fx"),
    ("X-Debug", "fetched https://proxy/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0K2 ok",
     f"fetched https://proxy/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R} ok"),
    # lower-case escapes; encoded twice
    ("X-Original-URL", "https://proxy/r/https%3a%2f%2fu%3aT0K3%40h2%2fx", f"https://proxy/r/https%3a%2f%2f{R}%40h2%2fx"),
    ("X-Original-URL", "https://proxy/r/https%253A%252F%252Fu%253AT0K4%2540h2%252Fx",
     f"https://proxy/r/https%253A%252F%252F{R}%2540h2%252Fx"),
    # the outer URL's own query after it, read as before
    ("X-Original-URL", "https://proxy/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0K5?page=2&key=T0K6",
     f"https://proxy/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R}?page=2&key={R}"),
    # ":" or "@" sent raw, the slashes encoded; "://" encoded but for the slashes
    ("X-Original-URL", "https://proxy/r/https:%2F%2Fu:T0K7@h2/x", f"https://proxy/r/https:%2F%2F{R}@h2/x"),
    ("X-Original-URL", "https://proxy/r/https%3A//u%3AT0K8%40h2/x", f"https://proxy/r/https%3A//{R}%40h2/x"),
    # the header's grammar ends the path: a list's "," and a CSP's ";" keep what follows
    ("Reporting-Endpoints", "a=https://p/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0K9,b=https://h/y?q=1",
     f"a=https://p/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R},b=https://h/y?q=1"),
    ("Content-Security-Policy", "report-uri https://p/r/https%3A%2F%2Fu%3AT0KA%40h2%2F;default-src 'self'",
     f"report-uri https://p/r/https%3A%2F%2F{R}%40h2%2F;default-src 'self'"),
    # two in one value; a network-path reference; JSON's escaped slashes
    ("X-Mirrors", "https://p/r/https%3A%2F%2Fu%3AT0KB%40h2%2F, https://p/r/ftp%3A%2F%2Fv%3AT0KC%40h3%2F",
     f"https://p/r/https%3A%2F%2F{R}%40h2%2F, https://p/r/ftp%3A%2F%2F{R}%40h3%2F"),
    ("X-Mirror", "//proxy/r/https%3A%2F%2Fu%3AT0KD%40h2%2Fx", f"//proxy/r/https%3A%2F%2F{R}%40h2%2Fx"),
    ("Report-To", '{"url":"https:\\/\\/p\\/r\\/https%3A%2F%2Fu%3AT0KE%40h2%2Fx"}',
     f'{{"url":"https:\\/\\/p\\/r\\/https%3A%2F%2F{R}%40h2%2Fx"}}'),
    # after a path's bare "//", which starts no URL
    ("X-Original-URL", "https://proxy/a//b/https%3A%2F%2Fu%3AT0KF%40h2%2Fx", f"https://proxy/a//b/https%3A%2F%2F{R}%40h2%2Fx"),
    # after a URL written plain in the path, and before one
    ("X-Original-URL", "https://p/web/https://u:T0KG@h2/r/https%3A%2F%2Fv%3AT0KH%40h3%2F",
     f"https://p/web/https://{R}@h2/r/https%3A%2F%2F{R}%40h3%2F"),
    ("X-Original-URL", "https://p/r/https%3A%2F%2Fv%3AT0KI%40h3%2F/web/https://u:T0KJ@h2/",
     f"https://p/r/https%3A%2F%2F{R}%40h3%2F/web/https://{R}@h2/"),
    # a URL nested in a query value whose own path holds one, the outer query's next parameter its own (this one
    # was read on 530f8fa, by the reading of an encoded parameter's value: both readings now give the same span)
    ("X-Callback-Url", "https://a/?next=https://p/r/https%3A%2F%2Fh2%2Fcb%3Fkey%3DT0KK&page=2",
     f"https://a/?next=https://p/r/https%3A%2F%2Fh2%2Fcb%3Fkey%3D{R}&page=2"),
]
# (header, value sent, value recorded): a URL written percent-encoded outside any absolute URL - in a relative URL's
# path, as IIS and proxies write X-Original-URL, or standing alone in text - read to the end of its word.
OUTSIDE_URLS = [
    ("X-Original-URL", "/r/https%3A%2F%2Fu%3AT0KN%40h2%2Fx", f"/r/https%3A%2F%2F{R}%40h2%2Fx"),
    ("X-Original-URL", "/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0KO?page=2", f"/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R}?page=2"),
    ("X-Debug", "fetched /r/https%3A%2F%2Fu%3AT0KP%40h2%2Fx, then https://h/y?key=T0KQ",
     f"fetched /r/https%3A%2F%2F{R}%40h2%2Fx, then https://h/y?key={R}"),
    ("X-Debug", "next=https%253A%252F%252Fu%253AT0KR%2540h2 (twice encoded).",
     f"next=https%253A%252F%252F{R}%2540h2 (twice encoded)."),
    ("X-Debug", "see /r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0KS.", f"see /r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R}."),
]
# Recorded byte for byte: a "https%3A" with no "//" after it, a "%2F%2F" that starts no URL (no scheme, a scheme
# not opening with a letter), an "@" past the nested authority, a nested URL with no credential, one in a fragment
# (a fragment is kept, as redact_url keeps it), a "%2F%2F" in free text outside any URL.
LOOK_ALIKES = [
    "https://proxy/r/https%3Afoo%40bar",
    "https://proxy/r/https%3A%2Fx%3Ay%40z",
    "https://proxy/r/%2F%2Fu%3Ap%40h2",
    "https://proxy/r/1%3A%2F%2Fu%3Ap%40h2",
    "https://proxy/r/https%3A%2F%2Fh2%2Fusers%2F%40me",
    "https://proxy/r/https%3A%2F%2Fh2%2Fcb%3Fpage%3D2?q=a%40b",
    "https://proxy/x#/r/https%3A%2F%2Fu%3Ap%40h2",
    "a%2F%2Fu%3Ap%40b https://h/x%2F%2Fu%3Ap%40y?q=1",
    "https://proxy/r/https%3A%2F%2Fh2%2Fx%3Fq%3D1%26tokens%3D2, b",
    "/r/%2F%2Fu%3Ap%40h2", "/r/1%3A%2F%2Fu%3Ap%40h2", "/r/https%3Afoo%40bar", "100%25 done, 50%3A50",
    "attachment; filename*=UTF-8''a%3A%2F%2Fb.txt",
]


@pytest.mark.parametrize(("name", "sent", "recorded"), LEAKS)
def test_a_url_encoded_in_a_headers_path_is_recorded_by_the_url_rule(name: str, sent: str, recorded: str) -> None:
    assert redact_headers({name: sent}) == {name: recorded}
    assert redact_headers([(name.encode(), sent.encode())]) == [[name.encode(), recorded.encode()]]
    assert "T0K" not in recorded


@pytest.mark.parametrize(("name", "sent", "recorded"), [case for case in LEAKS[:7] if " " not in case[1]])
def test_the_same_url_is_recorded_alike_in_a_location(name: str, sent: str, recorded: str) -> None:
    """A header of the agent's own records the URL as ``Location`` (``redact_url``) does."""
    assert redact_headers({"Location": sent}) == {"Location": recorded}


@pytest.mark.parametrize(("name", "sent", "recorded"), OUTSIDE_URLS)
def test_a_url_encoded_outside_any_url_is_recorded_by_the_url_rule(name: str, sent: str, recorded: str) -> None:
    assert redact_headers({name: sent}) == {name: recorded}
    assert "T0K" not in recorded


@pytest.mark.parametrize("sent", LOOK_ALIKES)
def test_look_alikes_are_recorded_as_sent(sent: str) -> None:
    assert redact_headers({"X-Original-URL": sent}) == {"X-Original-URL": sent}


def test_a_long_path_of_encoded_urls_is_read_in_one_pass() -> None:
    """Many encoded URLs after one another in one header's paths, each redacted once, none crossing another: a
    value of 2,000 URLs records each user info where it stood."""
    one = "https://p/r/https%3A%2F%2Fu%3AT0KL%40h2%2Fx,"
    recorded = redact_headers({"X-Mirrors": one * 2000})["X-Mirrors"]
    assert recorded == f"https://p/r/https%3A%2F%2F{R}%40h2%2Fx," * 2000


def test_a_long_text_of_encoded_urls_is_read_in_one_pass() -> None:
    """2,000 relative URLs each holding an encoded one, in one value with no absolute URL: each redacted once."""
    recorded = redact_headers({"X-Debug": "/r/https%3A%2F%2Fu%3AT0KT%40h2%2Fx " * 2000})["X-Debug"]
    assert recorded == f"/r/https%3A%2F%2F{R}%40h2%2Fx " * 2000


def test_a_slash_that_is_the_next_urls_own_starts_no_path() -> None:
    """``https://h:https://...``: the first URL's authority (``h:https:``) ends at the next URL's "//". Read as a
    path, that URL's authority gave a replacement crossing its user info's (``@h2`` was lost from the record); the
    next URL's "//" is an event of its own, and the first URL has no path."""
    sent = "https://h:https://x%3A%2F%2Fu:T0KM@h2%40h3"
    assert redact_headers({"X-Mirror": sent}) == {"X-Mirror": f"https://h:https://{R}@h2%40h3"}


def test_every_recorded_urls_row_still_holds() -> None:
    rows = VECTORS["credential_keys"]["recorded_urls"]
    assert rows
    for row in rows:
        assert redact_url(row["url"]) == row["recorded"], row
