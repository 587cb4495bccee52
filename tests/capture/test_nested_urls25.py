"""Session 25: a URL nested in a query parameter's value is read by the URL rule (``bitexact.capture.urls``).

On 6ae0a3d ``redact_url`` (the request URL, ``Location``, each URL of a ``Link``, a ``Refresh``'s URL) read only the
outer URL: a login's ``next=https://h2/cb?token=T``, an OAuth ``redirect_uri`` carrying user info, the same URL
percent-encoded as httpx and requests send ``params={"next": ...}``, and ``?a=1?token=T`` were each recorded with the
credential in the clear. Any other header read a plain nested URL (session 22) but not a percent-encoded one.
Every ``recorded_urls`` row still gives what it gives (tests/capture/test_urls22.py, test_vectors.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from bitexact.capture.urls import redact_headers, redact_query, redact_url

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "sdk" / "protocol-vectors.json").read_text())
R = "%5Bredacted%5D"


def _header(value: str, name: str) -> str:
    return redact_headers({name: value})[name]


# (URL sent, recorded): each kept its credential on 6ae0a3d.
NESTED = [
    # the brief's rows
    ("https://h/x?next=https://h2/cb?token=T0K1", f"https://h/x?next=https://h2/cb?token={R}"),
    ("https://h/x?next=https://u:T0K2@h2/cb", f"https://h/x?next=https://{R}@h2/cb"),
    ("https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0K3", f"https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R}"),
    ("https://h/x?a=1?token=T0K4", f"https://h/x?a=1?token={R}"),
    # encoded user info, an encoded "&" inside the nested query, lower-case escapes, the outer query going on
    ("https://h/x?next=https%3A%2F%2Fu%3AT0K5%40h2%2Fcb", f"https://h/x?next=https%3A%2F%2F{R}%40h2%2Fcb"),
    ("https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Fa%3D1%26token%3DT0K6&page=2",
     f"https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Fa%3D1%26token%3D{R}&page=2"),
    ("https://h/x?next=https%3a%2f%2fh2%2fcb%3fsig%3dT0K7", f"https://h/x?next=https%3a%2f%2fh2%2fcb%3fsig%3d{R}"),
    # a relative URL, plain and encoded; a network-path reference; only the "?" encoded
    ("/login?next=/cb?key=T0K8&q=1", f"/login?next=/cb?key={R}&q=1"),
    ("https://h/x?next=%2Fcb%3Ftoken%3DT0K9", f"https://h/x?next=%2Fcb%3Ftoken%3D{R}"),
    ("https://h/x?next=//u:T0KA@h2/", f"https://h/x?next=//{R}@h2/"),
    ("https://h/x?next=https://h2/cb%3Ftoken%3DT0KB", f"https://h/x?next=https://h2/cb%3Ftoken%3D{R}"),
    # a plain nested URL whose own value is encoded: the outer server decodes "%26" into the nested query's "&"
    ("https://h/x?next=https://h2/cb?q=a%26token%3DT0KC", f"https://h/x?next=https://h2/cb?q=a%26token%3D{R}"),
    # a name encoded in the nested URL, decoded by the nested URL's server
    ("https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Fapi%255Fkey%3DT0KD",
     f"https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Fapi%255Fkey%3D{R}"),
    # a URL nested in a nested URL, and after a ";" parameter
    ("https://h/x?next=https%3A%2F%2Fh2%2Fa%3Fnext%3Dhttps%253A%252F%252Fh3%252Fb%253Ftoken%253DT0KE",
     f"https://h/x?next=https%3A%2F%2Fh2%2Fa%3Fnext%3Dhttps%253A%252F%252Fh3%252Fb%253Ftoken%253D{R}"),
    ("https://h/x?a=1;next=https://u:T0KF@h2/", f"https://h/x?a=1;next=https://{R}@h2/"),
    # the fragment stays the outer URL's, kept as sent
    ("https://h/x?next=https://h2/cb?token=T0KG#top", f"https://h/x?next=https://h2/cb?token={R}#top"),
    # doubly encoded: decoded again, the replacement written at the value's own level
    ("https://h/x?next=https%253A%252F%252Fh2%252Fcb%253Ftoken%253DT0KH",
     f"https://h/x?next=https%253A%252F%252Fh2%252Fcb%253Ftoken%253D{R}"),
]
# Recorded byte for byte: no credential in what the rule reads, or a name that is not a credential's.
LOOK_ALIKES = [
    "https://h/x?q=a?token_count=3",
    "https://h/x?q=a?b",
    "https://h/x?q=what?&key_id=3",
    "https://h/x?q=a%26token%3DT",  # an encoded "&" in a value that is no URL is the value's
    "https://h/x?q=a%3Btoken%3DT",
    "https://h/x?next=https%3A%2F%2Fh2%2Fcb%3F%E2%84%AAey%3D1",  # a Kelvin sign, not a "k"
    "https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Fpage%3D2%26q%3Dclaims",
    "https://h/x?next=https://h2/cb?page=2&q=x",
    "https://h/x?q=100%25&r=%zz&s=%",
    "https://h/x?email=ann@example.com&next=/cb",
    # a credential's name with no value after a second "?" holds nothing: nothing is added (in any header too)
    "https://h/x?q=a?token",
    "https://h/x?a?token&b=2",
    "https://h/x?next=%2Fcb%3Ftoken",
]
# A credential's name with no value in a URL nested in a request URL or a Location holds nothing and is given no
# value. (Any other header gives one after a nested URL's first "?", as after any URL's there: its grammar cannot
# tell a URL nested in a query from the next URL of a list, ``a=https://h/x?q=1,b=https://h2/y?token``.)
NESTED_BARE = ["https://h/x?next=https://h2/cb?token", "https://h/x?next=https%3A%2F%2Fh2%2Fcb%3Fa%3D1%26token"]


@pytest.mark.parametrize(("sent", "recorded"), NESTED)
def test_a_url_nested_in_a_query_value_is_read_by_the_url_rule(sent: str, recorded: str) -> None:
    assert redact_url(sent) == recorded
    assert "T0K" not in redact_url(sent)
    # in a Location, a Link's target and a Refresh's URL, by the same rule
    assert _header(sent, "location") == recorded
    assert _header(f'<{sent}>; rel="next"', "link") == f'<{recorded}>; rel="next"'
    assert _header(f"0; url={sent}", "refresh") == f"0; url={recorded}"


@pytest.mark.parametrize(("sent", "recorded"), NESTED)
def test_the_query_alone_is_redacted_the_same(sent: str, recorded: str) -> None:
    """What the recording proxy is sent (``redact_query``) holds the same nested URLs."""
    query, recorded_query = sent.partition("?")[2].partition("#")[0], recorded.partition("?")[2].partition("#")[0]
    assert redact_query(query) == recorded_query


@pytest.mark.parametrize("sent", LOOK_ALIKES)
def test_look_alikes_are_recorded_byte_for_byte(sent: str) -> None:
    assert redact_url(sent) == sent
    assert _header(sent, "location") == sent
    assert _header(sent, "x-callback-url") == sent


@pytest.mark.parametrize("sent", NESTED_BARE)
def test_a_bare_credential_name_in_a_nested_url_is_given_no_value(sent: str) -> None:
    assert redact_url(sent) == sent
    assert _header(sent, "location") == sent


def test_what_httpx_and_requests_send_for_a_nested_url_in_params_is_redacted() -> None:
    """Both clients percent-encode a parameter's value whole (``:``, ``/``, ``?``, ``=``, ``&``, ``@``): the nested
    credential arrives encoded once, and is redacted where it stands."""
    import httpx
    import requests

    nested = "https://u:T0K1@h2/cb?a=1&token=T0K2"
    expected = f"https://h/x?next=https%3A%2F%2F{R}%40h2%2Fcb%3Fa%3D1%26token%3D{R}&page=2"
    for url in (str(httpx.Request("GET", "https://h/x", params={"next": nested, "page": "2"}).url),
                requests.Request("GET", "https://h/x", params={"next": nested, "page": "2"}).prepare().url):
        assert url == "https://h/x?next=https%3A%2F%2Fu%3AT0K1%40h2%2Fcb%3Fa%3D1%26token%3DT0K2&page=2"
        assert redact_url(url) == expected


def test_an_encoded_nested_url_in_any_other_header_is_read_too() -> None:
    """Session 22 read a plain nested URL in any other header; an encoded one is read by the same rule now."""
    sent = "https://h/login?next=https%3A%2F%2Fu%3AT0K1%40h2%2Fcb%3Ftoken%3DT0K2,b=https://h3/"
    assert _header(sent, "x-callback-url") == \
        f"https://h/login?next=https%3A%2F%2F{R}%40h2%2Fcb%3Ftoken%3D{R},b=https://h3/"
    assert _header("report-uri https://r/x?next=%2Fcb%3Fkey%3DT0K3;default-src 'self'", "content-security-policy") \
        == f"report-uri https://r/x?next=%2Fcb%3Fkey%3D{R};default-src 'self'"
    # a plain one as session 22 read it, the encoded "?" after it read as well
    assert _header("https://h/x?next=https://u:T0K4@h2/cb%3Ftoken%3DT0K5", "x-callback-url") == \
        f"https://h/x?next=https://{R}@h2/cb%3Ftoken%3D{R}"


def test_nesting_is_followed_eight_levels_then_the_value_is_redacted_whole() -> None:
    """Eight URLs nested in the request URL are read; the ninth, which would be read further, is recorded
    ``%5Bredacted%5D`` whole, so no chain hides a token past the bound (10,000 deep included)."""
    eight = "https://h/x" + "?next=https://h/x" * 8
    assert redact_url(eight + "?token=T0K1") == f"{eight}?token={R}"
    assert redact_url(eight + "?page=2") == eight + "?page=2"
    assert redact_url(eight + "?next=https://h/x?page=2") == f"{eight}?next={R}"
    assert redact_url("https://h/x" + "?next=https://h/x" * 10_000 + "?token=T0K2") == f"{eight}?next={R}"
    # percent-encodings are levels too: "%253F" decodes to "%3F", then to "?"
    assert redact_url("https://h/x?q=" + "%253F" * 10_000 + "token%253DT0K3") == \
        "https://h/x?q=" + "%253F" * 10_000 + f"token%253D{R}"


def test_a_question_mark_in_a_name_starts_a_parameter() -> None:
    """``?a?token=T``: a server reads a parameter named ``a?token``; the rule reads ``token`` (a name with no
    value after such a "?" is given none)."""
    assert redact_url("https://h/x?a?token=T0K1&b=2") == f"https://h/x?a?token={R}&b=2"
    assert redact_url("https://h/x??key=T0K2") == f"https://h/x??key={R}"
    assert redact_url("https://h/x?a?token&b=2") == "https://h/x?a?token&b=2"
    assert redact_url("https://h/x?a%3Ftoken=1") == "https://h/x?a%3Ftoken=1"  # an encoded "?" is the name's


@pytest.mark.parametrize("row", VECTORS["credential_keys"]["recorded_urls"], ids=lambda row: row["name"])
def test_every_recorded_urls_row_gives_what_it_gives_and_the_same_once_nested_encoded(row: dict[str, str]) -> None:
    """Each row gives what it gives; sent percent-encoded as a ``next`` value (as httpx and requests send it), the
    row's URL is recorded as its recorded form encoded, ``[redacted]`` written ``%5Bredacted%5D`` - but for the
    bare ``token``, which holds nothing there and is given no value."""
    assert redact_url(row["url"]) == row["recorded"]
    nested = row["url"] if row["name"] == "a credential with no value" else row["recorded"].replace(R, "[redacted]")
    assert redact_url("https://h/x?next=" + quote(row["url"], safe="")) == "https://h/x?next=" + quote(nested, safe="")
