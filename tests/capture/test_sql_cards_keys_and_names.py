"""Secrets an audit of the shipped default policy found stored as written, each scrubbed under rules version 6:

* a password an SQL statement sets (``CREATE USER … WITH PASSWORD 'X'``, ``IDENTIFIED BY``, ``SET PASSWORD``);
* a card number on a magnetic stripe's track 1 (``%B4111…^DOE/J^…``: its ``%B`` was read as a URL escape);
* an OpenPGP private key block (``gpg --export-secret-keys --armor``);
* secrets under names no credential word ended (``tls.key`` as an object key, Azure's ``AccountKey``,
  ``X-Auth-Key``, ``x-functions-key``, a kubeconfig's ``client-key-data``, ``SECRET_KEY_BASE``, ``SecretString``);
* a run's name, which the SDK wrote to the runs table and ``run_meta`` unread.

Each beside near-misses that stay as written.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from capture.support import scrubbed

import bitexact
from bitexact.capture import apply_policy, load_policy
from bitexact.sdk import close_stores
from bitexact.store import DB_NAME

T = "[CREDENTIAL]"


# -- SQL ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("CREATE USER app WITH PASSWORD 'S3cret';", f"CREATE USER app WITH PASSWORD '{T}';"),
    ("ALTER ROLE app WITH LOGIN ENCRYPTED PASSWORD 'S3c''ret';", f"ALTER ROLE app WITH LOGIN ENCRYPTED PASSWORD '{T}';"),
    ("create user app with password 'S3cret'", f"create user app with password '{T}'"),
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'S3cret';", f"CREATE USER 'app'@'%' IDENTIFIED BY '{T}';"),
    ("ALTER USER 'a'@'%' IDENTIFIED WITH mysql_native_password BY 'S3cret';",
     f"ALTER USER 'a'@'%' IDENTIFIED WITH mysql_native_password BY '{T}';"),
    ("CREATE USER scott IDENTIFIED BY tiger;", f"CREATE USER scott IDENTIFIED BY {T};"),
    ("create user scott identified by tiger;", f"create user scott identified by {T};"),
    ('alter user scott identified by "Tiger1";', f'alter user scott identified by "{T}";'),
    ("ALTER USER scott IDENTIFIED BY VALUES 'S:ABCDEF';", f"ALTER USER scott IDENTIFIED BY VALUES '{T}';"),
    ("SET PASSWORD FOR 'app'@'%' = 'S3cret';", f"SET PASSWORD FOR 'app'@'%' = '{T}';"),
])
def test_a_password_an_sql_statement_sets_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "a message identified by its id", "the password is reset daily", "ALTER ROLE app PASSWORD NULL;",
    "CREATE USER u IDENTIFIED BY RANDOM PASSWORD;", "SELECT password_hash FROM users;",
])
def test_sql_and_prose_that_set_no_password_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- track 1 ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("swipe: %B4111111111111111^DOE/JOHN^2812101000000000?", "swipe: %B[PAN ****1111]^DOE/JOHN^2812101000000000?"),
    ("%B5500005555555559^SMITH/A^29121010000?;5500005555555559=2912101?",
     "%B[PAN ****5559]^SMITH/A^29121010000?;[PAN ****5559]=2912101?"),
])
def test_a_card_number_on_track_one_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", ["%B4111111111111112^DOE", "%B41^DOE/JOHN^", "q=%B4%20x"])
def test_track_one_shapes_holding_no_card_number_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- OpenPGP ----------------------------------------------------------------------------------------------------------

_PGP = """-----BEGIN PGP PRIVATE KEY BLOCK-----
Version: GnuPG v2
Comment: backup

lQOYBF5xV0cBCADRyUQbEmJbK9ayPSgz6QeLtB3gJ8z9ZxZrL0u7Vq1oMZtK3V+d
m5tQ2YtF0x5T8w4kG9JWbJ9sQ0sA7qLvR2F4uC1kXz3nD5tM9xH8yW0vB6jK2pQ3
=Ab3x
-----END PGP PRIVATE KEY BLOCK-----"""


@pytest.mark.parametrize("newline", ["\n", "\\n"], ids=["lines", "escaped"])
def test_an_openpgp_private_key_block_is_scrubbed_between_its_armour_lines(newline: str) -> None:
    text = _PGP.replace("\n", newline)
    assert scrubbed(text) == newline.join(
        ["-----BEGIN PGP PRIVATE KEY BLOCK-----", T, "-----END PGP PRIVATE KEY BLOCK-----"])


def test_a_public_key_block_is_left() -> None:
    public = _PGP.replace("PRIVATE", "PUBLIC")
    assert scrubbed(public) == public


# -- names ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tls.key", "ssl_key", "AccountKey", "X-Auth-Key", "x-functions-key",
                                  "client-key-data", "SECRET_KEY_BASE", "SecretString", "SecretBinary"])
def test_a_secret_under_a_tools_name_is_scrubbed(name: str) -> None:
    data = apply_policy(load_policy(env={}), "tool_call", {"result": {name: "c2VjcmV0S2V5MQ=="}}).data
    assert data["result"] == {name: T}
    assert scrubbed(f"{name}: c2VjcmV0S2V5MQ==") == f"{name}: {T}"


@pytest.mark.parametrize("name", ["sort_key", "cache_key", "idempotency_key", "AccountName", "client-certificate-data",
                                  "SecretId", "publicKey"])
def test_names_beside_them_that_hold_no_secret_are_left(name: str) -> None:
    data = apply_policy(load_policy(env={}), "tool_call", {"result": {name: "value-1"}}).data
    assert data["result"] == {name: "value-1"}


def test_an_azure_connection_strings_account_key_is_scrubbed() -> None:
    text = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=QmFzZTY0S2V5PT0=;EndpointSuffix=core.windows.net"
    assert scrubbed(text) == text.replace("QmFzZTY0S2V5PT0=", T)


# -- a run's name -----------------------------------------------------------------------------------------------------


def test_a_runs_name_is_scrubbed_before_the_store_or_run_meta_holds_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    home = tmp_path / "home"
    task = "refund card 4111 1111 1111 1111 to DE89370400440532013000, db password=RunNamePw1"
    with bitexact.run(name=task, home=home) as r:
        r.marker("m")
    close_stores()
    conn = sqlite3.connect(home / DB_NAME)
    try:
        rows = [bytes(blob).decode() for table, column in (("runs", "meta"), ("entries", "body"))
                for (blob,) in conn.execute(f"SELECT {column} FROM {table}")]  # noqa: S608 - fixed names
    finally:
        conn.close()
    stored = "\n".join(rows)
    assert "refund card [PAN ****1111] to [IBAN], db password=[CREDENTIAL]" in stored
    for secret in ("4111 1111 1111 1111", "DE89370400440532013000", "RunNamePw1"):
        assert secret not in stored, secret


def test_with_the_policy_off_a_runs_name_is_kept_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    with bitexact.run(name="db password=kept", home=tmp_path / "home") as r:
        pass
    close_stores()
    assert r.run_id is not None
    with bitexact.run(home=tmp_path / "home") as reader:  # the store API reads it back
        assert reader.recorder is not None
        assert reader.recorder.store.run(r.run_id).meta.get("name") == "db password=kept"


# -- a password piped into a registry login, a shadow line's hash, card codes and PINs --------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ('echo "$REG_PW" | docker login -u bob --password-stdin r.io', f'echo "{T}" | docker login -u bob --password-stdin r.io'),
    ("echo 'S3cretTok' | sudo helm registry login r.io -u a --password-stdin",
     f"echo '{T}' | sudo helm registry login r.io -u a --password-stdin"),
    ("printf %s S3cretTok | /usr/bin/podman login --password-stdin -u a q.io",
     f"printf %s {T} | /usr/bin/podman login --password-stdin -u a q.io"),
])
def test_a_password_piped_into_a_registry_login_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", ["cat token.txt | docker login --password-stdin",
                                  "echo hi | docker ps; docker login --password-stdin", "echo x | docker logs c1"])
def test_input_no_login_reads_is_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_shadow_lines_hash_is_scrubbed() -> None:
    shadow = ("root:$6$saltsalt$abcdefghijklmnopqrstuvwxyz0123456789ABCDEF./:19000:0:99999:7:::\n"
              "daemon:*:19000:0:99999:7:::\nbob:$y$j9T$abcdefgh$ijklmnopqrstuv:19001:0:99999:7:::")
    assert scrubbed(shadow) == (f"root:{T}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"
                                 f"bob:{T}:19001:0:99999:7:::")
    assert scrubbed(shadow.replace("\n", "\\n")).count(T) == 2


@pytest.mark.parametrize("text", ["price:$100:tag", "note: $6$ is the price", "x = 'a:$6$short:1:'"])
def test_text_like_a_shadow_line_is_left(text: str) -> None:
    assert scrubbed(text) == text


def test_card_codes_pins_and_one_time_passcodes_are_scrubbed_as_keys() -> None:
    data = apply_policy(load_policy(env={}), "tool_call", {"kwargs": {
        "cvv": "123", "CVV2": 737, "cvc": "456", "pin": "4321", "pin_code": "0000", "otp": "998877",
        "pinned": True, "pin_count": 3, "opt": "x"}}).data
    assert data["kwargs"] == {"cvv": T, "CVV2": T, "cvc": T, "pin": T, "pin_code": T, "otp": T,
                              "pinned": True, "pin_count": 3, "opt": "x"}
