"""Ordinary text rules version 16 must leave, as version 15 did (test_leak_edges26, test_false_positives26).

1. A numbered list in prose of quoted field names (``1) "password"`` / ``2) "email"``), indented or with a sentence
   after it: version 16 takes a value under a credential name in a numbered list no command line stands above, in any
   shape (test_leak_edges28), unless it reads as another field's name: words a field's name is made of (``email``,
   ``Refresh Token``, ``password_confirmation``, ``expires_in``), in lower case or each capitalized.
2. An empty value after a credential's name: ``requirepass ""`` became ``requirepass "[CREDENTIAL]"`` (a token put
   where nothing was: redis reads no password, and data's ``{"password": ""}`` was always left), and YAML's
   ``password: ""`` became ``password: [CREDENTIAL]``.
3. A sentence's word after redis's password name: ``run CONFIG SET requirepass with the new value`` lost ``with``.
4. ``NAME::VALUE`` at a line's start read as ``NAME: :VALUE``: sqlite3's list mode printing the cell ``key::value``
   (no separator set) lost ``:value``; the value is now read after both colons (``key::value`` is a bare ``key``'s
   word, left as ``key: value`` is; ``password::x`` keeps its ``::``).
"""

from __future__ import annotations

import pytest

from capture.support import scrubbed

T = "[CREDENTIAL]"


# -- 1. a prose list of field names -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    # version 15's cases (test_leak_edges26), indented and with a sentence after them
    'The sign-up form asks for:\n  1) "password"\n  2) "email"\nBoth are required.\n',
    'Fields:\n    1) "password"\n    2) "email"\n    3) "name"\nThat is the form.\n',
    'Order:\n    1) "token"\n    2) "scope"\n\nThen call the API.\n',
    # capitalized, as a UI's labels are written
    'The form has:\n  1) "Password"\n  2) "Email"\n  3) "Username"\n',
    'Fields:\n1) "secret"\n2) "Refresh Token"\nThat is all.\n',
    # names of several words, some of them a credential's
    '1) "password"\n2) "password_confirmation"\nBoth must match.\n',
    'The API returns:\n1) "token"\n2) "expires_in"\nas JSON.\n',
    '- required fields:\n  1) "api_key"\n  2) "client_secret"\n  3) "redirect_uri"\n',
    'Ask for:\n1) "pin"\n2) "phone number"\nin that order.\n',
    'Columns:\n\t1) "password"\n\t2) "salt"\n\t3) "algorithm"\n',
    'Login form:\n  1) "username"\n  2) "password"\n  3) "remember_me"\nThen submit.\n',
    'The user record holds:\n    1) "password_hash"\n    2) "mfa_enabled"\n    3) "totp_secret"\n    4) "avatar_url"\n'
    'and nothing else.\n',
])
def test_a_prose_list_of_field_names_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # the same words in redis-cli's own shape (pairs, its padding, nothing after): a reply, as version 15 read it
    ('1) "password"\n2) "email"\n', f'1) "password"\n2) "{T}"\n'),
    ('1) "password"\n2) "email"\nOK\n', f'1) "password"\n2) "{T}"\nOK\n'),
    # under the command that printed it
    ('127.0.0.1:6379> HGETALL h\n  1) "password"\n  2) "email"\nThat is odd.\n',
     f'127.0.0.1:6379> HGETALL h\n  1) "password"\n  2) "{T}"\nThat is odd.\n'),
])
def test_the_same_words_in_a_reply_are_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- 2. an empty value -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    'requirepass ""\n',
    "masterauth ''\n",
    'tls-key-file-pass ""\n',
    'sentinel auth-pass mymaster ""\n',
    '127.0.0.1:6379> CONFIG SET requirepass ""\nOK\n127.0.0.1:6379> CONFIG GET requirepass\n1) "requirepass"\n2) ""\n',
    '$ redis-cli -p 6379 config set masterauth ""\nOK\n',
    'db:\n  user: app\n  password: ""\n',
    "password: ''\n",
])
def test_an_empty_value_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ('requirepass "x"\n', f'requirepass "{T}"\n'),
    ('requirepass " "\n', f'requirepass "{T}"\n'),
    ('127.0.0.1:6379> CONFIG SET requirepass "" maxmemory 1mb masterauth m-9\n',
     f'127.0.0.1:6379> CONFIG SET requirepass "" maxmemory 1mb masterauth {T}\n'),
    ('password: "x"\n', f"password: {T}\n"),
    ('password: """"\n', f'password: {T}\n'),
])
def test_a_value_that_holds_anything_is_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- 3. a sentence's word after redis's password name ------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "Run CONFIG SET requirepass with the new value.\n",
    "then run config set requirepass with the new value",
    "Use CONFIG SET masterauth to change it without a restart.\n",
    "Use CONFIG SET tls-key-file-pass when the key is rotated.\n",
])
def test_a_sentence_after_config_set_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # the word ends the command, is quoted, or a value follows it: a command's value
    ("CONFIG SET requirepass to\n", f"CONFIG SET requirepass {T}\n"),
    ("Run CONFIG SET requirepass with\n", f"Run CONFIG SET requirepass {T}\n"),
    ('CONFIG SET requirepass "with" the\n', f'CONFIG SET requirepass "{T}" the\n'),
    ("CONFIG SET requirepass with 3\n", f"CONFIG SET requirepass {T} 3\n"),
    ("CONFIG SET requirepass With the\n", f"CONFIG SET requirepass {T} the\n"),
    # at redis-cli's prompt and on its shell line, a command whatever it holds
    ("127.0.0.1:6379> CONFIG SET requirepass with the new value\n",
     f"127.0.0.1:6379> CONFIG SET requirepass {T} the new value\n"),
])
def test_a_command_after_config_set_is_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- 4. NAME::VALUE ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "sqlite> select note from t;\nkey::value\n",
    "key::value\n",
])
def test_a_bare_keys_word_after_two_colons_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("password::hunter2\n", f"password::{T}\n"),
    ("sqlite> select note from t;\napi_key::abc123\n", f"sqlite> select note from t;\napi_key::{T}\n"),
    ("password: :hunter2\n", f"password: {T}\n"),
    ("key::Xk9#pQ2!z\n", f"key::{T}\n"),
])
def test_a_credential_after_two_colons_is_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected
