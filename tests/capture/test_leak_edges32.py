"""Credentials rules version 17 (session 32, leaks32): a configuration line written as a markdown inline code span,
and a value read into a code span's closing backtick (each row fails at 26a320a).

Agents write ``Set `requirepass hunter2` in redis.conf``: a redis.conf, sentinel.conf, .netrc, htpasswd or ACL file's
line, or redis-cli's ``AUTH``, as a code span's only words inside a sentence. Each of these rules took its line only
when its first word opened the line (``_first_word``), so each password was kept. A code span's opening backtick
opens such a line now (``_opens_span``) and its closing backtick ends it (``_span_value``, ``_span_close``): the
value must end at that backtick, as it must end a line (test_false_positives32 keeps the prose).

And a bare value that a rule reads to its word's end ran into the span's closing backtick: ``Set `PASSWORD=x` ok``
was stored as ``Set `PASSWORD=[CREDENTIAL] ok``, the markdown broken (``export DB_PASSWORD``, ``mysql -p``,
``redis-cli -a``, ``--password``, ``curl -u``). Such a finding ends before the backtick now (``_before_span_closes``),
a sentence's mark after the span (``x`.``) included; a value that is then empty (``PASSWORD=` ``) is none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.support import recorded_in_store, scrubbed

T = "[CREDENTIAL]"
APR1 = "$apr1$abcdefgh$0123456789abcdefghijkl"


@pytest.mark.parametrize(("text", "expected"), [
    # the brief's four
    ("Set `requirepass hunter2` in redis.conf and restart.", f"Set `requirepass {T}` in redis.conf and restart."),
    ("Add `masterauth S3cretPw` to each replica.", f"Add `masterauth {T}` to each replica."),
    ("Use `AUTH hunter2` at the prompt.", f"Use `AUTH {T}` at the prompt."),
    ("Put `machine h login u password hunter2` in ~/.netrc.", f"Put `machine h login u password {T}` in ~/.netrc."),
    # redis.conf's names in each case, quoted values, the span at the line's start, in a list item, in a table cell
    ("Set `REQUIREPASS hunter2` too", f"Set `REQUIREPASS {T}` too"),
    ("Set `Masterauth S3cretPw` too", f"Set `Masterauth {T}` too"),
    ('Set `requirepass "hunter 2"` in redis.conf', f'Set `requirepass "{T}"` in redis.conf'),
    ("Set `requirepass 'hunter 2'` in redis.conf", f"Set `requirepass '{T}'` in redis.conf"),
    ("`requirepass hunter2`", f"`requirepass {T}`"),
    ("- `masterauth S3cretPw` on replicas\n", f"- `masterauth {T}` on replicas\n"),
    ("(`requirepass hunter2`)", f"(`requirepass {T}`)"),
    ("| redis | `requirepass hunter2` |\n", f"| redis | `requirepass {T}` |\n"),
    ('{"note": "Set `requirepass hunter2` in redis.conf"}', f'{{"note": "Set `requirepass {T}` in redis.conf"}}'),
    ("Set `requirepass ab`cd` there", f"Set `requirepass {T}` there"),  # redis reads the word whole
    # redis.conf's and sentinel.conf's -pass names
    ("Set `tls-key-file-pass hunter2` too", f"Set `tls-key-file-pass {T}` too"),
    ("Set `tls-client-key-file-pass hunter2` too", f"Set `tls-client-key-file-pass {T}` too"),
    ("Add `sentinel auth-pass mymaster hunter2` to sentinel.conf",
     f"Add `sentinel auth-pass mymaster {T}` to sentinel.conf"),
    ("Add `sentinel sentinel-pass hunter2` and restart", f"Add `sentinel sentinel-pass {T}` and restart"),
    ('Add `sentinel auth-pass m "my pw"` ok', f'Add `sentinel auth-pass m "{T}"` ok'),
    # AUTH with a user, and SMTP's initial response after a mechanism
    ("Use `AUTH default hunter2` at the prompt.", f"Use `AUTH default {T}` at the prompt."),
    ("Then `AUTH PLAIN AGFsaWNlAGh1bnRlcjI=` logs in", f"Then `AUTH PLAIN {T}` logs in"),
    # .netrc's default entry; an htpasswd line; an ACL file's user line
    ("Put `default login u password hunter2` last", f"Put `default login u password {T}` last"),
    (f"Add `alice:{APR1}` to .htpasswd", f"Add `alice:{T}` to .htpasswd"),
    ("Add `user alice on >hunter2 ~* +@all` to users.acl", f"Add `user alice on >{T} ~* +@all` to users.acl"),
])
def test_a_config_line_in_a_code_span(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Set `PASSWORD=hunter2` ok", f"Set `PASSWORD={T}` ok"),
    ("`export DB_PASSWORD=hunter2`", f"`export DB_PASSWORD={T}`"),
    ("set `DB_PASSWORD=hunter2`.", f"set `DB_PASSWORD={T}`."),
    ("(use `mysql -phunter2`).", f"(use `mysql -p{T}`)."),
    ("Run `redis-cli -a hunter2` now", f"Run `redis-cli -a {T}` now"),
    ("run `app --password hunter2` ok", f"run `app --password {T}` ok"),
    ("`curl -u alice:hunter2`", f"`curl -u alice:{T}`"),
    ("`CONFIG SET requirepass hunter2`", f"`CONFIG SET requirepass {T}`"),
    ("`a` and `b` then `PASSWORD=hunter2`, done", f"`a` and `b` then `PASSWORD={T}`, done"),
    # an empty value: the backtick alone was taken
    ("See `PASSWORD=` when empty", "See `PASSWORD=` when empty"),
])
def test_a_value_ends_before_the_span_closing_it(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # not a code span's close: the backtick is the value's, kept in what is taken
    ("PASSWORD=abc`", f"PASSWORD={T}"),
    ("`x` PASSWORD=abc`", f"`x` PASSWORD={T}"),  # two backticks before it: that span closed
    ("Set `PASSWORD=ab`cd` ok", f"Set `PASSWORD={T} ok"),  # another backtick inside the value
    ("`a\nPASSWORD=abc` then", f"`a\nPASSWORD={T} then"),  # the backticks are counted on the value's line
    ('{"n": "`a\\nPASSWORD=abc` then"}', f'{{"n": "`a\\nPASSWORD={T} then"}}'),  # a written newline too
    ("| user | password |\n|---|---|\n| al | `s3cr3t!` |\n", f"| user | password |\n|---|---|\n| al | {T} |\n"),
])
def test_a_backtick_that_closes_no_span_stays_in_the_value(text: str, expected: str) -> None:
    """Passes at 26a320a too: only a span's closing backtick is left out of a value (a table's cell is taken whole,
    both backticks with it, as test_leak_edges18 asks)."""
    assert scrubbed(text) == expected


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ("hunter2", "S3cretPw", "m4sterPw", "n3trcPw")
    stored = recorded_in_store(tmp_path / "home", {
        "note": "Set `requirepass hunter2` in redis.conf, `masterauth S3cretPw` on replicas.\n",
        "steps": ["Use `AUTH default m4sterPw` at the prompt.", "Put `machine h login u password n3trcPw` in ~/.netrc."],
    })
    for secret in secrets:
        assert secret not in stored, secret
    assert "`requirepass [CREDENTIAL]` in redis.conf" in stored
