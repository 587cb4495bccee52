"""Session 30: a relative URL in a header whose name says it holds a URL, and two overlaps of the header readings.

1. On e0fcbf8 a header the URL rule read as free text (any name but ``Location``, ``Content-Location``, ``Referer``,
   ``Link``, ``Refresh``) had a URL read only from a scheme's ``://`` or a ``//``, so a relative request target in a
   proxy's ``X-Original-URL: /cb?token=T0ken123`` was stored as sent, while ``Location: /cb?token=T0ken123`` was
   recorded ``/cb?token=%5Bredacted%5D``. A header whose lower-cased name ends in ``-url`` or ``-uri``, or is one of
   ``URL_NAMED_HEADERS``, now has a value that is one URL (no blank, quote, angle bracket or ``,``) read both as one
   URL by ``redact_url`` and as free text, as before: what either reading redacts is redacted.
2. In a query, the free-text reading took a nested URL's user info to the last ``@`` before its authority ended, past
   the query's ``&``, so beside the decoded reading of the same value (``_encoded_value_spans``) two spans from one
   start were merged, and the next parameter's bytes were lost with the password. And ``_path_spans`` (and a
   ``//``'s scheme in free text) took the ``F`` of a preceding ``%2F`` for a scheme's first letter, so a look-alike
   with no scheme (``%2F1%3A%2F%2Fu%3Ap%40h2``, a digit first) was read as a URL and changed.

Through the public ``redact_headers`` and ``redact_url``; tests/sdk/test_http_header_urls30.py records item 1 from a
loopback server with the capture policy off.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.capture.urls import URL_NAMED_HEADERS, redact_headers, redact_url

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "sdk" / "protocol-vectors.json").read_text())
ROWS = VECTORS["credential_keys"]["recorded_urls"]
R = "%5Bredacted%5D"


def _header(name: str, value: str) -> str:
    return str(redact_headers({name: value})[name])


# (header, value sent, value recorded): each was stored as sent on e0fcbf8.
RELATIVE = [
    ("X-Original-URL", "/cb?token=T0ken123", f"/cb?token={R}"),
    ("X-Original-URL", "/cb?access_token=T0ken123&x=1", f"/cb?access_token={R}&x=1"),
    ("X-Rewrite-URL", "/v1/search?q=claims&API_KEY=T0K1", f"/v1/search?q=claims&API_KEY={R}"),
    ("X-Forwarded-Uri", "/v1/files?token=T0K2&sig=T0K3&page=2", f"/v1/files?token={R}&sig={R}&page=2"),
    ("X-Original-URI", "/cb?api%5Fkey=T0K4", f"/cb?api%5Fkey={R}"),
    ("X-Envoy-Original-Path", "/cb?key=T0K5&q=1", f"/cb?key={R}&q=1"),
    ("X-Forwarded-Prefix", "/app?token=T0K6", f"/app?token={R}"),
    ("X-Accel-Redirect", "/protected/f?sig=T0K7", f"/protected/f?sig={R}"),
    ("X-Callback-Url", "/cb?a=1;token=T0K8", f"/cb?a=1;token={R}"),
    ("x-original-url", "cb?next=/r?token=T0K9", f"cb?next=/r?token={R}"),  # a "?" in a value, a name's case
    ("X-ORIGINAL-URL", "/cb?token", f"/cb?token={R}"),  # a credential with no value is given one, as in Location
]


@pytest.mark.parametrize(("name", "sent", "recorded"), RELATIVE)
def test_a_relative_url_in_a_url_named_header_is_recorded_as_a_location_is(name: str, sent: str,
                                                                            recorded: str) -> None:
    assert _header(name, sent) == recorded
    assert _header("Location", sent) == recorded  # the contract's rule, for the same URL
    # as bytes (Latin-1, as it went on the wire), and as a list of pairs
    assert redact_headers([(name.encode(), sent.encode("latin-1"))]) == [[name.encode(), recorded.encode("latin-1")]]


def test_the_blanks_around_a_url_named_headers_value_are_kept() -> None:
    """(A ``Location``'s URL rule reads a trailing blank as part of the token's value.)"""
    assert _header("X-Original-URL", " /cb?token=T0KA\t") == f" /cb?token={R}\t"


def test_the_named_list_is_what_the_docs_name() -> None:
    assert sorted(URL_NAMED_HEADERS) == ["destination", "x-accel-redirect", "x-envoy-original-path",
                                        "x-forwarded-path", "x-forwarded-prefix", "x-original-path"]
    for name in URL_NAMED_HEADERS:
        assert _header(name, "/p?token=T") == f"/p?token={R}"


@pytest.mark.parametrize("row", ROWS, ids=[row["name"] for row in ROWS])
def test_every_recorded_urls_row_holds_in_a_url_named_header(row: dict[str, str]) -> None:
    """The contract's rows, absolute and relative, give what they give in a ``Location``: both readings agree."""
    assert redact_url(row["url"]) == row["recorded"]
    for name in ("X-Original-URL", "X-Forwarded-Uri", "X-Envoy-Original-Path", "Location"):
        assert _header(name, row["url"]) == row["recorded"]


