"""Credentials rules version 16: what version 15 stored in the clear (each taken case kept at 326d795).

1. redis-cli's numbered reply (``HGETALL``, ``CONFIG GET``) with no command line above it, pasted indented (a
   markdown code block of four spaces, nested under a list item, a tab) or followed by a sentence: version 15 read
   such a reply only in redis-cli's own shape (test_leak_edges26) and stored ``4) "hunter2"`` under ``3) "password"``
   as it was. Version 16 takes, in any such reply, a value under a credential name unless it reads as another
   field's name in a prose list (``email``, ``password_confirmation``: test_false_positives28 keeps those); and a
   paste indented past 9 blanks (a code block under a nested list item), which no version read, up to 16.

The replies are real: redis-cli 7.0.15 ``--no-raw`` against redis-server 7.0.15 on loopback, indented and annotated as
a user would paste them (tests/capture/data/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.support import DATA, recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

T = "[CREDENTIAL]"
V15_DIGEST = "f9c0fb6cbe94907987f50fe91a3a69c7130a791a293ea0909106d09f2332b8be"
V16_DIGEST = "0f883f7318d9827a31dabee28b571e1750502569a0e71180f3674ec221194abd"
PASTED_SECRETS = ("hunter2", "tk_Live_9f8e7d6c", "S3cret!x", "letmein", "MasterPw-77")


# -- 1. a bare reply pasted indented or followed by a sentence --------------------------------------------------------


def test_replies_pasted_into_a_markdown_note() -> None:
    """HGETALL and CONFIG GET replies in a code block, under list items (two digits' padding too), with a tab, and
    with a sentence right after: every password and token taken, every other value kept."""
    out = scrubbed((DATA / "redis_cli_7.0.15_pasted.md").read_text(encoding="utf-8"))
    for secret in PASTED_SECRETS:
        assert secret not in out, secret
    assert f'    1) "name"\n    2) "alice"\n    3) "password"\n    4) "{T}"\n\nThat was the user\'s hash.\n' in out
    assert (f'  1) "host"\n  2) "smtp.example.com"\n  3) "api_token"\n  4) "{T}"\n  5) "user"\n  6) "ops"\n'
            f'  7) "password"\n  8) "{T}"\n- and a larger one:\n') in out
    assert f'      12) "v6"\n      13) "password"\n      14) "{T}"\n' in out
    assert f'1) "name"\n2) "alice"\n3) "password"\n4) "{T}"\nSo the password is stored in the clear.\n' in out
    assert f'\t3) "api_token"\n\t4) "{T}"\n\t5) "user"\n\t6) "ops"\n\t7) "password"\n\t8) "{T}"\nDone.\n' in out
    assert out.count(T) == 8


@pytest.mark.parametrize(("text", "expected"), [
    # the brief's example: a code block of four spaces, a sentence after it
    ('    1) "name"\n    2) "alice"\n    3) "password"\n    4) "hunter2"\nThat was the user\'s hash.\n',
     f'    1) "name"\n    2) "alice"\n    3) "password"\n    4) "{T}"\nThat was the user\'s hash.\n'),
    # common passwords that are lower-case words (redis.conf's own example, foobared), or the field's own name
    ('  1) "password"\n  2) "foobared"\n', f'  1) "password"\n  2) "{T}"\n'),
    ('1) "password"\n2) "secret"\nThat was it.\n', f'1) "password"\n2) "{T}"\nThat was it.\n'),
    ('1) "password"\n2) "password"\nThat was it.\n', f'1) "password"\n2) "{T}"\nThat was it.\n'),
    ('  1) "password"\n  2) "changeme"\n', f'  1) "password"\n  2) "{T}"\n'),
    # a word field names join (created_at, expires_in), alone
    ('  1) "password"\n  2) "at"\nThat was it.\n', f'  1) "password"\n  2) "{T}"\nThat was it.\n'),
    # a field's name in a case no prose list writes it, a phrase, digits
    ('  1) "password"\n  2) "EMAIL"\n', f'  1) "password"\n  2) "{T}"\n'),
    ('  1) "password"\n  2) "correct horse battery staple"\nok\n', f'  1) "password"\n  2) "{T}"\nok\n'),
    ('  1) "pin"\n  2) "4821"\n', f'  1) "pin"\n  2) "{T}"\n'),
    # an odd count (a reply cut when pasted), and a value after a credential name in a nested array
    ('  1) "password"\n  2) "Tr0ub4dor&3"\n  3) "name"\n', f'  1) "password"\n  2) "{T}"\n  3) "name"\n'),
    ('  1) "token"\n  2) 1) "tk-a1"\n     2) "tk-b2"\nThose were all.\n',
     f'  1) "token"\n  2) 1) "{T}"\n     2) "{T}"\nThose were all.\n'),
    # a code block under a nested list item (12 blanks), and a reply of ten items padded past it (16)
    ('- step one\n  - the hash:\n\n            1) "name"\n            2) "al"\n            3) "password"\n'
     '            4) "hunter2"\n\n  - step two\n',
     '- step one\n  - the hash:\n\n            1) "name"\n            2) "al"\n            3) "password"\n'
     f'            4) "{T}"\n\n  - step two\n'),
    ("".join(f"{' ' * 14}{n}) \"f{n}\"\n" for n in range(1, 9)) + '              9) "password"\n             10) "pw-10"\nDone.\n',
     "".join(f"{' ' * 14}{n}) \"f{n}\"\n" for n in range(1, 9)) + f'              9) "password"\n             10) "{T}"\nDone.\n'),
    # CRLF, as a Windows editor saves the note
    ('    1) "api_key"\r\n    2) "ak_91x"\r\nThat was it.\r\n', f'    1) "api_key"\r\n    2) "{T}"\r\nThat was it.\r\n'),
])
def test_pasted_replies_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_a_pasted_reply_inside_a_json_document() -> None:
    """A tool's result that holds the note as a JSON string (its line breaks escaped)."""
    text = '{"note": "    1) \\"name\\"\\n    2) \\"al\\"\\n    3) \\"password\\"\\n    4) \\"hunter2\\"\\nThat was it."}'
    assert "hunter2" not in scrubbed(text)


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 16
    assert policy.digest_under(16) == V16_DIGEST != policy.digest_under(15) == V15_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    stored_text = recorded_in_store(tmp_path / "home", {
        "note": (DATA / "redis_cli_7.0.15_pasted.md").read_text(encoding="utf-8"),
        "reply": '  1) "password"\n  2) "foobared"\nThat was it.\n',
    })
    for secret in (*PASTED_SECRETS, "foobared"):
        assert secret not in stored_text, secret
