"""Credentials rules version 16 (session 29): a redis-cli reply quoted in a markdown blockquote (each taken case kept
at bb92ba2, by every version before).

Agents write markdown, and quote a tool's output in a blockquote: every line of redis-cli's numbered reply opening
``> `` (or ``>``, ``> > `` nested, ``>`` then a code block's four blanks). The bare-reply rule read a first item
``1) "`` only when blanks alone stood before it on its line, so ``> 3) "password"`` / ``> 4) "hunter2"`` kept its
password. A quote's marks open their line; redis-cli's prompt ends in ``> `` too, after its ``HOST:PORT``, and is no
quote mark (test_false_positives29).

The replies are real: redis-cli 7.0.15 ``--no-raw`` against redis-server 7.0.15 on loopback, quoted as a user would
(tests/capture/data/README.md).

A redis-cli session quoted whole (``> 127.0.0.1:6379> AUTH x``): its prompt was read only when it opened its line,
so what is typed at it (AUTH, HSET, ACL SETUSER) and HGET's one-string reply kept their passwords; a prompt after a
quote's marks opens its line now.

Also a first item with more than 16 blanks before it (version 16 read 16, every version before fewer; now 64): a code
block under the fourth level of a list indented by four blanks stands 20 blanks in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.support import DATA, recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

T = "[CREDENTIAL]"
V16_DIGEST = "0f883f7318d9827a31dabee28b571e1750502569a0e71180f3674ec221194abd"
QUOTED_SECRETS = ("hunter2", "tk_Live_9f8e7d6c", "S3cret!x", "MasterPw-77", "letmein")


def test_replies_quoted_in_a_markdown_note() -> None:
    """HGETALL and CONFIG GET replies quoted with ``> ``, ``>``, nested ``> > ``, a code block inside the quote (two
    digits' padding) and a quoted prompt transcript: every password and token taken, every other value kept."""
    out = scrubbed((DATA / "redis_cli_7.0.15_blockquote.md").read_text(encoding="utf-8"))
    for secret in QUOTED_SECRETS:
        assert secret not in out, secret
    assert f'> 1) "name"\n> 2) "alice"\n> 3) "password"\n> 4) "{T}"\n\nThat was the user\'s hash.' in out
    assert (f'>1) "host"\n>2) "smtp.example.com"\n>3) "api_token"\n>4) "{T}"\n>5) "user"\n>6) "ops"\n'
            f'>7) "password"\n>8) "{T}"\n') in out
    assert f'> > 1) "masterauth"\n> > 2) "{T}"\n' in out
    assert f'>     12) "v6"\n>     13) "password"\n>     14) "{T}"\n>\n> The password is stored' in out
    assert f'> 127.0.0.1:16429> HGETALL user:1\n> 1) "name"\n> 2) "alice"\n> 3) "password"\n> 4) "{T}"\n' in out
    assert out.count(T) == 6


@pytest.mark.parametrize(("text", "expected"), [
    # the brief's forms: "> ", ">" with no blank, nested, a code block inside the quote
    ('> 1) "name"\n> 2) "alice"\n> 3) "password"\n> 4) "hunter2"\n',
     f'> 1) "name"\n> 2) "alice"\n> 3) "password"\n> 4) "{T}"\n'),
    ('>1) "password"\n>2) "hunter2"\n', f'>1) "password"\n>2) "{T}"\n'),
    ('> > 1) "password"\n> > 2) "hunter2"\n', f'> > 1) "password"\n> > 2) "{T}"\n'),
    ('>> 1) "password"\n>> 2) "hunter2"\n', f'>> 1) "password"\n>> 2) "{T}"\n'),
    ('> Run this:\n>\n>     1) "password"\n>     2) "hunter2"\n',
     f'> Run this:\n>\n>     1) "password"\n>     2) "{T}"\n'),
    # a tab after the mark, blanks before it, CRLF
    ('>\t1) "password"\n>\t2) "hunter2"\n', f'>\t1) "password"\n>\t2) "{T}"\n'),
    ('   > 1) "api_key"\n   > 2) "ak_91x"\n', f'   > 1) "api_key"\n   > 2) "{T}"\n'),
    ('> 1) "password"\r\n> 2) "hunter2"\r\n> That was it.\r\n', f'> 1) "password"\r\n> 2) "{T}"\r\n> That was it.\r\n'),
    # markdown's lazy line (no mark) and a depth that changes: still the quote's lines
    ('> 1) "password"\n2) "hunter2"\n', f'> 1) "password"\n2) "{T}"\n'),
    ('> > 1) "password"\n> 2) "hunter2"\n', f'> > 1) "password"\n> 2) "{T}"\n'),
    # a sentence after it inside the quote, a password that is a lower-case word, an odd count, a nested array
    ('> 1) "password"\n> 2) "foobared"\n> That was it.\n', f'> 1) "password"\n> 2) "{T}"\n> That was it.\n'),
    ('> 1) "password"\n> 2) "Tr0ub4dor&3"\n> 3) "name"\n', f'> 1) "password"\n> 2) "{T}"\n> 3) "name"\n'),
    ('> 1) "token"\n> 2) 1) "tk-a1"\n>    2) "tk-b2"\n', f'> 1) "token"\n> 2) 1) "{T}"\n>    2) "{T}"\n'),
    # under redis.conf's password name, a value that reads as a field's name is taken too (as unquoted)
    ('> 1) "requirepass"\n> 2) "email"\n> That was it.\n', f'> 1) "requirepass"\n> 2) "{T}"\n> That was it.\n'),
    # under a quoted command line (the prompt's, or the shell's), every value under a credential name
    ('> 127.0.0.1:6379> HGETALL h\n> 1) "password"\n> 2) "email"\n',
     f'> 127.0.0.1:6379> HGETALL h\n> 1) "password"\n> 2) "{T}"\n'),
    ('> $ redis-cli --no-raw hgetall h\n> 1) "password"\n> 2) "email"\n',
     f'> $ redis-cli --no-raw hgetall h\n> 1) "password"\n> 2) "{T}"\n'),
    # more than 16 blanks before the first item (version 16 read 16, now 64): a code block under the fourth level of a
    # list indented by four (20), and a reply of ten items padded past it (21)
    ('- a\n    - b\n        - c\n            - the hash:\n\n                    1) "name"\n'
     '                    2) "al"\n                    3) "password"\n                    4) "hunter2"\n',
     '- a\n    - b\n        - c\n            - the hash:\n\n                    1) "name"\n'
     f'                    2) "al"\n                    3) "password"\n                    4) "{T}"\n'),
    ("".join(f"{' ' * 21}{n}) \"f{n}\"\n" for n in range(1, 9)) + f'{" " * 21}9) "password"\n{" " * 20}10) "pw-10"\n',
     "".join(f"{' ' * 21}{n}) \"f{n}\"\n" for n in range(1, 9)) + f'{" " * 21}9) "password"\n{" " * 20}10) "{T}"\n'),
    # inside a blockquote: the quote's marks, then 20 blanks
    ('>' + ' ' * 20 + '1) "password"\n>' + ' ' * 20 + '2) "hunter2"\n', '>' + ' ' * 20 + '1) "password"\n>' + ' ' * 20
     + f'2) "{T}"\n'),
])
def test_quoted_replies_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # a redis-cli session quoted whole: what is typed at the quoted prompt, and HGET's one-string reply under it
    ('> 127.0.0.1:6379> AUTH hunter2\n> OK\n', f'> 127.0.0.1:6379> AUTH {T}\n> OK\n'),
    ('> redis.local:6379[2]> auth default hunter2\n', f'> redis.local:6379[2]> auth default {T}\n'),
    ('> redis /var/run/redis.sock> AUTH hunter2\n', f'> redis /var/run/redis.sock> AUTH {T}\n'),
    ('> > not connected> AUTH hunter2\n', f'> > not connected> AUTH {T}\n'),
    ('>127.0.0.1:6379> HSET h name al password hunter2\n', f'>127.0.0.1:6379> HSET h name al password {T}\n'),
    ('> 127.0.0.1:6379> HGET h password\n> "hunter2"\n', f'> 127.0.0.1:6379> HGET h password\n> "{T}"\n'),
    ('> 127.0.0.1:6379> ACL SETUSER bob on >hunter2 ~* +@all\n',
     f'> 127.0.0.1:6379> ACL SETUSER bob on >{T} ~* +@all\n'),
])
def test_a_quoted_prompt_transcript(text: str, expected: str) -> None:
    """bb92ba2 read redis-cli's prompt only when it opened its line: quoted, its AUTH, HSET, HGET's reply and ACL
    SETUSER's password were kept."""
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('> $ redis-cli config get requirepass\n> requirepass\n> hunter2\n',
     f'> $ redis-cli config get requirepass\n> requirepass\n> {T}\n'),
    ('> $ redis-cli hgetall h\n> name\n> al\n> password\n> hunter2\n',
     f'> $ redis-cli hgetall h\n> name\n> al\n> password\n> {T}\n'),
    ('> $ redis-cli -3 config get requirepass\n> requirepass hunter2\n',
     f'> $ redis-cli -3 config get requirepass\n> requirepass {T}\n'),
    ('>$ redis-cli acl list\n>user alice on >s3cr3t ~* +@all\n',
     f'>$ redis-cli acl list\n>user alice on >{T} ~* +@all\n'),
    # HGET's one line: bb92ba2 took the quote's mark with it ("[CREDENTIAL]" where "> hunter2" stood)
    ('> $ redis-cli hget h password\n> hunter2\n', f'> $ redis-cli hget h password\n> {T}\n'),
])
def test_a_quoted_reply_to_a_pipe(text: str, expected: str) -> None:
    """redis-cli's reply to a pipe (a string a line, bare) under its quoted shell line: bb92ba2 read each line whole,
    so ``> requirepass`` was no name (it holds a blank) and the password after it was kept."""
    assert scrubbed(text) == expected


def test_a_quoted_reply_inside_a_json_document() -> None:
    """A tool's result that holds the note as a JSON string (its line breaks escaped)."""
    text = '{"note": "> 1) \\"name\\"\\n> 2) \\"al\\"\\n> 3) \\"password\\"\\n> 4) \\"hunter2\\"\\n> That was it."}'
    assert "hunter2" not in scrubbed(text)


def test_the_rules_version_and_digest_are_unchanged() -> None:
    """The quote's reading shipped with version 16: its digest under ``v`` 16 stays what it was (17: leak_edges30)."""
    assert POLICY_VERSION >= 16
    assert load_policy(env={}).digest_under(16) == V16_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    stored_text = recorded_in_store(tmp_path / "home", {
        "note": (DATA / "redis_cli_7.0.15_blockquote.md").read_text(encoding="utf-8"),
        "reply": '> 1) "password"\n> 2) "foobared"\n> That was it.\n',
    })
    for secret in (*QUOTED_SECRETS, "foobared"):
        assert secret not in stored_text, secret