# (value, value recorded) in an X-Original-URL: the free-text reading's redactions are kept beside the URL rule's.
BOTH_READINGS = [
    # a URL in the fragment, which redact_url keeps as a fragment's bytes, free text reads
    ("https://h/x#https://u:T0KB@h2/", f"https://h/x#https://{R}@h2/"),
    # a credential's value holding a ";": redact_url runs it to the "&" (free text kept ";b" as a parameter's)
    ("/cb?token=T0KC;T0KD&x=1", f"/cb?token={R}&x=1"),
    # a nested URL's user info and a relative URL's own query, in one value
    ("/cb?token=T0KE&next=https://u:T0KF@h2/x", f"/cb?token={R}&next=https://{R}@h2/x"),
    # a URL percent-encoded in a relative URL's path (session 28), and the query after it
    ("/r/https%3A%2F%2Fu%3AT0KG%40h2%2Fx?key=T0KH", f"/r/https%3A%2F%2F{R}%40h2%2Fx?key={R}"),
    # the readings overlap: free text reads "u:T0KI%3Fkey=T0KJ" as user info, redact_url a "key" whose value is
    # "T0KJ@h" (in the URL written in the path, decoded). Each reads the value as sent, and their spans are merged:
    # read one after the other, the second read the first's output, with no "@" left in it, and kept T0KI
    ("/r/https://u:T0KI%3Fkey=T0KJ@h", f"/r/https://{R}"),
    ("/cb?next=https://u:T0KK&key=T0KL@h/", f"/cb?next=https://{R}"),
]


@pytest.mark.parametrize(("sent", "recorded"), BOTH_READINGS)
def test_a_url_named_headers_value_is_read_both_ways(sent: str, recorded: str) -> None:
    assert _header("X-Original-URL", sent) == recorded
    assert "T0K" not in recorded


# (header, value): kept byte for byte, as on e0fcbf8.
KEPT = [
    # look-alikes in a URL-named header: no credential parameter, no user info
    ("X-Original-URL", "/cb?tokens=T&q=token&page=2"),
    ("X-Original-URL", "/search?q=a%20b+c%2Fd&page=%32#top"),
    ("X-Original-URL", "/search?%E2%84%AAey=k"),  # a Kelvin sign names another parameter
    ("X-Original-URL", "/p//u:p@h/x"),  # a path's bare "//" starts no URL
    ("X-Forwarded-Prefix", "/api"),
    ("X-Original-URL", ""),
    # a name that does not end in "-url" or "-uri" nor is listed: free text, which reads no relative URL's query
    ("X-Debug", "/cb?token=T"),
    ("X-Curl", "/cb?token=T"),
    ("X-Url-Map", "/cb?token=T"),
    # a value that is not one URL (a blank, a quote, a list's ","): free text, as any other header's
    ("X-Original-URL", "fetched /cb?token=T ok"),
    ("X-Original-URL", '"/cb?token=T"'),
    ("X-Original-URL", "/cb?token=T,/other"),
]


