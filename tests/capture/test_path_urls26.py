"""Session 26: a URL written in a URL's path is read by the URL rule (``bitexact.capture.urls``).

On 730052e ``redact_url`` (the request URL, ``Location``, each URL of a ``Link``, a ``Refresh``'s URL) read the user
info after the first ``://`` only: an archive's or a proxy's ``https://h/web/2020/https://u:p@h2/x`` and the same URL
percent-encoded in a path segment were recorded with the password in the clear. Every ``recorded_urls`` row still
gives what it gives (tests/capture/test_urls22.py, test_vectors.py run them); this file runs them again beside the
new reading.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.capture.urls import redact_headers, redact_url

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "sdk" / "protocol-vectors.json").read_text())
R = "%5Bredacted%5D"

# (URL sent, recorded): each kept its credential on 730052e.
IN_PATH = [
    ("https://h/web/2020/https://u:T0K1@h2/x", f"https://h/web/2020/https://{R}@h2/x"),
    ("https://h/web/2020/http://:T0K2@h2/", f"https://h/web/2020/http://{R}@h2/"),  # an empty user
    ("https://h/r/https%3A%2F%2Fu%3AT0K3%40h2%2Fx", f"https://h/r/https%3A%2F%2F{R}%40h2%2Fx"),
    ("https://h/r/https%3a%2f%2fu%3aT0K4%40h2%2fx", f"https://h/r/https%3a%2f%2f{R}%40h2%2fx"),  # lower-case escapes
    ("https://h/r/https%253A%252F%252Fu%253AT0K5%2540h2%252Fx", f"https://h/r/https%253A%252F%252F{R}%2540h2%252Fx"),
    # a nested URL's own query, encoded in the path (a plain "?" would start the outer URL's query)
    ("https://h/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT0K6?page=2", f"https://h/r/https%3A%2F%2Fh2%2Fcb%3Ftoken%3D{R}?page=2"),
    # a URL in the path of a URL in the path; the outer query read as before
    ("https://h/a/https://u:T0K7@h2/b/ftp://v:T0K8@h3/c?token=T0K9",
     f"https://h/a/https://{R}@h2/b/ftp://{R}@h3/c?token={R}"),
    # a scheme with digits and "+.-" after its first letter; the outer URL's own user info too
    ("https://o:T0KA@h/x/git+ssh://u:T0KB@h2/repo", f"https://{R}@h/x/git+ssh://{R}@h2/repo"),
    # a network-path reference
    ("//h/web/https://u:T0KC@h2/", f"//h/web/https://{R}@h2/"),
]
# Recorded byte for byte: no user info, a mark with no scheme letter before it, a path's bare "//", an "@" past
# the nested authority, a "://" only in the fragment or the query's own reading.
LOOK_ALIKES = [
    "https://h/web/2020/https://h2/x",
    "https://h/1://u:p@h2/",
    "https://h/p//u:p@h2/",
    "https://h/web/https://h2/users/@me",
    "https://h/x%3A%2F%2F",
    "https://h/a:/b@c",
    "https://h/docs#https://u:p@h2/",
    "https://h/r/https%3A%2F%2Fh2%2Fcb%3Fpage%3D2",
]


@pytest.mark.parametrize(("sent", "recorded"), IN_PATH)
def test_a_url_in_the_path_has_its_user_info_and_credentials_redacted(sent: str, recorded: str) -> None:
    assert redact_url(sent) == recorded
    assert "T0K" not in recorded


@pytest.mark.parametrize(("sent", "recorded"), IN_PATH)
def test_a_redirect_to_such_a_url_is_recorded_so(sent: str, recorded: str) -> None:
    for name in ("Location", "Content-Location", "Referer"):
        assert redact_headers({name: sent}) == {name: recorded}
    assert redact_headers([("Link", f'<{sent}>; rel="next"')]) == [["Link", f'<{recorded}>; rel="next"']]
    assert redact_headers({"Refresh": f"0; url={sent}"}) == {"Refresh": f"0; url={recorded}"}


# A relative URL whose first "://" stands in its query: on 730052e that "://" was taken for the URL's own, its
# "authority" read to the last "@" before a "/", "?" or "#", so the host and the next parameter's name were
# replaced with the credential's value: recorded "/cb?u=https://%5Bredacted%5D", a reader could not tell what was
# sent. The query's own rule reads it now.
QUERY_NOT_AUTHORITY = [
    ("/cb?u=https://h2&token=x@y", f"/cb?u=https://h2&token={R}"),
    ("/cb?u=https://h2&page=2&sig=a@b", f"/cb?u=https://h2&page=2&sig={R}"),
    ("cb?next=https://u:T0KF@h2/&q=1", f"cb?next=https://{R}@h2/&q=1"),
]


@pytest.mark.parametrize(("sent", "recorded"), QUERY_NOT_AUTHORITY)
def test_a_url_in_a_relative_urls_query_is_no_authority_of_its_own(sent: str, recorded: str) -> None:
    assert redact_url(sent) == recorded


@pytest.mark.parametrize("sent", LOOK_ALIKES)
def test_look_alikes_are_recorded_as_sent(sent: str) -> None:
    assert redact_url(sent) == sent


def test_past_eight_urls_deep_the_rest_of_the_path_is_redacted_whole() -> None:
    """Each URL written in another's path is a level, as a nested URL in a query value is: past 8 the rule stops
    reading and replaces what it would have read, so no chain hides user info beyond the bound."""
    nine = "https://h/" + "https://h/" * 8 + "https://u:T0KD@h2/"
    recorded = redact_url(nine)
    assert "T0K" not in recorded
    assert recorded.startswith("https://h/" + "https://h/" * 8) and recorded.endswith(R)
    eight = "https://h/" + "https://h/" * 7 + "https://u:T0KE@h2/"
    assert redact_url(eight) == "https://h/" + "https://h/" * 7 + f"https://{R}@h2/"


def test_every_recorded_urls_row_still_holds() -> None:
    rows = VECTORS["credential_keys"]["recorded_urls"]
    assert rows
    for row in rows:
        assert redact_url(row["url"]) == row["recorded"], row
