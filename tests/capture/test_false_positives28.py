"""Ordinary text rules version 16 must leave, as version 15 did (test_leak_edges26, test_false_positives26).

1. A numbered list in prose of quoted field names (``1) "password"`` / ``2) "email"``), indented or with a sentence
   after it: version 16 takes a value under a credential name in a numbered list no command line stands above, in any
   shape (test_leak_edges28), unless it reads as another field's name: words a field's name is made of (``email``,
   ``Refresh Token``, ``password_confirmation``, ``expires_in``), in lower case or each capitalized.
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