@pytest.mark.parametrize(("name", "sent"), KEPT)
def test_what_is_no_url_or_not_one_url_is_kept_as_sent(name: str, sent: str) -> None:
    assert _header(name, sent) == sent


def test_a_list_in_a_url_named_header_keeps_its_members() -> None:
    """A "," makes the value a list, read by the header's grammar: a credential's value ends at the ",", and the next
    member is kept (``redact_url`` would run the value to the next "&" and take ``,b=https://h3/`` with it)."""
    sent = "https://h/login?next=https%3A%2F%2Fu%3AT0K1%40h2%2Fcb%3Ftoken%3DT0K2,b=https://h3/"
    assert _header("X-Callback-Url", sent) == _header("X-Debug", sent) == \
        f"https://h/login?next=https%3A%2F%2F{R}%40h2%2Fcb%3Ftoken%3D{R},b=https://h3/"


# Item 2: (header value, recorded). On e0fcbf8 the free-text reading took the user info past the query's "&" (or a
# list's ","): "https://a/?next=https://%5Bredacted%5D@b/" lost "@h%2F&x=a", a host and the next parameter.
USER_INFO_IN_A_QUERY = [
    ("https://a/?next=https://u:T0K1@h%2F&x=a@b/", f"https://a/?next=https://{R}@h%2F&x=a@b/"),
    ("https://a/?next=https://u%3AT0K2%40h&x=a@b/", f"https://a/?next=https://{R}%40h&x=a@b/"),
    ("https://a/?next=https://u:T0K3@h&x=a@b/", f"https://a/?next=https://{R}@h&x=a@b/"),
    ("https://a/?next=//u:T0K4@h%2F;x=a@b/", f"https://a/?next=//{R}@h%2F;x=a@b/"),
    ("a=https://h/x?next=//u:T0K5@h%2F,b=c@d", f"a=https://h/x?next=//{R}@h%2F,b=c@d"),
]


@pytest.mark.parametrize(("sent", "recorded"), USER_INFO_IN_A_QUERY)
def test_a_nested_urls_user_info_ends_with_its_parameter(sent: str, recorded: str) -> None:
    assert _header("X-Debug", sent) == recorded
    if "," not in sent and ";" not in sent:  # the request URL's rule reads the same user info (its "&" ends it too)
        assert redact_url(sent) == recorded


def test_a_password_holding_a_raw_separator_is_still_redacted_whole() -> None:
    """With no "@" before the parameter's end (raw or encoded), the user info runs to the last "@" before the
    authority ends, as before: a password written by hand with a raw "&", "," or ";" is not kept in part."""
    for separator in "&,;":
        sent = f"https://a/?next=https://u:T0K{separator}T0K@h/x"
        assert _header("X-Debug", sent) == f"https://a/?next=https://{R}@h/x"


# Item 2: look-alikes whose scheme would begin with an escape's hex digit; each was changed on e0fcbf8.
ESCAPE_BEFORE_A_SCHEME = [
    "https://h/r/%2F1%3A%2F%2Fu%3Ap%40h2%2Fx",  # "/1://u:p@h2/x": a digit first, no scheme
    "https://h/r/%2F%3A%2F%2Fu%3Ap%40h2%2Fx",  # "/://u:p@h2/x": no scheme at all
    "https://h/r/%252F1%253A%252F%252Fu%253Ap%2540h2",  # the same encoded twice
    "https://h/r/%2F1://u:p@h2/x",  # the ":" and slashes sent raw
    "/r/%2F1%3A%2F%2Fu%3Ap%40h2%2Fx",  # in a relative URL's path
]


@pytest.mark.parametrize("sent", ESCAPE_BEFORE_A_SCHEME)
def test_an_escapes_hex_digit_is_no_schemes_first_letter(sent: str) -> None:
    assert redact_url(sent) == sent
    assert _header("Location", sent) == _header("X-Debug", sent) == _header("X-Original-URL", sent) == sent
    assert _header("X-Debug", f"fetched {sent} ok") == f"fetched {sent} ok"


@pytest.mark.parametrize(("sent", "recorded"), [
    ("https://h/r/%2Fhttps%3A%2F%2Fu%3AT0K%40h2%2Fx", f"https://h/r/%2Fhttps%3A%2F%2F{R}%40h2%2Fx"),
    ("https://h/r/%252Fhttps%253A%252F%252Fu%253AT0K%2540h2", f"https://h/r/%252Fhttps%253A%252F%252F{R}%2540h2"),
    ("https://h/r/%2F1a%3A%2F%2Fu%3AT0K%40h2%2Fx", f"https://h/r/%2F1a%3A%2F%2F{R}%40h2%2Fx"),  # scheme "a"
    ("https://h/r/%2Fhttps://u:T0K@h2/x", f"https://h/r/%2Fhttps://{R}@h2/x"),
])
def test_a_scheme_after_an_escape_is_still_read(sent: str, recorded: str) -> None:
    assert redact_url(sent) == _header("X-Debug", sent) == recorded


def test_a_url_named_header_follows_a_locations_nesting_bound() -> None:
    """Ten URLs written one inside another's path: as in a ``Location``, the ninth on is recorded ``%5Bredacted%5D``
    whole (free text alone kept them: they hold no credential, and it follows no bound)."""
    sent = "https://h" + "/a/https://h" * 10 + "/x"
    assert _header("X-Original-URL", sent) == _header("Location", sent) == redact_url(sent) != sent
    assert _header("X-Debug", sent) == sent


def test_a_span_two_readings_give_is_replaced_once() -> None:
    """An empty value (or user info) two readings both find was replaced twice, ``%5Bredacted%5D%5Bredacted%5D``: a
    ``;`` piece read in the query and again in a value holding a "?", and an empty user info read as sent and
    decoded. One replacement stands for it."""
    assert redact_url("/p?a;x=1?b;key=") == f"/p?a;x=1?b;key={R}"
    assert _header("Location", "/p?a;x=1?b;key=") == f"/p?a;x=1?b;key={R}"
    assert _header("X-Debug", "https://a/?next=https://@h%2F&x=1") == f"https://a/?next=https://{R}@h%2F&x=1"


@pytest.mark.parametrize(("sent", "recorded"), [
    ("https://a/?next=https%3A%2F%2Fu%3AT0K1%40h?x=1", f"https://a/?next=https%3A%2F%2F{R}%40h?x=1"),
    ("https://a/?next=https://u%3AT0K2%40h?x=1", f"https://a/?next=https://{R}%40h?x=1"),
    ("https://a/?next=https%3A%2F%2Fh%2Fcb%3Fkey%3DT0K3?x=1", f"https://a/?next=https%3A%2F%2Fh%2Fcb%3Fkey%3D{R}?x=1"),
])
def test_an_encoded_url_in_a_value_holding_a_raw_question_mark_is_read_to_it(sent: str, recorded: str) -> None:
    """Found while probing: a parameter's value holding a raw "?" was left whole to the plain reading, which reads
    no escape, so the encoded user info a server decodes (``next`` = ``https://u:T0K1@h?x=1``) was stored as sent in
    any other header, while ``redact_url`` redacted it. The value is read to its "?", the rest as before."""
    assert _header("X-Debug", sent) == recorded
    assert redact_url(sent).startswith(recorded.partition("?x=1")[0])
