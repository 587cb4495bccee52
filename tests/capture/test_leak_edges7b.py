"""The capture detectors (seventh review, second pass): values that reached the store unscrubbed; regression tests.

Each test failed before the fix it names. They drive the public write path -
``bitexact.capture.apply_policy`` under the shipped default (or a policy file
naming more detectors), and where it matters a real SDK run
(``bitexact.run()`` + ``r.record(...)``) whose written entry and store rows
are read back. No test depends on machine speed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store

from bitexact.capture import CapturePolicy, apply_policy, load_policy


def _policy(tmp_path: Path, detectors: dict[str, Any] | None = None) -> CapturePolicy:
    """The shipped default, or a policy file naming ``detectors``."""
    if detectors is None:
        return load_policy()
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"detectors": detectors}), encoding="utf-8")
    return load_policy(str(path))


def _stored(policy: CapturePolicy, data: dict[str, Any], kind: str = "tool_call") -> str:
    """What apply_policy stores for one step, as JSON text."""
    return json.dumps(apply_policy(policy, kind, data).data, ensure_ascii=False)


def _recorded(home: Path, data: dict[str, Any]) -> str:
    return recorded_in_store(home, data, "review-leaks7b")


# -- 1. a value right after a URL escape other than %20 / %2D ----------------------------------------
#
# capture-controls.md: a number "spaced in a request path or query is found as it was written", and the
# last review made the digits of a %20 before a value no part of it. Every other escape still was: the
# hex digits of %22 (a quote), %27, %28 or %40 were read as digits glued to a card number
# ("%224111111111111111%22", URL-encoded JSON, was the 18-digit group 224111111111111111), and any escape
# before an IBAN (%22, %3A, %3D, %2F) counted as a letter or digit glued to its country code - so a card
# number, IBAN or SSN in a URL-encoded JSON document or nested query was stored as sent.

ESCAPED = [
    ("https://pay.example/cb?data=%7B%22card%22%3A%224111111111111111%22%7D", "4111111111111111"),
    ("https://pay.example/cb?q=%27card%274111111111111111", "4111111111111111"),
    ("https://pay.example/cb?q=%284111%201111%201111%201111%29", "4111%201111%201111%201111"),
    ("https://pay.example/cb?data=%7B%22iban%22%3A%22DE89370400440532013000%22%7D", "DE89370400440532013000"),
    ("https://pay.example/cb?q=iban%3ADE89370400440532013000", "DE89370400440532013000"),
    ("https://pay.example/accounts%2FGB82WEST12345698765432", "GB82WEST12345698765432"),
    ("https://pay.example/cb?next=%2Fpay%3Fiban%3Dde89370400440532013000", "de89370400440532013000"),
]


@pytest.mark.parametrize(("url", "value"), ESCAPED)
def test_a_value_after_a_url_escape_is_scrubbed(tmp_path: Path, url: str, value: str) -> None:
    """The hex digits of the escape before the value were read as part of it, so nothing was found."""
    stored = _stored(_policy(tmp_path), {"method": "GET", "url": url}, kind="http_call")
    assert value not in stored, stored


@pytest.mark.parametrize("url", ["https://hr.example/cb?q=%7B%22ssn%22%3A%22078051120%22%7D",
                                 "https://hr.example/cb?q=ssn%22078-05-1120%22"])
def test_an_ssn_after_a_url_escape_is_scrubbed(tmp_path: Path, url: str) -> None:
    """The same for the us_ssn detector: the escape's digits made the SSN part of a longer number."""
    policy = _policy(tmp_path, {"pan": {}, "iban": {}, "credentials": {}, "us_ssn": {}})
    stored = _stored(policy, {"method": "GET", "url": url}, kind="http_call")
    assert "078051120" not in stored and "078-05-1120" not in stored, stored


def test_an_escape_before_a_non_card_number_keeps_it(tmp_path: Path) -> None:
    """Reading past an escape never makes a card number of digits that are none."""
    url = "https://pay.example/cb?q=%224111111111111112%22&n=%2212345678901234%22"
    assert json.loads(_stored(_policy(tmp_path), {"url": url}, kind="http_call"))["url"] == url


def test_a_card_number_after_a_url_escape_is_scrubbed_in_an_sdk_run(home: Path) -> None:
    """The same through a real SDK run under the shipped default."""
    recorded = _recorded(home, {"tool": "browser",
                                "args": ["https://pay.example/cb?data=%7B%22card%22%3A%224111111111111111%22%7D"]})
    assert "4111111111111111" not in recorded


# -- 2. a credential whose YAML value is on the lines after its name ---------------------------------
#
# docs/capture.md: the credentials detector finds `NAME: VALUE` at a line start (a header or config
# line). In YAML a value may start on the next lines: a block scalar (`key: |`, `password: >-`, how a
# Kubernetes secret holds a private key) or a plain scalar or mapping indented under the name. Only the
# "|" was replaced - and declared a scrubbed credential - while the secret on the lines below it was
# stored as sent; with nothing after the colon, nothing was found at all.

YAML_TEXTS = [
    "db:\n  password: |\n    hunter2-s3cret\n  user: ann\n",
    "db:\n  password: >-\n    hunter2-\n    s3cret\n",
    "tls:\n  key: |-\n    -----BEGIN PRIVATE KEY-----\n    hunter2-s3cret\n    -----END PRIVATE KEY-----\n",
    "password:\n  hunter2-s3cret\n",
    "token:\n- hunter2-s3cret\nretries: 3\n",  # a sequence at the name's own column
    "- token: |  # the runner's token\n    hunter2-s3cret\n  name: ci\n",
    "auth:\r\n  user: ann\r\n  pass: hunter2-s3cret\r\nretries: 3\r\n",  # a mapping, replaced whole
]


@pytest.mark.parametrize("text", YAML_TEXTS)
def test_a_credential_on_the_lines_after_its_yaml_name_is_scrubbed(text: str) -> None:
    """The value lines under `NAME: |` (or `NAME:` alone) were stored as sent."""
    stored = _stored(load_policy(), {"tool": "read_file", "result": text})
    assert "hunter2" not in stored and "s3cret" not in stored, stored
    assert "[CREDENTIAL]" in stored, stored


def test_the_lines_after_a_yaml_credential_block_are_kept() -> None:
    """Only the lines indented under the name are its value: the keys after them are kept."""
    text = "db:\n  password: |\n    hunter2-s3cret\n\n  user: ann\nport: 5432\n"
    result = json.loads(_stored(load_policy(), {"tool": "read_file", "result": text}))["result"]
    assert result == "db:\n  password: |\n    [CREDENTIAL]\n\n  user: ann\nport: 5432\n"


def test_a_yaml_credential_block_is_scrubbed_in_an_sdk_run(home: Path) -> None:
    """The same through a real SDK run: nothing the store keeps holds the secret."""
    recorded = _recorded(home, {"tool": "read_file",
                                "result": "apiVersion: v1\nstringData:\n  password: |\n    hunter2-s3cret\n"})
    assert "hunter2-s3cret" not in recorded


# -- 3. a credential in a JSON document that is itself a JSON string in text ------------------------------
#
# docs/capture.md: the credentials detector finds `"NAME": VALUE` in text, "a quoted value read to its
# closing quote, past \\"". A JSON document written as a JSON string - a log line's `body="{\"password\":
# \"...\"}"`, or a tool result that is a JSON-encoded body - quotes its names and values as \" ... \": the
# name's closing quote had a backslash before it, so no name was read and the password was stored as sent
# (a card number there was found: it needs no name).

ESCAPED_DOCUMENTS = [
    'POST /login body=' + json.dumps(json.dumps({"username": "ann", "password": "hunter2-s3cret"})),
    json.dumps(json.dumps({"user": "ann", "api_key": "hunter2-s3cret"})),  # the whole text one JSON string
    "payload: " + json.dumps(json.dumps({"token": 'hunter2 \\"s3cret\\"'}))[1:-1],  # inner escapes
    "cfg={\\'password\\': \\'hunter2-s3cret\\'}",
]


@pytest.mark.parametrize("text", ESCAPED_DOCUMENTS)
def test_a_credential_in_an_escaped_json_document_in_text_is_scrubbed(text: str) -> None:
    """`\\"password\\": \\"x\\"` (JSON held in a JSON string) kept the password in the clear."""
    stored = _stored(load_policy(), {"tool": "http", "result": text})
    assert "hunter2" not in stored and "s3cret" not in stored, stored
    assert "[CREDENTIAL]" in stored, stored


def test_an_escaped_json_document_keeps_everything_but_the_value() -> None:
    """Only the value between its escaped quotes is replaced; the text around it is kept byte for byte."""
    text = 'body="{\\"user\\": \\"ann\\", \\"password\\": \\"a\\\\\\"b\\\\\\\\\\", \\"n\\": 1}"'
    result = json.loads(_stored(load_policy(), {"tool": "http", "result": text}))["result"]
    assert result == 'body="{\\"user\\": \\"ann\\", \\"password\\": \\"[CREDENTIAL]\\", \\"n\\": 1}"'


def test_a_credential_in_an_escaped_json_document_is_scrubbed_in_an_sdk_run(home: Path) -> None:
    """The same through a real SDK run: nothing the store keeps holds the secret."""
    recorded = _recorded(home, {"tool": "http", "result": ESCAPED_DOCUMENTS[0]})
    assert "hunter2-s3cret" not in recorded


# -- 4. a dotted credential name at a line start, written with a colon --------------------------------
#
# docs/capture.md: a credential name in text may be dotted (`a.b.NAME`, its last part compared), and
# `NAME: VALUE` at a line start is found. A .properties file writes `db.password: x` as it writes
# `db.password=x`, and a Kubernetes secret names its key `tls.key:` - found with "=", kept with ":".

DOTTED_TEXTS = [
    "spring.datasource.url: jdbc:postgresql://db/app\nspring.datasource.password: hunter2-s3cret\n",
    "data:\n  tls.key: hunter2-s3cret\n  tls.crt: LS0tLS1\n",
    "data:\n  tls.key: |\n    hunter2-s3cret\n",
]


@pytest.mark.parametrize("text", DOTTED_TEXTS)
def test_a_dotted_credential_name_with_a_colon_at_a_line_start_is_scrubbed(text: str) -> None:
    """`db.password: x` kept the password, though `db.password=x` and `password: x` were scrubbed."""
    stored = _stored(load_policy(), {"tool": "read_file", "result": text})
    assert "hunter2" not in stored and "s3cret" not in stored, stored
    assert "tls.crt: LS0tLS1" in stored or "datasource.url" in stored or "tls.key: |" in stored, stored
