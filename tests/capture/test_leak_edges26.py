"""Credentials rules version 15: what version 14 left (each taken case kept at 730052e, each look-alike left on both).

1. sqlite3 3.40.1's ``tcl`` mode (``.mode tcl``: each cell a C string in double quotes, a blank between) and ``ascii``
   mode (``.mode ascii``, ``sqlite3 -ascii``: cells between US (0x1F), rows after RS (0x1E), no line break, the next
   prompt right after the last row), their headers on;
2. list mode's ``.separator`` / ``-separator`` of more than one character (``.separator " | "``, ``-separator '::'``;
   version 14 split the dot command at its blanks and left a longer separator);
3. insert mode's ``INSERT INTO t VALUES(...);`` (its headers off) read by a ``CREATE TABLE`` written over many lines,
   as ``.schema`` prints it and as typed at the prompt over ``...>`` lines (version 14 read a one-line definition);
4. redis.conf's and sentinel.conf's password names in a mixed case (``rEquirepass``, ``MasterAuth``,
   ``Tls-Key-File-PaSS``, ``Sentinel AUTH-pAss``: redis-server and redis-sentinel 7.0.15 load each), and ``CONFIG
   SET`` of them at redis-cli's prompt and on its shell line, any pair of the command (``CONFIG SET maxmemory 64mb
   MasterAuth X``);
5. over-redaction: a numbered list of quoted words in prose with no command line above it (``1) "password"`` /
   ``2) "email"``) was read as redis-cli's reply; version 15 reads such a reply only in redis-cli's shape (pairs, the
   numbers as wide as redis-cli pads them, no sentence after it) unless its name is redis.conf's password.

The sqlite3 and redis-cli transcripts and the configuration files are real (tests/capture/data/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capture.support import DATA, recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

T = "[CREDENTIAL]"
V14_DIGEST = "ffb56642334b8fd49e0f2d31c34bea6979d66f97bb4548e442807a844099006a"
V15_DIGEST = "f9c0fb6cbe94907987f50fe91a3a69c7130a791a293ea0909106d09f2332b8be"
SQLITE_SECRETS = ("s3cr3t-Pa55", "hunter2!x", 'pw with "q" and {b}', 'pw with \\"q\\" and {b}', "tk_9f8e7d6c5b4a")


def _raw(name: str) -> str:
    """A transcript as its bytes hold it (a pty's CR LF and escape codes kept)."""
    return (DATA / name).read_bytes().decode("utf-8")


# -- 1-3. sqlite3's tcl and ascii modes, longer separators, a CREATE TABLE over many lines --------------------------


def test_a_sqlite3_session_as_a_terminal_shows_it() -> None:
    """``.mode tcl``, ``.mode ascii``, ``.separator " | "``, ``.separator ::`` with the headers on, then the headers
    off and ``.mode insert`` of a table created over five lines at the prompt and of one ``.schema`` printed so."""
    out = scrubbed(_raw("sqlite3_3.40.1_modes_tty.txt"))
    assert f'"id" "name" "password"\n"1" "alice" "{T}"\n"2" "bob" "{T}"\n"3" "carol" "{T}"\n' in out
    assert (f"id\x1fname\x1fpassword\x1e1\x1falice\x1f{T}\x1e2\x1fbob\x1f{T}\x1e3\x1fcarol\x1f{T}\x1e"
            "sqlite> .mode list\n") in out
    assert f"id | name | password\n1 | alice | {T}\n2 | bob | {T}\n3 | carol | {T}\n" in out
    assert f"id::password\n1::{T}\n2::{T}\n3::{T}\n" in out
    assert f"INSERT INTO accounts VALUES(1,'ops','{T}');\n" in out
    assert f"INSERT INTO users VALUES(1,'alice','{T}');\nINSERT INTO users VALUES(2,'bob','{T}');\n" in out
    # what the user typed at the prompt is left (no output mode prints it)
    assert "sqlite> INSERT INTO accounts VALUES (1, 'ops', 'tk_9f8e7d6c5b4a');\n" in out
    assert out.count(T) == 16


def test_a_raw_sqlite3_pty_transcript() -> None:
    """The same session as the pty received it: bracketed paste's codes and a carriage return before each output."""
    out = scrubbed(_raw("sqlite3_3.40.1_modes_pty_raw.txt"))
    for secret in SQLITE_SECRETS[:4]:
        assert secret not in out, secret
    assert "\x1b[?2004l\r\"id\" \"name\" \"password\"\r\n\"1\" \"alice\" \"[CREDENTIAL]\"\r\n" in out
    assert f"INSERT INTO accounts VALUES(1,'ops','{T}');\r\n" in out
    assert out.count(T) == 16


def test_sqlite3_command_lines() -> None:
    """``sqlite3 -separator '::' -header``, ``-separator ' | '`` and ``-ascii -header`` on a shell's line."""
    out = scrubbed((DATA / "sqlite3_3.40.1_cli_modes.txt").read_text(encoding="utf-8"))
    for secret in SQLITE_SECRETS[:3]:
        assert secret not in out, secret
    assert f"id::password\n1::{T}\n" in out and f"id | name | password\n1 | alice | {T}\n" in out
    assert f"id\x1fname\x1fpassword\x1e1\x1falice\x1f{T}\x1e" in out
    assert out.count(T) == 9


@pytest.mark.parametrize(("text", "expected"), [
    # tcl mode: escapes inside a cell, an empty (NULL) cell, CRLF
    ('sqlite> .headers on\nsqlite> .mode tcl\nsqlite> select * from t;\n"user" "token"\n"a" "tk\\"9\\n2"\n"b" ""\n',
     f'sqlite> .headers on\nsqlite> .mode tcl\nsqlite> select * from t;\n"user" "token"\n"a" "{T}"\n"b" ""\n'),
    ('sqlite> .headers on\r\nsqlite> .mode tcl\r\nsqlite> select 1;\r\n"name" "password"\r\n"al" "pw 1"\r\n',
     f'sqlite> .headers on\r\nsqlite> .mode tcl\r\nsqlite> select 1;\r\n"name" "password"\r\n"al" "{T}"\r\n'),
    # ascii mode after .headers on, and sqlite3 -ascii -header on a shell's line
    ("sqlite> .headers on\nsqlite> .mode ascii\nsqlite> select * from t;\nid\x1fapi_key\x1e1\x1fk-1\x1e2\x1fk 2\x1e"
     "sqlite> .quit\n",
     f"sqlite> .headers on\nsqlite> .mode ascii\nsqlite> select * from t;\nid\x1fapi_key\x1e1\x1f{T}\x1e2\x1f{T}\x1e"
     "sqlite> .quit\n"),
    # separators of two or three characters, quoted or bare, at the prompt and on the command line
    ('sqlite> .headers on\nsqlite> .separator " | "\nsqlite> select * from t;\nname | password\nal | a | b\n',
     f'sqlite> .headers on\nsqlite> .separator " | "\nsqlite> select * from t;\nname | password\nal | {T}\n'),
    ("sqlite> .headers on\nsqlite> .separator ::\nsqlite> select * from t;\nname::token\nal::t:k\n",
     f"sqlite> .headers on\nsqlite> .separator ::\nsqlite> select * from t;\nname::token\nal::{T}\n"),
    ('$ sqlite3 -header -separator "->" app.db "select * from t"\nname->password\nal->pw-1\n',
     f'$ sqlite3 -header -separator "->" app.db "select * from t"\nname->password\nal->{T}\n'),
    # insert mode by a CREATE TABLE over many lines: typed at the prompt (a note after a column), and .schema's
    ("sqlite> CREATE TABLE keys (\n   ...>   id INTEGER, -- the row, (its id)\n   ...>   secret TEXT\n   ...> );\n"
     "sqlite> .mode insert keys\nsqlite> select * from keys;\nINSERT INTO keys VALUES(1,'s-1');\n",
     "sqlite> CREATE TABLE keys (\n   ...>   id INTEGER, -- the row, (its id)\n   ...>   secret TEXT\n   ...> );\n"
     f"sqlite> .mode insert keys\nsqlite> select * from keys;\nINSERT INTO keys VALUES(1,'{T}');\n"),
    ("sqlite> .schema\nCREATE TABLE t (\n  a TEXT,\n  b DECIMAL(10,2),\n  password TEXT\n);\nsqlite> .mode insert t\n"
     "sqlite> select * from t;\nINSERT INTO t VALUES('x',1.5,'pw2');\n",
     "sqlite> .schema\nCREATE TABLE t (\n  a TEXT,\n  b DECIMAL(10,2),\n  password TEXT\n);\nsqlite> .mode insert t\n"
     f"sqlite> select * from t;\nINSERT INTO t VALUES('x',1.5,'{T}');\n"),
])
def test_sqlite3_forms_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    # the modes named in prose, a tcl or ascii table with no session, or with the headers off
    'Use .mode tcl to print "id" "password" as strings.\n"1" "x"\n',
    '"name" "password"\n"al" "pw"\n',
    "sqlite> .mode tcl\nsqlite> select * from t;\n\"name\" \"password\"\n\"al\" \"pw\"\n",
    "sqlite> .mode ascii\nsqlite> select * from t;\nname\x1fpassword\x1eal\x1fpw\x1e",
    # a separator that is ordinary text: no session, headers off, a header naming no credential
    "The table reads name | password, then al | pw.\nname | password\nal | pw\n",
    'sqlite> .separator " and "\nsqlite> select * from t;\nname and password\nal and pw\n',
    'sqlite> .headers on\nsqlite> .separator " - "\nsqlite> select * from t;\nname - note\nal - see the password\n',
    # a CREATE TABLE over many lines that names no credential, and INSERTs of another table
    "sqlite> .schema\nCREATE TABLE t (\n  a TEXT,\n  b TEXT\n);\nsqlite> .mode insert t\nsqlite> select * from t;\n"
    "INSERT INTO t VALUES('x','y');\n",
    "sqlite> .schema\nCREATE TABLE t (\n  a TEXT,\n  password TEXT\n);\nsqlite> .mode insert u\n"
    "sqlite> select * from u;\nINSERT INTO u VALUES('x','y');\n",
])
def test_sqlite3_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 4. redis's names in a mixed case ---------------------------------------------------------------------------------


def test_redis_conf_and_sentinel_conf_in_a_mixed_case() -> None:
    """Files redis-server and redis-sentinel 7.0.15 loaded (``CONFIG GET requirepass`` answered the password; the
    sentinel reached its master with ``auth-pass``)."""
    conf = scrubbed((DATA / "redis_7.0.15_mixed_case.conf").read_text(encoding="utf-8"))
    assert f"rEquirepass {T}\nMasterAuth {T}\n" in conf and "Mx3dCasePw" not in conf and "Up9Auth" not in conf
    sentinel = scrubbed((DATA / "sentinel_7.0.15_mixed_case.conf").read_text(encoding="utf-8"))
    assert f"Sentinel AUTH-pAss mymaster {T}\nsentinel Sentinel-pASS {T}\n" in sentinel


def test_config_set_in_a_mixed_case() -> None:
    """redis-cli 7.0.15 at its prompt (as a terminal shows it) and on a shell's line: each answered OK."""
    out = scrubbed((DATA / "redis_cli_7.0.15_mixed_case.txt").read_text(encoding="utf-8"))
    for secret in ("N3wPw-2", "M2pw-9", "kpw-7", "M3pw-4", "Mx3dCasePw"):
        assert secret not in out, secret
    assert f"> CONFIG SET rEquirePass {T}\nOK\n" in out
    assert f"> CONFIG SET maxmemory 64mb MasterAuth {T}\nOK\n" in out
    assert f"> CONFIG SET tls-key-file-PaSS {T}\nOK\n" in out
    assert f"CONFIG SET MasterAuth {T}\nOK\n" in out and f"config set maxmemory 32mb rEquirepass {T}\nOK\n" in out


@pytest.mark.parametrize(("text", "expected"), [
    ("requirePass x1y2z3\n", f"requirePass {T}\n"),
    ("  REQUIREpass 'a b'\n", f"  REQUIREpass '{T}'\n"),
    ("x\x00MasterAUTH pw-5", f"x\x00MasterAUTH {T}"),
    ("tls-client-key-file-pASS kp9\n", f"tls-client-key-file-pASS {T}\n"),
    ("SENTINEL auth-PAss mymaster my-pw\n", f"SENTINEL auth-PAss mymaster {T}\n"),
    ("127.0.0.1:6379> config set masterAuth mp-1 requirepass rp-2\n",
     f"127.0.0.1:6379> config set masterAuth {T} requirepass {T}\n"),
])
def test_redis_mixed_case_forms_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "requirepassing the thing\n", "RequirePassword x\n", "MasterAuth Setup\n", "RequirePass enabled\n",
    "MasterAuth is set below\n", "# rEquirepass foobared\n", "note: rEquirepass x\n",
    "127.0.0.1:6379> CONFIG SET maxmemory 64mb\n", "$ redis-cli config set MasterAuth\n",
    "Sentinel Auth-pAss must match the master's requirepass.\n",
])
def test_redis_mixed_case_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 5. a numbered list of quoted words in prose ----------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    'The sign-up form asks for:\n1) "password"\n2) "email"\nBoth are required.\n',
    'Fields:\n1) "password"\n2) "email"\n3) "name"\n',
    'Fields:\n  1) "password"\n  2) "email"\n',
    'Order:\n1) "token"\n2) "scope"\n\nThen call the API.\n',
])
def test_a_prose_list_of_quoted_words_is_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # redis-cli's shape: pairs, then the end, another reply, OK, a prompt
    ('1) "password"\n2) "hunter2"\nOK\n', f'1) "password"\n2) "{T}"\nOK\n'),
    ('1) "name"\n2) "al"\n3) "api_token"\n4) "tk 1"\n1) "x"\n', f'1) "name"\n2) "al"\n3) "api_token"\n4) "{T}"\n1) "x"\n'),
    (" 1) \"a\"\n 2) \"b\"\n 3) \"c\"\n 4) \"d\"\n 5) \"e\"\n 6) \"f\"\n 7) \"g\"\n 8) \"h\"\n 9) \"password\"\n"
     "10) \"pw10\"\n127.0.0.1:6379> ",
     " 1) \"a\"\n 2) \"b\"\n 3) \"c\"\n 4) \"d\"\n 5) \"e\"\n 6) \"f\"\n 7) \"g\"\n 8) \"h\"\n 9) \"password\"\n"
     f"10) \"{T}\"\n127.0.0.1:6379> "),
    # redis.conf's password names whatever follows
    ('1) "requirepass"\n2) "pw"\nSo that is set.\n', f'1) "requirepass"\n2) "{T}"\nSo that is set.\n'),
])
def test_bare_replies_in_redis_clis_shape_are_still_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 15
    assert policy.digest_under(15) == V15_DIGEST != policy.digest_under(14) == V14_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["tclPw1", "asciiPw2", "sepPw3", "insertPw4", "mixedPw5"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "tcl": f'sqlite> .headers on\nsqlite> .mode tcl\nsqlite> select 1;\n"name" "password"\n"al" "{secrets[0]}"\n',
        "ascii": f"$ sqlite3 -ascii -header a.db 'select 1'\nname\x1fpassword\x1eal\x1f{secrets[1]}\x1e",
        "sep": f"$ sqlite3 -header -separator ' | ' a.db 'select 1'\nname | password\nal | {secrets[2]}\n",
        "insert": "sqlite> .schema\nCREATE TABLE t (\n  a TEXT,\n  password TEXT\n);\nsqlite> .mode insert t\n"
                  f"sqlite> select * from t;\nINSERT INTO t VALUES('x','{secrets[3]}');\n",
        "conf": f"port 6379\nrEquirepass {secrets[4]}\n",
    })
    for secret in secrets:
        assert secret not in stored_text, secret
