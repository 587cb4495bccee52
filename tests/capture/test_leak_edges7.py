"""The capture detectors (seventh review): values that reached the store unscrubbed; regression tests.

Each test failed before the fix it names. They drive the public write path -
``bitexact.capture.apply_policy`` under the shipped default, and where it
matters a real SDK run (``bitexact.run()`` + ``r.record(...)``) whose written
entry and store rows are read back. No test depends on machine speed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store

from bitexact.capture import apply_policy, load_policy

SECRET = "hunter2-s3cret"


def _stored(data: dict[str, Any]) -> str:
    """What apply_policy under the shipped default stores for one tool_call, as JSON text."""
    return json.dumps(apply_policy(load_policy(), "tool_call", data).data, ensure_ascii=False)


def _recorded(home: Path, data: dict[str, Any]) -> str:
    return recorded_in_store(home, data, "review-leaks7")


# -- 1. a credential in a Python repr whose value is bytes, a list or a tuple ------------------------
#
# docs/capture.md: `"NAME": VALUE` / `'NAME': VALUE` is read in "a JSON-like or Python-repr mapping in
# text", and "a credential name's object or array value ('password': ['x']) is replaced whole". The
# value's reader stopped at the first quote: `{'password': b'x'}` (Python's repr of bytes) had only its
# "b" replaced, and `password=['x']` (a keyword argument in a repr, a command line) only its "[", so the
# secret was stored in the clear after "[CREDENTIAL]" - and declared scrubbed.

REPR_TEXTS = [
    str({"password": SECRET.encode()}),  # {'password': b'...'}
    str({"token": (SECRET,)}),  # a tuple is Python's other array
    f"Login(user='ann', password={SECRET.encode()!r})",  # a dataclass repr with a bytes field
    f"connect(password={[SECRET]!r})",
    f"connect(token={(SECRET,)!r})",
    f"password={{'value': '{SECRET}'}}",
    f'api_key=b"{SECRET}"',
]


@pytest.mark.parametrize("text", REPR_TEXTS)
def test_a_credential_in_a_python_repr_as_bytes_or_a_sequence_is_scrubbed(text: str) -> None:
    """A credential's value written as b'...', [...] or (...) kept the secret after the token."""
    stored = _stored({"tool": "login", "result": text})
    assert SECRET not in stored, stored


def test_a_credential_in_a_python_repr_as_bytes_is_scrubbed_in_an_sdk_run(home: Path) -> None:
    """The same through a real SDK run: nothing the store keeps holds the secret."""
    recorded = _recorded(home, {"tool": "login", "result": str({"user": "ann", "password": SECRET.encode()})})
    assert SECRET not in recorded


# -- 2. a password in a URL holding an unencoded "@" -----------------------------------------------
#
# docs/capture.md: the credentials detector finds `scheme://user:pass@`. It read the password only up to
# the first "@", so "postgresql://admin:P@ssw0rd@db/app" was stored as "postgresql://[CREDENTIAL]@ssw0rd@db"
# - the rest of the password in the clear. A URL's user info ends at the last "@" before the host, as
# redact_url (the wrapped clients' rule) reads it and as connection libraries parse such a DSN.

DSNS = [
    ("postgresql://admin:P@ssw0rd-77@db.internal:5432/app", "ssw0rd-77"),
    ("redis://:s3c@ret-42@cache:6379/0", "ret-42"),
    ("mongodb://ann@corp.example:pw-9931x@mongo/x", "pw-9931x"),  # a user name that is an e-mail address
]


@pytest.mark.parametrize(("url", "secret"), DSNS)
def test_a_url_password_holding_an_at_sign_is_scrubbed_whole(url: str, secret: str) -> None:
    """The text detector stopped at the password's first "@" and stored the rest of it."""
    stored = _stored({"tool": "db", "args": [f"connecting to {url} now"]})
    assert secret not in stored, stored
    assert "@db.internal:5432/app" in stored or "@cache:6379/0" in stored or "@mongo/x" in stored, stored


# -- 3. an e-mail address written against a non-ASCII letter ----------------------------------------
#
# docs/capture.md: `email` finds "local part, @, dotted domain". The domain had to end at a regex \b, which
# Unicode reads as a letter on both sides when a CJK or Hangul letter follows, as it does in Chinese or
# Japanese text written without spaces and in Korean's particles: "请联系ann@example.com获取详情" was stored as sent.

EMAIL_TEXTS = [
    "请联系ann.lee@example.com获取详情",
    "ann.lee@example.comまでご連絡ください",
    "ann.lee@example.com으로 보내 주세요",  # Korean writes its particle against the word
]


@pytest.mark.parametrize("text", EMAIL_TEXTS)
def test_an_email_address_followed_by_a_non_ascii_letter_is_scrubbed(tmp_path: Path, text: str) -> None:
    """The address was kept whole when a letter of another script followed its top-level domain."""
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"detectors": {"pan": {}, "iban": {}, "credentials": {}, "email": {}}}))
    stored = json.dumps(apply_policy(load_policy(str(path)), "tool_call", {"tool": "crm", "result": text}).data,
                        ensure_ascii=False)
    assert "ann.lee@example.com" not in stored, stored
    assert "[EMAIL]" in stored, stored


# -- 4. card numbers of issuers missing from the prefix table ----------------------------------------
#
# capture-controls.md: card numbers are found by "issuer prefix and Luhn"; detectors/pan.py keeps its table
# "broad on purpose: a false negative stores a card number". Two issuers of the ISO/IEC 7812 ranges were
# missing: China T-Union (31, 19 digits) and Indonesia's GPN (1946, 16, 18 or 19 digits). Their
# Luhn-valid card numbers were stored as sent.

OTHER_ISSUERS = [
    "3112345678901234564",  # China T-Union, 19 digits
    "1946123456789010",  # GPN, 16 digits
    "194612345678901232",  # GPN, 18 digits
    "1946 1234 5678 9012 340",  # GPN, 19 digits, spaced
]


@pytest.mark.parametrize("number", OTHER_ISSUERS)
def test_a_card_number_of_china_t_union_or_gpn_is_scrubbed(number: str) -> None:
    """No issuer prefix in the table allowed these numbers, so they were kept."""
    stored = _stored({"tool": "pay", "result": f"charged card {number} today"})
    assert number not in stored, stored
    assert "[PAN ****" in stored, stored


# -- 5. two hex digests side by side, their digits read as one card number ----------------------------
#
# docs/capture.md: "a group of digits with a hex letter beside it, inside a run of at least 32 hex
# characters (a SHA-256 digest, a git commit id), is never read as a card number". Only a card number
# that was one such group was spared: the digits ending one digest and those starting the next, one
# space (or -, +) apart, were read as a card number of two groups, and both digests - evidence a reader
# recomputes - were stored with "[PAN ****1881]" in their middle.

DIGEST_A = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca49599ab40128888"
DIGEST_B = "88881881c1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855e3b"  # 40128888 88881881 passes Luhn


@pytest.mark.parametrize("separator", [" ", "-", "+", "%20"])
def test_two_hex_digests_side_by_side_are_kept(separator: str) -> None:
    """The digits at the seam of two digests were scrubbed as a Visa number."""
    text = f"{DIGEST_A}{separator}{DIGEST_B}"
    stored = _stored({"tool": "hash", "result": text})
    assert json.loads(stored)["result"] == text


def test_a_card_number_beside_a_hex_digest_is_still_scrubbed() -> None:
    """Taking a digest's digits out of the windows never spares a card number written beside it."""
    stored = _stored({"tool": "hash", "result": f"{DIGEST_A} 4111 1111 1111 1111 {DIGEST_B}"})
    assert "4111 1111" not in stored and "[PAN ****1111]" in stored, stored
    assert DIGEST_A in stored and DIGEST_B in stored, stored


# -- 6. a value right after a URL-encoded space (%20) -------------------------------------------------
#
# capture-controls.md: "A space or hyphen as a URL encodes it (%20, %2D, and a query's +) reads as the
# separator it encodes, so a number spaced in a request path or query is found as it was written." The
# digits of the %20 itself were read as digits glued to the value after it: "q=card%204111111111111111"
# was read as the 18-digit group 204111111111111111, "iban%20DE89..." as an IBAN with a digit before its
# country code, "ssn%20078051120" as a longer number - and each was stored as sent (with + instead of
# %20, all three were found).

def _ssn_policy(tmp_path: Path) -> Any:
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"detectors": {"pan": {}, "iban": {}, "credentials": {}, "us_ssn": {}}}))
    return load_policy(str(path))


ENCODED = [
    ("GET /search?q=pay%20with%20card%204111111111111111", "4111111111111111"),
    ("GET /search?q=card%205555%205555%205555%204444", "5555%205555%205555%204444"),
    ("GET /search?q=my%20iban%20DE89370400440532013000", "DE89370400440532013000"),
    ("GET /search?q=iban%20DE89%203704%200044%200532%200130%2000", "DE89%203704%200044%200532%200130%2000"),
    ("GET /search?q=ssn%20078051120", "078051120"),
    ("GET /search?q=ssn%20078%2005%201120", "078%2005%201120"),
]


@pytest.mark.parametrize(("text", "value"), ENCODED)
def test_a_value_after_a_url_encoded_space_is_scrubbed(tmp_path: Path, text: str, value: str) -> None:
    """The %20 before the value was read as its first digits, so nothing was found."""
    stored = json.dumps(apply_policy(_ssn_policy(tmp_path), "http_call", {"method": "GET", "url": text}).data)
    assert value not in stored, stored
    # The same text with a query's + for the space was, and is, scrubbed.
    plus = json.dumps(apply_policy(_ssn_policy(tmp_path), "http_call",
                                   {"method": "GET", "url": text.replace("%20", "+")}).data)
    assert value.replace("%20", "+") not in plus, plus


def test_a_card_number_after_a_url_encoded_space_is_scrubbed_in_an_sdk_run(home: Path) -> None:
    """The same through a real SDK run under the shipped default."""
    recorded = _recorded(home, {"tool": "browser", "args": ["https://shop.example/pay?q=card%204111111111111111"]})
    assert "4111111111111111" not in recorded
