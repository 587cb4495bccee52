"""Capture policy edges (the third review): secrets that reached the stored data in the clear.

Each test fails on the code as reviewed and passes once its leak is closed.
None depends on machine speed (no budget is exercised).
"""

from __future__ import annotations

import json
from pathlib import Path

from bitexact.capture import apply_policy, load_policy, redact_headers
from bitexact.capture.detectors.pan import is_pan

# A 19-digit Visa number (issuer 4 allows 19 digits) that passes Luhn: no double holds it exactly.
VISA19 = "4111111111111111110"


def _stored(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False)


# -- 1. a header name given as bytes escapes the Cookie / Set-Cookie / Proxy-Authorization rule ---------


def test_a_cookie_header_named_in_bytes_is_redacted() -> None:
    # docs/capture.md: "redact_headers replaces the values of headers named in the table by [redacted], and
    # those of HTTP's own credential headers too: Cookie, Set-Cookie and Proxy-Authorization". The SDK's
    # record_headers decodes a bytes name (b"Cookie") as Latin-1, but redact_headers compares
    # ascii_lower(str(b"Cookie")) == "b'cookie'", so the session cookie is kept as sent.
    recorded = redact_headers([(b"Cookie", b"sid=s3ss10n-secret"), (b"Set-Cookie", b"sid=s3ss10n-secret")])
    values = [value.decode("latin-1") if isinstance(value, bytes) else value for _, value in recorded]
    assert values == ["[redacted]", "[redacted]"]


def test_a_bytes_cookie_header_name_never_reaches_the_stored_http_call() -> None:
    # The wrapped client's path: record_headers (sdk/http/credentials.py) over redact_headers, then the
    # default policy over the http_call (whose text detectors do not know cookies). A prepared requests
    # request with req.headers[b"Cookie"] = b"..." is recorded this way (checked end to end in review).
    from bitexact.sdk.http.credentials import record_headers

    headers = record_headers([(b"Cookie", b"sid=s3ss10n-secret"), ("Accept", "*/*")])
    captured = apply_policy(load_policy(), "http_call", {"request": {"method": "GET", "headers": headers}})
    assert "s3ss10n-secret" not in _stored(captured.data)


# -- 2. a JSON document's number read through a double loses the card number its text holds -------------


def test_a_card_number_with_a_fraction_in_a_json_document_is_scrubbed() -> None:
    # The same text outside a document is found ("4111111111111111110.0" -> "[PAN ****1110].0"). Inside a
    # document, scan.py's _number_as_read turns the token into float(raw) -> "4111111111111111000" and
    # scans that instead, so the raw token, which is what the string stores, is never read: the direct
    # finding of the joined pass is thrown away by the document rescan and the card is kept.
    assert is_pan(VISA19)
    document = '{"pan": ' + VISA19 + '.0}'
    assert VISA19 not in _stored(apply_policy(load_policy(), "tool_call", {"a": VISA19 + ".0"}).data)
    captured = apply_policy(load_policy(), "tool_call", {"body": document})
    assert VISA19 not in _stored(captured.data)


# -- 3. an SSN in a list under an "ssn" key: found as data, missed in a JSON document in a string -------


def _ssn_policy(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"detectors": {"pan": {}, "iban": {}, "credentials": {}, "us_ssn": {}}}))
    return load_policy(str(path))


def test_ssns_in_a_list_under_an_ssn_key_in_a_json_document_are_scrubbed(tmp_path: Path) -> None:
    # docs/capture.md: us_ssn needs "a cue ... within 48 characters before or in the key it is stored
    # under", "hyphenated ones one space apart in a list are each found", and a JSON document in a string is
    # read "as the document it is". As data, {"ssn": ["078-05-1120", ...]} is scrubbed (the walk gives a
    # list item its key as context); in a document, scan.py's scrub_document gives a value inside an array
    # no context at all (contexts.append(key if stack[-1] == "{" else None)), so both SSNs are kept.
    policy = _ssn_policy(tmp_path)
    as_data = apply_policy(policy, "tool_call", {"customer": {"ssn": ["078-05-1120", "219-09-9999"]}})
    assert as_data.data == {"customer": {"ssn": ["[SSN]", "[SSN]"]}}
    document = json.dumps({"ssn": ["078-05-1120", "219-09-9999"]})
    captured = apply_policy(policy, "tool_call", {"customer": document})
    stored = _stored(captured.data)
    assert "078-05-1120" not in stored
    assert "219-09-9999" not in stored


# -- 4. a password in a URL with an empty user name (redis://:password@host) ---------------------------


def test_a_password_in_a_url_with_an_empty_user_name_is_scrubbed() -> None:
    # docs/capture.md, credentials: "scheme://user:pass@" in text. The shape with no user name is how
    # Redis (and many other services) are given a password: REDIS_URL=redis://:secret@host:6379/0. The
    # URL rule (redact_url) redacts it; the text detector's _USERINFO asks for a user name of at least
    # one character, so the password is kept.
    from bitexact.capture import redact_url

    url = "redis://:hunter2X9@cache.internal:6379/0"
    assert "hunter2X9" not in redact_url(url)
    captured = apply_policy(load_policy(), "tool_call", {"tool": "connect", "args": [url]})
    assert "hunter2X9" not in _stored(captured.data)


# -- 5. a credential name in text whose value is a list ----------------------------------------------------


def test_a_credential_holding_a_list_in_a_python_repr_is_scrubbed() -> None:
    # credentials.py: a credential is found in text as "'NAME': VALUE - a JSON-like or Python-repr mapping
    # in text"; docs/capture.md: a value under a credential name "is replaced whole ... whatever it holds".
    # str() of a dict holding a list under "password" (a tool result logged or returned as text) keeps it:
    # _COLON_VALUE has no form for a [ or { value, and the flag it raises instead only asks for a rescan as
    # a JSON document, which a Python repr is not.
    text = str({"user": "ann", "password": ["hunter2X9"]})
    captured = apply_policy(load_policy(), "tool_call", {"tool": "t", "result": text})
    assert "hunter2X9" not in _stored(captured.data)
