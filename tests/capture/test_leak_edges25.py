"""Credentials rules version 14: what version 13 left (each taken case kept at 6ae0a3d, each look-alike left on both).

1. redis-cli's replies: RESP3 (``redis-cli -3``, ``HELLO 3``) printed to a pipe, a map a pair a line (``password
   hunter2`` after ``redis-cli -3 HGETALL user:1``), ``ACL GETUSER``'s hashes under RESP3 (``"passwords" => 1) "HASH"``
   at the prompt or with ``--no-raw``, ``passwords HASH`` to a pipe); and the numbered replies with no prompt or command line above
   them (``redis-cli --no-raw < cmds.txt``: ``1) "requirepass"`` / ``2) "S3cretPw"``). RESP3's map at the prompt and
   with ``--no-raw`` (``1# "requirepass" => "S3cretPw"``) was already read by the ``NAME => VALUE`` rule (checked
   here, both);
2. ``SENTINEL SET mymaster quorum 2 auth-pass X`` (other options set before the password) and the configuration's
   names in upper case or capitalized (``REQUIREPASS X``, ``SENTINEL AUTH-PASS m X``, ``Sentinel Sentinel-Pass X``:
   redis-server and redis-sentinel 7.0.15 load each, their names compared with strcasecmp);
3. sqlite3's list mode with a ``.separator`` (``-separator``) other than ``|``, and its ``quote`` and ``insert`` modes
   (``'id','name','password'`` over ``1,'alice','pw'``; ``INSERT INTO t(id,name,password) VALUES(1,'alice','pw');``
   with the headers on) and ``html`` mode (``<TH>`` and ``<TD>`` cells a line); ``.mode json`` was already read
   (JSON objects' keys);
4. over-redaction: a note after sentinel.conf's value on its line (``sentinel auth-pass m pw # the master's``) was
   taken with the value; a coloured ``token`` key beside ``logprob`` (a model's output token), a coloured thinking
   block's ``signature`` and a coloured bare ``key``'s path were replaced (leaks24 read a coloured key as a credential
   name, not as ordinary evidence).

The redis-cli transcripts are real (redis-cli 7.0.15 against redis-server 7.0.15 on loopback, tests/capture/data).
"""

from __future__ import annotations

import pytest
from pathlib import Path

from capture.support import DATA, recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION

T = "[CREDENTIAL]"
V13_DIGEST = "1ec392eab7ca8a1abe4d1f8000a41ab34afa6bf4aa9b26c9f92c44d0f39e7960"
V14_DIGEST = "ffb56642334b8fd49e0f2d31c34bea6979d66f97bb4548e442807a844099006a"

# redis-cli --no-raw < cmds.txt (HELLO 3, CONFIG GET requirepass, HGETALL user:1, HGET user:1 password, CONFIG GET
# *auth*, HELLO 2, CONFIG GET requirepass, HGETALL user:2, ACL SETUSER alice on >AlicePw9 ~* +@all, ACL LIST): every
# reply printed one after another, no prompt and no command line between them.
NO_RAW_PIPE = (DATA / "redis_cli_7.0.15_noraw_pipe.txt").read_text(encoding="utf-8")
# `$ redis-cli -p 6379 -3 ...` lines each followed by what redis-cli printed to a pipe.
RESP3_PIPE = (DATA / "redis_cli_7.0.15_resp3_pipe.txt").read_text(encoding="utf-8")


# -- 1. redis-cli's replies ------------------------------------------------------------------------------------------


def test_replies_printed_with_no_command_line() -> None:
    out = scrubbed(NO_RAW_PIPE)
    # RESP3's maps (already read at 6ae0a3d: NAME => VALUE)
    assert '1# "requirepass" => "[CREDENTIAL]"' in out
    assert '2# "password" => "[CREDENTIAL]"' in out
    assert '2# "masterauth" => "[CREDENTIAL]"' in out
    # RESP2's numbered replies after HELLO 2 (kept at 6ae0a3d)
    assert '1) "requirepass"\n2) "[CREDENTIAL]"\n' in out
    assert '3) "api_token"\n4) "[CREDENTIAL]"\n' in out
    assert '1) "user alice on #[CREDENTIAL] ~* resetchannels +@all"' in out
    assert '2) "user default on #[CREDENTIAL] ~* &* +@all"' in out
    # HELLO 2's reply, the names beside the credentials and HGET's bare reply (no field named) are left
    assert ' 1) "server"\n 2) "redis"\n' in out and '10) "standalone"' in out
    assert '1) "name"\n2) "alice"\n' in out
    assert '\n"hunter2"\n' in out
    assert "S3cretPw" not in out and "tk my 42" not in out and "MasterPw9" not in out


def test_resp3_replies_printed_to_a_pipe() -> None:
    out = scrubbed(RESP3_PIPE)
    assert "name bob\npassword [CREDENTIAL]\n" in out
    assert "name alice\napi_token [CREDENTIAL]\n" in out
    assert "requirepass [CREDENTIAL]\n" in out
    assert "tls-key-file-pass \n" in out  # an empty value
    assert "hunter2" not in out and "tk my 42" not in out and "S3cretPw" not in out


# `$ redis-cli -p 6379 -3 [--no-raw] ACL GETUSER alice|bob` lines each followed by what redis-cli printed (alice has two
# passwords, bob one).
RESP3_ACL = (DATA / "redis_cli_7.0.15_resp3_acl.txt").read_text(encoding="utf-8")
HASHES = ("bbae3d542cda94a679e2cab87489b19b0a4ecce27fad1ed0f6d2f8437faf4f39",
          "4c07b7453e703a3ecbe93ef0e69324d974a9b6efcabde073a632fcd75307ac35",
          "3d2d280bee38b4b986e5207fa15e2000cc97775de5f9c8e2dde604a7dd33d01e")


def test_resp3_acl_getuser_hashes() -> None:
    out = scrubbed(RESP3_ACL)
    assert not any(digest in out for digest in HASHES)
    assert f"passwords {T}\n{T}\ncommands +@all\n" in out and f"passwords {T}\ncommands" in out
    assert f'2# "passwords" => \n   1) "{T}"\n   2) "{T}"\n3# "commands" => "+@all"' in out
    assert f'2# "passwords" => 1) "{T}"\n' in out
    assert '1# "flags" => 1~ "on"' in out and "flags on\n" in out


@pytest.mark.parametrize(("text", "expected"), [
    ('1) "requirepass"\n2) "S3cretPw"\n', f'1) "requirepass"\n2) "{T}"\n'),
    ('1) "name"\r\n2) "bob"\r\n3) "password"\r\n4) "hunter2"\r\n', f'1) "name"\r\n2) "bob"\r\n3) "password"\r\n4) "{T}"\r\n'),
    # after prose, a markdown quote or a prompt not opening its line (rows that were look-alikes in test_leak_edges22)
    ('The script printed:\n1) "masterauth"\n2) "MasterPw9"', f'The script printed:\n1) "masterauth"\n2) "{T}"'),
    ('> CONFIG GET requirepass\n1) "requirepass"\n2) "x"\n', f'> CONFIG GET requirepass\n1) "requirepass"\n2) "{T}"\n'),
    ('note: 127.0.0.1:6379> CONFIG GET requirepass\n1) "requirepass"\n2) "x"\n',
     f'note: 127.0.0.1:6379> CONFIG GET requirepass\n1) "requirepass"\n2) "{T}"\n'),
    # ACL LIST's reply, and one reply right after another (numbered from 1 again)
    (f'1) "user bob on #{"ab" * 32} ~* +@all"\n', f'1) "user bob on #{T} ~* +@all"\n'),
    ('1) "maxmemory"\n2) "0"\n1) "requirepass"\n2) "pw2"\n', f'1) "maxmemory"\n2) "0"\n1) "requirepass"\n2) "{T}"\n'),
    # in a JSON string's text, as a tool's result holds it (a NUL joins a step's texts: the next one's start)
    ('x\x001) "requirepass"\n2) "pw3"', f'x\x001) "requirepass"\n2) "{T}"'),
    # RESP3 printed to a pipe, options before and after -3 (CONFIG GET's "masterauth X" line is redis.conf's form, read
    # at 6ae0a3d)
    ("$ redis-cli -h db -3 --no-auth-warning HGETALL user:1\nname bob\npassword hunter2\n",
     f"$ redis-cli -h db -3 --no-auth-warning HGETALL user:1\nname bob\npassword {T}\n"),
])
def test_redis_replies_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    '1) "maxmemory"\n2) "0"\n',  # an ordinary parameter
    '1) "name"\n2) "password"\n3) "note"\n4) "token"\n',  # values that are credential words
    '1) "tls-key-file-pass"\n2) ""\n',  # an empty value
    'Steps:\n1) "password" is the field\n2) "hunter2" its value\n',  # a numbered list in prose, more than a string
    'x 1) "requirepass"\n2) "pw"\n',  # not opening its line
    "$ redis-cli -3 HGETALL user:1\nname bob\nnote the password below\n",  # a name holding... the reply's end
    "$ redis-cli HGETALL user:1\nname bob\npassword hunter2\n",  # RESP2 to a pipe: a string a line ("password
    # hunter2" is a line of its own, no name)
])
def test_redis_reply_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 2. SENTINEL SET's other options, names in any case ---------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:26379> SENTINEL SET mymaster quorum 2 auth-pass NewPw7",
     f"127.0.0.1:26379> SENTINEL SET mymaster quorum 2 auth-pass {T}"),
    ("$ redis-cli -p 26379 sentinel set mymaster down-after-milliseconds 5000 auth-pass NewPw8 quorum 1",
     f"$ redis-cli -p 26379 sentinel set mymaster down-after-milliseconds 5000 auth-pass {T} quorum 1"),
    ('127.0.0.1:26379> SENTINEL SET mymaster failover-timeout 60000 parallel-syncs 1 AUTH-PASS "a pw"',
     f'127.0.0.1:26379> SENTINEL SET mymaster failover-timeout 60000 parallel-syncs 1 AUTH-PASS "{T}"'),
    # the files' names in upper case or capitalized (redis-sentinel 7.0.15 loads each)
    ("SENTINEL AUTH-PASS mymaster MasterUpperPw\n", f"SENTINEL AUTH-PASS mymaster {T}\n"),
    ("Sentinel Sentinel-Pass SentUpperPw\n", f"Sentinel Sentinel-Pass {T}\n"),
    ('TLS-KEY-FILE-PASS "KeyUpperPw"\n', f'TLS-KEY-FILE-PASS "{T}"\n'),
    ("Tls-Client-Key-File-Pass KeyPw\n", f"Tls-Client-Key-File-Pass {T}\n"),
    ("port 6379\nREQUIREPASS S3cretPw\nMASTERAUTH MasterPw9\n", f"port 6379\nREQUIREPASS {T}\nMASTERAUTH {T}\n"),
    ("Requirepass S3cretPw", f"Requirepass {T}"),
    ("127.0.0.1:6379> CONFIG SET REQUIREPASS NewPw9", f"127.0.0.1:6379> CONFIG SET REQUIREPASS {T}"),
    ("127.0.0.1:6379> CONFIG SET TLS-KEY-FILE-PASS NewPw9", f"127.0.0.1:6379> CONFIG SET TLS-KEY-FILE-PASS {T}"),
])
def test_sentinel_set_and_names_in_any_case_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "SENTINEL SET mymaster quorum 2\n",
    "SENTINEL AUTH-USER mymaster bob\n",
    "# REQUIREPASS foobared\n",
    "The REQUIREPASS directive sets it\n",
    "REQUIREPASS is what redis reads\n",  # more than one word: redis refuses the line
    "127.0.0.1:26379> SENTINEL SET mymaster quorum 2 auth-user bob",
    "X-PASS value\n",
])
def test_sentinel_and_upper_case_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. sqlite3's list mode with another separator ---------------------------------------------------------------------

# sqlite3 3.40.1's output (the `sqlite> ` lines as typed, the rows as it printed them).
SEPARATED = """sqlite> .headers on
sqlite> .separator ";"
sqlite> select * from users;
id;name;password
1;alice;Tr0ub4dor&3
2;bob;hunter2 x
sqlite> .separator "\\t"
sqlite> select * from users;
id\tname\tpassword
1\talice\tTr0ub4dor&3
2\tbob\thunter2 x
sqlite> .separator :
sqlite> select name, password from users;
name:password
alice:Tr0ub4dor&3
bob:hunter2 x
sqlite> .mode list
sqlite> select name, password from users;
name|password
alice|Tr0ub4dor&3
bob|hunter2 x
"""


def test_sqlite_separators_at_the_prompt() -> None:
    out = scrubbed(SEPARATED)
    assert "Tr0ub4dor" not in out and "hunter2" not in out
    assert out.count(T) == 8
    assert "1;alice;[CREDENTIAL]\n" in out and "alice:[CREDENTIAL]\n" in out and "alice|[CREDENTIAL]\n" in out


@pytest.mark.parametrize(("text", "expected"), [
    ('$ sqlite3 -header -list -separator ";" app.db "select * from users"\nid;name;password\n1;alice;a;b pw\n',
     f'$ sqlite3 -header -list -separator ";" app.db "select * from users"\nid;name;password\n1;alice;{T}\n'),
    ("$ sqlite3 -header -separator : app.db 'select name, token from keys'\nname:token\nci:tk-9:x\n",
     f"$ sqlite3 -header -separator : app.db 'select name, token from keys'\nname:token\nci:{T}\n"),
])
def test_sqlite_separator_flags(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    # headers off (a separator of two characters, left by v14, is read since v15: test_leak_edges26)
    'sqlite> .separator ";"\nsqlite> select name, password from users;\nalice;Tr0ub4dor&3\n',
])
def test_sqlite_separator_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# sqlite3 3.40.1's quote and insert modes (the `sqlite> ` lines as typed, the rows as it printed them: a string's quote
# doubled, NULL, a blob).
QUOTE_AND_INSERT = """sqlite> .headers on
sqlite> .mode insert users
sqlite> select * from users;
INSERT INTO users(id,name,password) VALUES(1,'alice','Tr0ub4dor&3');
INSERT INTO users(id,name,password) VALUES(2,'bob','hunter2 x');
INSERT INTO users(id,name,password) VALUES(3,'o''neil','it''s a pw');
INSERT INTO users(id,name,password) VALUES(4,NULL,NULL);
INSERT INTO users(id,name,password) VALUES(5,'x',X'0102');
sqlite> .mode quote
sqlite> select * from users;
'id','name','password'
1,'alice','Tr0ub4dor&3'
2,'bob','hunter2 x'
3,'o''neil','it''s a pw'
4,NULL,NULL
5,'x',X'0102'
sqlite> .mode insert
sqlite> select name, password as "api key" from users where id < 3;
INSERT INTO "table"(name,"api key") VALUES('alice','Tr0ub4dor&3');
INSERT INTO "table"(name,"api key") VALUES('bob','hunter2 x');
sqlite> .quit
"""


def test_sqlite_quote_and_insert_modes() -> None:
    out = scrubbed(QUOTE_AND_INSERT)
    assert "Tr0ub4dor" not in out and "hunter2" not in out and "it''s" not in out
    assert "VALUES(3,'o''neil','[CREDENTIAL]');" in out and "VALUES(4,NULL,NULL);" in out
    assert "5,'x',X'0102'\n" in out and "'id','name','password'\n1,'alice','[CREDENTIAL]'\n" in out
    assert """INSERT INTO "table"(name,"api key") VALUES('bob','[CREDENTIAL]');""" in out
    assert out.count(T) == 8


@pytest.mark.parametrize(("text", "expected"), [
    ("$ sqlite3 -header -quote app.db 'select name, token from keys'\n'name','token'\n'ci','tk-9'\n",
     f"$ sqlite3 -header -quote app.db 'select name, token from keys'\n'name','token'\n'ci','{T}'\n"),
    ("sqlite> .headers on\nsqlite> .mode insert t\nsqlite> select * from t;\nINSERT INTO t(user,password) VALUES('bob',"
     "'p,w');\r\n", "sqlite> .headers on\nsqlite> .mode insert t\nsqlite> select * from t;\n"
     f"INSERT INTO t(user,password) VALUES('bob','{T}');\r\n"),
])
def test_sqlite_quote_and_insert_lines(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


# insert mode with the headers off (sqlite3 3.40.1): the columns by the table's CREATE TABLE, as .schema printed it
SCHEMA_INSERTS = """sqlite> .schema users
CREATE TABLE users(id integer primary key, name text, password text, price decimal(10,2), UNIQUE(name));
sqlite> .mode insert users
sqlite> select * from users;
INSERT INTO users VALUES(1,'alice','Tr0ub4dor&3',1.5);
INSERT INTO users VALUES(2,'bob','hunter2 x',2);
sqlite> .mode insert
sqlite> select * from users;
INSERT INTO "table" VALUES(1,'alice','Tr0ub4dor&3',1.5);
"""


def test_sqlite_insert_mode_by_the_tables_schema() -> None:
    out = scrubbed(SCHEMA_INSERTS)
    assert "INSERT INTO users VALUES(1,'alice','[CREDENTIAL]',1.5);\nINSERT INTO users VALUES(2,'bob','[CREDENTIAL]',2);" in out
    # no table named (.mode insert alone writes "table"): no schema tells its columns, left
    assert out.endswith("""INSERT INTO "table" VALUES(1,'alice','Tr0ub4dor&3',1.5);\n""")


def test_sqlite_insert_mode_by_a_create_table_typed_at_the_prompt() -> None:
    text = ("sqlite> create table t(user text, \"api key\" text);\nsqlite> .mode insert t\nsqlite> select * from t;\n"
            "INSERT INTO t VALUES('bob','k-123');\n")
    assert scrubbed(text) == text.replace("'k-123'", f"'{T}'")


@pytest.mark.parametrize("text", [
    # the headers off: no column names (left)
    "sqlite> .mode insert\nsqlite> select * from users;\nINSERT INTO \"table\" VALUES(1,'alice','Tr0ub4dor&3');\n",
    # a table created with no credential column, another table's schema
    "sqlite> create table t(a text, b text);\nsqlite> .mode insert t\nsqlite> select * from t;\nINSERT INTO t VALUES('x','y');\n",
    "sqlite> create table u(a text, password text);\nsqlite> .mode insert t\nsqlite> select * from t;\n"
    "INSERT INTO t VALUES('x','y');\n",
    "sqlite> .mode quote\nsqlite> select * from users;\n1,'alice','Tr0ub4dor&3'\n",
    # an INSERT written in code or prose, no sqlite3 session printing it
    "INSERT INTO users(id,password) VALUES(1,'Tr0ub4dor&3');\n",
    "$ sqlite3 app.db \"INSERT INTO users(name,password) VALUES('bob','x')\"\n",
    # a line that is no row (not closed by ');'): nothing of it read
    "sqlite> .headers on\nsqlite> .mode insert t\nsqlite> select * from t;\nINSERT INTO t(user,password) VALUES('bob','pw'),\n",
    # a quote-mode header naming no credential
    "sqlite> .headers on\nsqlite> .mode quote\nsqlite> select * from t;\n'id','name'\n1,'bob'\n",
])
def test_sqlite_quote_and_insert_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# sqlite3 3.40.1's html mode, a cell a line, its values' characters written as entities (NULL an empty cell).
HTML = """sqlite> .headers on
sqlite> .mode html
sqlite> select * from users where id <> 5;
<TR><TH>id</TH>
<TH>name</TH>
<TH>password</TH>
</TR>
<TR><TD>1</TD>
<TD>alice</TD>
<TD>Tr0ub4dor&amp;3</TD>
</TR>
<TR><TD>2</TD>
<TD>bob</TD>
<TD>hunter2 x</TD>
</TR>
<TR><TD>3</TD>
<TD>o&#39;neil</TD>
<TD>it&#39;s a pw</TD>
</TR>
<TR><TD>4</TD>
<TD></TD>
<TD></TD>
</TR>
sqlite> select 1;
<TR><TH>1</TH>
</TR>
<TR><TD>1</TD>
</TR>
"""


def test_sqlite_html_mode() -> None:
    expected = (HTML.replace("Tr0ub4dor&amp;3", T).replace("hunter2 x", T).replace("it&#39;s a pw", T))
    assert scrubbed(HTML) == expected


@pytest.mark.parametrize("text", [
    # the headers off (each row's cells only), a header naming no credential
    '$ sqlite3 -html app.db "select name, password from users"\n<TR><TD>alice</TD>\n<TD>Tr0ub4dor&amp;3</TD>\n</TR>\n',
    "sqlite> .headers on\nsqlite> .mode html\nsqlite> a;\n<TR><TH>id</TH>\n<TH>name</TH>\n</TR>\n<TR><TD>1</TD>\n"
    "<TD>bob</TD>\n</TR>\n",
    # an HTML table no sqlite3 session prints
    "<TR><TH>user</TH>\n<TH>password</TH>\n</TR>\n<TR><TD>bob</TD>\n<TD>Tr0ub4dor</TD>\n</TR>\n",
])
def test_sqlite_html_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_sqlite_json_mode_was_already_read() -> None:
    """sqlite3 -json's rows are JSON objects: their keys are read as any JSON's (at 6ae0a3d too; a guard)."""
    text = ('$ sqlite3 -json app.db "select * from users"\n[{"id":1,"name":"alice","password":"Tr0ub4dor&3"},\n'
            '{"id":2,"name":"bob","password":"hunter2 x"}]\n')
    assert scrubbed(text) == text.replace("Tr0ub4dor&3", T).replace("hunter2 x", T)


# -- 4. over-redaction ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("sentinel auth-pass mymaster pw9x # the master's password, see docs\n",
     f"sentinel auth-pass mymaster {T} # the master's password, see docs\n"),
    ("sentinel auth-pass mymaster pw9x -- the master's password\n",
     f"sentinel auth-pass mymaster {T} -- the master's password\n"),
    ("sentinel sentinel-pass Sp9 \u2014 the other sentinels' password\n",
     f"sentinel sentinel-pass {T} \u2014 the other sentinels' password\n"),
])
def test_a_note_after_sentinels_value_is_kept(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    # as CONFIG REWRITE writes a password holding blanks, a '#' inside a word: the rest of the line still
    ("sentinel auth-pass mymaster my s3cret pw\n", f"sentinel auth-pass mymaster {T}\n"),
    ("sentinel auth-pass mymaster pw#9 x-y\n", f"sentinel auth-pass mymaster {T}\n"),
    ("sentinel auth-pass mymaster #pw9x\n", f"sentinel auth-pass mymaster {T}\n"),
])
def test_sentinels_value_without_a_note_is_the_rest_of_its_line(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def _captured(data: object) -> object:
    return apply_policy(load_policy(env={}), "tool_call", {"result": data}).data["result"]


@pytest.mark.parametrize("data", [
    {"\x1b[1mtoken\x1b[0m": "Hello", "logprob": -0.25},
    {"token": " world", "\x1b[1mlogprob\x1b[0m": -0.5},
    {"\x1b[32mtoken\x1b[0m": "Hello", "\x1b[32mlogprob\x1b[0m": -0.25, "bytes": [72, 101]},
    {"\x1b[1mtoken\x1b[0m": {"id": 15043, "text": "Hello", "\x1b[1mlogprob\x1b[0m": -0.5}},  # TGI's
    {"type": "thinking", "thinking": "x", "\x1b[1msignature\x1b[0m": "EqQBCkYIBxgCKkA"},
    {"\x1b[1mkey\x1b[0m": "reports/2026/q3.csv"},
])
def test_a_coloured_ordinary_member_is_left(data: object) -> None:
    assert _captured(data) == data


@pytest.mark.parametrize(("data", "expected"), [
    ({"\x1b[1mtoken\x1b[0m": "tk-abc123"}, {"\x1b[1mtoken\x1b[0m": T}),
    ({"\x1b[1mtoken\x1b[0m": "tk-abc123", "note": "logprob"}, {"\x1b[1mtoken\x1b[0m": T, "note": "logprob"}),
    ({"\x1b[1mkey\x1b[0m": "q8Zr2Lx9Pw7mN3vB"}, {"\x1b[1mkey\x1b[0m": T}),
    ({"\x1b[1msignature\x1b[0m": "EqQBCkYIBxgCKkA", "type": "text"}, {"\x1b[1msignature\x1b[0m": T, "type": "text"}),
])
def test_a_coloured_credential_beside_no_such_member_is_taken(data: object, expected: object) -> None:
    assert _captured(data) == expected


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 14
    assert policy.digest_under(14) == V14_DIGEST != policy.digest_under(13) == V13_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["bareReplyPw1", "resp3Pw2", "setPw3", "upperPw4", "sepPw5"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "bare": f'1) "requirepass"\n2) "{secrets[0]}"\n',
        "resp3": f"$ redis-cli -3 HGETALL user:1\nname bob\npassword {secrets[1]}\n",
        "set": f"127.0.0.1:26379> SENTINEL SET mymaster quorum 2 auth-pass {secrets[2]}\n",
        "upper": f"SENTINEL AUTH-PASS mymaster {secrets[3]}\n",
        "separator": f'sqlite> .headers on\nsqlite> .separator ":"\nsqlite> select user, password from u;\n'
                     f"user:password\nbob:{secrets[4]}\n",
        "logprobs": [{"\x1b[1mtoken\x1b[0m": "Hello", "logprob": -0.25}],
    }, "leak-edges25")
    assert T in stored_text and "Hello" in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret
