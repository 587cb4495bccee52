"""Credentials rules version 17 (session 30): a configuration line quoted in a markdown blockquote or written as a list
item (each taken case kept at e0fcbf8, by every version before).

Agents write notes in markdown: a redis.conf, an ACL file, a sentinel.conf or a .netrc quoted with ``> `` (``>``,
nested ``> > ``), or a line of one as a list item (``- ``, ``* ``, ``+ ``, ``1. ``, ``1) ``). Each of these rules took
its line only when its first word opened the line (``_starts_a_line``), so ``> requirepass hunter2`` and ``-
masterauth hunter2`` kept their passwords. The note's marks open the line now (``_first_word``), and each rule reads
the rest of the line as without them: a value that ends the line, no heading's word, no sentence
(test_false_positives30). A .netrc entry over several quoted lines reads past the ``>`` opening each.

Also an htpasswd line, a ``.pgpass`` line, an ``/etc/shadow`` line and a SQL*Plus script's ``CONNECT`` so quoted or
listed: each rule asked that its first word open the line (the shadow line's user with nothing before it, not even a
blank: an indented one is read now too).

The note in tests/capture/data/redis_7.0.15_config_note.md quotes lines redis-server 7.0.15 loaded (each user logged
in with its password; the .netrc entry read by Python's netrc), tests/capture/data/README.md.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.support import DATA, recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

T = "[CREDENTIAL]"
V16_DIGEST = "0f883f7318d9827a31dabee28b571e1750502569a0e71180f3674ec221194abd"
V17_DIGEST = "130ba3794fe09cc961f84347d7f04b728fc46791595d0d6212b7b50e5bc39067"
SHADOW_HASH = "$6$saltsalt$abcdefghijklmnopqrstuv"
NOTE_SECRETS = ("foobared", "m4sterPw", "fr4nkPw", "my pass", "Tr0ub4dor&3", "Mx3dCasePw", "Sn7-mixed", "Rotat3d-9",
                "n3trcPw!")


@pytest.mark.parametrize(("text", "expected"), [
    # redis.conf's passwords in a blockquote: "> ", ">" with no blank, nested, a code block's blanks inside the quote
    ("> requirepass hunter2", f"> requirepass {T}"),
    (">requirepass hunter2", f">requirepass {T}"),
    ("> > requirepass hunter2", f"> > requirepass {T}"),
    (">     requirepass hunter2", f">     requirepass {T}"),
    ("> masterauth hunter2\n", f"> masterauth {T}\n"),
    ('> requirepass "hunter 2"', f'> requirepass "{T}"'),
    ("> tls-key-file-pass hunter2", f"> tls-key-file-pass {T}"),
    ("> REQUIREPASS hunter2", f"> REQUIREPASS {T}"),
    ("> Masterauth hunter2", f"> Masterauth {T}"),
    ("> rEquirepass hunter2", f"> rEquirepass {T}"),
    # sentinel.conf's
    ("> sentinel auth-pass mymaster hunter2", f"> sentinel auth-pass mymaster {T}"),
    ("> sentinel sentinel-pass hunter2", f"> sentinel sentinel-pass {T}"),
    ("> Sentinel AUTH-pAss mymaster hunter2", f"> Sentinel AUTH-pAss mymaster {T}"),
    # an ACL file's line
    ("> user alice on >hunter2 ~* +@all", f"> user alice on >{T} ~* +@all"),
    ("> > user alice on >hunter2 ~* +@all\n", f"> > user alice on >{T} ~* +@all\n"),
    # a .netrc entry, on one line and over several quoted lines
    ("> machine api.example.com login alice password hunter2",
     f"> machine api.example.com login alice password {T}"),
    ("> machine api.example.com\n> login alice\n> password hunter2",
     f"> machine api.example.com\n> login alice\n> password {T}"),
    ("> > machine h\n> >   login alice\n> >   password hunter2\n",
     f"> > machine h\n> >   login alice\n> >   password {T}\n"),
    ("> default login alice password hunter2", f"> default login alice password {T}"),
    # a list item's line: each marker, nested lists, a list in a quote and a quote in a list
    ("- requirepass hunter2", f"- requirepass {T}"),
    ("* masterauth hunter2", f"* masterauth {T}"),
    ("+ requirepass hunter2", f"+ requirepass {T}"),
    ("1. requirepass hunter2", f"1. requirepass {T}"),
    ("12) masterauth hunter2", f"12) masterauth {T}"),
    ("Notes:\n  - requirepass hunter2\n", f"Notes:\n  - requirepass {T}\n"),
    ("> - requirepass hunter2", f"> - requirepass {T}"),
    ("- > masterauth hunter2", f"- > masterauth {T}"),
    ("- sentinel auth-pass mymaster hunter2", f"- sentinel auth-pass mymaster {T}"),
    ("- user alice on >hunter2 ~* +@all", f"- user alice on >{T} ~* +@all"),
    ("1) user alice on >hunter2 ~* +@all", f"1) user alice on >{T} ~* +@all"),
    ("- machine api.example.com login alice password hunter2",
     f"- machine api.example.com login alice password {T}"),
    # the note held in a JSON string, its line breaks escaped
    ('{"note": "> requirepass hunter2\\n- masterauth s3cret"}', f'{{"note": "> requirepass {T}\\n- masterauth {T}"}}'),
    # an htpasswd line and a .pgpass line, quoted or listed
    ("> alice:$apr1$abcdefgh$0123456789abcdefghijkl", f"> alice:{T}"),
    ("- alice:$apr1$abcdefgh$0123456789abcdefghijkl", f"- alice:{T}"),
    ("> localhost:5432:mydb:alice:hunter2", f"> localhost:5432:mydb:alice:{T}"),
    ("- localhost:5432:mydb:alice:hunter2", f"- localhost:5432:mydb:alice:{T}"),
    # an /etc/shadow line, quoted, listed, indented (a code block)
    (f"> root:{SHADOW_HASH}:19000:0:99999:7:::", f"> root:{T}:19000:0:99999:7:::"),
    (f"- root:{SHADOW_HASH}:19000:0:99999:7:::\n", f"- root:{T}:19000:0:99999:7:::\n"),
    (f"Lines:\n    root:{SHADOW_HASH}:19000:0:99999:7:::\n", f"Lines:\n    root:{T}:19000:0:99999:7:::\n"),
    # a SQL*Plus script's CONNECT line, quoted or a numbered step
    ("> CONNECT scott/tiger@orcl", f"> CONNECT scott/{T}@orcl"),
    ("1. conn scott/tiger@orcl\n", f"1. conn scott/{T}@orcl\n"),
])
def test_a_config_line_quoted_or_listed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_the_note_quoting_real_files() -> None:
    """A note quoting the lines redis-server 7.0.15 loaded: every password taken, every other word kept."""
    out = scrubbed((DATA / "redis_7.0.15_config_note.md").read_text(encoding="utf-8"))
    for secret in NOTE_SECRETS:
        assert secret not in out, secret
    assert f'> user frank on >{T} ~* +@all\n> user dave on ">{T}" ~* +@all\n' in out
    assert "> requirepass is the setting you want; masterauth must match it on replicas.\n" in out
    assert "> > user default on nopass ~* &* +@all\n" in out
    assert "- sentinel monitor mymaster 127.0.0.1 6391 1\n" in out
    assert f"1. requirepass {T}\n2. Restart the replicas; each reads masterauth first.\n" in out
    assert f">   login deploy\n>   password {T}\n" in out


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION == 17
    assert policy.digest == V17_DIGEST == policy.digest_under(17) != policy.digest_under(16) == V16_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    stored_text = recorded_in_store(tmp_path / "home", {
        "note": (DATA / "redis_7.0.15_config_note.md").read_text(encoding="utf-8"),
        "list": "- masterauth l1stedPw\n",
    })
    for secret in (*NOTE_SECRETS, "l1stedPw"):
        assert secret not in stored_text, secret
