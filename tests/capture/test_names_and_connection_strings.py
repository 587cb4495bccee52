"""Passwords the default policy let through under rules version 5, scrubbed under version 6: a compound name ending in
``_pass`` or ``_pwd`` (``DB_PASS``, ``MYSQL_PWD``, ``ansible_become_pass``) as an object key and in text; ODBC's and
ADO.NET's ``PWD=`` inside a connection string; the ``USER:PASSWORD`` lines ``chpasswd`` reads; HTTPie's and xh's
``-a TOKEN`` (with ``-A bearer``, the token has no colon).

Each form is scrubbed (only the secret), scrubbed again with nothing more declared, and set beside near-misses:
a pass that is a step of a process (``first_pass``), a word the ending only looks like (``bypass``), the shell's
working directory (``PWD=/home/bob``, ``OLDPWD``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.detectors import is_credential_name
from bitexact.capture.policy import POLICY_VERSION

V6_DIGEST = "3860a892549f26d5648aea0a4a8e85f8559e9e9f0e10cfd1f6da102c34fa4e0d"
"""The shipped default policy's digest under rules version 6 (docs/capture.md, "Digest"); version 7 is pinned in
test_leak_edges15.py."""
T = "[CREDENTIAL]"


# -- compound names ending _pass / _pwd -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "DB_PASS", "db_pass", "SMTP_PASS", "ansible_become_pass", "ansible_ssh_pass", "RABBITMQ_DEFAULT_PASS",
    "dbPass", "adminPwd", "MYSQL_PWD", "mysql_root_pwd", "old_pwd", "new_pwd", "user-pass", "ldap.bind_pass",
])
def test_a_compound_name_ending_pass_or_pwd_names_a_credential(name: str) -> None:
    assert is_credential_name(name.rpartition(".")[2])
    data = apply_policy(load_policy(env={}), "tool_call", {"kwargs": {name: "S3cretPw1"}}).data
    assert data["kwargs"] == {name: T}
    assert scrubbed(f"{name}=S3cretPw1 ./deploy.sh") == f"{name}={T} ./deploy.sh"
    assert scrubbed(f"{name}: S3cretPw1") == f"{name}: {T}"


@pytest.mark.parametrize("name", [
    "pass", "pwd", "PWD", "OLDPWD", "bypass", "ByPass", "compass", "first_pass", "render_pass", "boarding_pass",
    "tests_pass", "start_pwd", "home_pwd", "passport",
])
def test_a_pass_that_is_no_password_is_left(name: str) -> None:
    assert not is_credential_name(name)
    data = apply_policy(load_policy(env={}), "tool_call", {"kwargs": {name: "value-1"}}).data
    assert data["kwargs"] == {name: "value-1"}
    assert scrubbed(f"{name}=value-1") == f"{name}=value-1"


# -- a connection string's PWD= -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("Driver={ODBC Driver 18};Server=db;UID=sa;PWD=S3cret;Database=x",
     f"Driver={{ODBC Driver 18}};Server=db;UID=sa;PWD={T};Database=x"),
    ("Server=db;UID=sa;PWD=S3cret", f"Server=db;UID=sa;PWD={T}"),
    ("PWD=S3cret;UID=sa", f"PWD={T};UID=sa"),
    ("Server=db; Pwd = S3cret ;", f"Server=db; Pwd = {T} ;"),
    ("server=db;uid=sa;pwd={S3c;ret};", f"server=db;uid=sa;pwd={T};"),
    ('conn = pyodbc.connect("DSN=prod;UID=app;PWD=S3cret")', f'conn = pyodbc.connect("DSN=prod;UID=app;PWD={T}")'),
])
def test_a_connection_strings_pwd_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "PWD=/home/bob", "cd /srv && PWD=/srv/app ./run.sh", "echo $PWD", "'PWD' => '/home/bob'", "env | grep PWD=",
])
def test_the_shells_working_directory_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- chpasswd's input -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("echo 'bob:S3cret' | chpasswd", f"echo 'bob:{T}' | chpasswd"),
    ('echo "bob:S3cret" | sudo chpasswd', f'echo "bob:{T}" | sudo chpasswd'),
    ("echo bob:S3cret|chpasswd -e", f"echo bob:{T}|chpasswd -e"),
    ("printf 'a:S3cretA\\nb:S3cretB\\n' | /usr/sbin/chpasswd", f"printf 'a:{T}\\nb:{T}\\n' | /usr/sbin/chpasswd"),
    ("chpasswd <<< 'bob:S3cret'", f"chpasswd <<< 'bob:{T}'"),
    ("sudo chpasswd <<<bob:S3cret", f"sudo chpasswd <<<bob:{T}"),
])
def test_the_passwords_chpasswd_reads_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "echo 'bob:x1' | tee users.txt", "man chpasswd", "echo 'bob:x1' | chpasswd.sh", "echo 'bob:x1' | mychpasswd",
])
def test_input_chpasswd_does_not_read_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- HTTPie's and xh's -a -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("http -A bearer -a S3cretTok example.org", f"http -A bearer -a {T} example.org"),
    ("xh -A bearer -a S3cretTok example.org", f"xh -A bearer -a {T} example.org"),
    ("https --auth-type=bearer --auth S3cretTok example.org", f"https --auth-type=bearer --auth {T} example.org"),
    ("http -a bob:S3cret example.org", f"http -a bob:{T} example.org"),
])
def test_httpies_auth_value_is_scrubbed_with_or_without_a_colon(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_curls_user_without_a_colon_is_still_a_user_name() -> None:
    assert scrubbed("curl -u bob https://h") == "curl -u bob https://h"


# -- the rules version and the store --------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 6
    assert policy.digest_under(6) == V6_DIGEST != policy.digest_under(5)
    assert V6_DIGEST != policy.digest_under(POLICY_VERSION) == policy.digest


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["namePw1", "odbcPw2", "chpasswdPw3", "bearerTok4", "mysqlPwd5"]
    stored = recorded_in_store(tmp_path / "home", {
        "kwargs": {"DB_PASS": secrets[0], "MYSQL_PWD": secrets[4]},
        "args": [f"Server=db;UID=sa;PWD={secrets[1]}", f"echo 'root:{secrets[2]}' | chpasswd",
                 f"http -A bearer -a {secrets[3]} example.org"],
    })
    assert T in stored
    for secret in secrets:
        assert secret not in stored, secret
