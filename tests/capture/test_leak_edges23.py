"""Credentials rules version 13 stored as written at 5cd2c08 (leaks22's rules version 13, before this round):

1. mysql's (and MariaDB's) ``authentication_string``, the password's hash, was read only as a table's column and as a
   ``NAME: VALUE`` line's name: as a JSON key (what a database tool or an MCP server returns, MariaDB's
   ``mysql.global_priv`` JSON), in data, ``authentication_string=...`` in a log or URL, a flag, it was kept. It is now
   a credential name every rule reads (``TOOL_SECRET_NAMES``), as ``requirepass`` is;
2. a Redis ACL file's lines (``users.acl``, ``redis.conf``'s ``user`` lines: ``user alice on >PASSWORD ~* +@all``),
   the files as redis-server 7.0.15 writes (``ACL SAVE``) and loads them (tests/capture/data).

Each is set beside the look-alikes that are left.
"""

from __future__ import annotations

import pytest
from capture.support import DATA, scrubbed

from bitexact.capture import apply_policy, load_policy

T = "[CREDENTIAL]"
HASH = "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9"
"""mysql_native_password's hash of a password, as ``authentication_string`` holds it."""
SHA2 = "$A$005$K~x6k0aDkP5JgjqDd6aQ7tIzXcEw1E9zH7VuyGdVoY3nM8WnDpsQ.bUEe7"
"""caching_sha2_password's hash (its salt's characters: no line break or quote in this one)."""


# -- 1. authentication_string as a credential name --------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    # a database tool's or an MCP server's JSON row, compact and spaced
    (f'{{"user": "root", "host": "localhost", "authentication_string": "{HASH}"}}',
     f'{{"user": "root", "host": "localhost", "authentication_string": "{T}"}}'),
    (f'[{{"User":"app","authentication_string":"{SHA2}","plugin":"caching_sha2_password"}}]',
     f'[{{"User":"app","authentication_string":"{T}","plugin":"caching_sha2_password"}}]'),
    # MariaDB's mysql.global_priv: its Priv column is a JSON document
    (f'| localhost | root | {{"access":18446744073709551615,"plugin":"mysql_native_password",'
     f'"authentication_string":"{HASH}","password_last_changed":1700000000}} |',
     f'| localhost | root | {{"access":18446744073709551615,"plugin":"mysql_native_password",'
     f'"authentication_string":"{T}","password_last_changed":1700000000}} |'),
    # a log line, a URL's query, an upper-case environment name, a flag, a JavaScript object
    (f"2026-12-01 10:00:01 DEBUG user=root authentication_string={HASH} plugin=mysql_native_password",
     f"2026-12-01 10:00:01 DEBUG user=root authentication_string={T} plugin=mysql_native_password"),
    (f"GET /api/users?name=root&authentication_string={HASH}&page=2 HTTP/1.1",
     f"GET /api/users?name=root&authentication_string={T}&page=2 HTTP/1.1"),
    (f"AUTHENTICATION_STRING={HASH}", f"AUTHENTICATION_STRING={T}"),
    (f"$ mytool --authentication_string {HASH}", f"$ mytool --authentication_string {T}"),
    (f'{{user: "root", authentication_string: "{HASH}"}}', f'{{user: "root", authentication_string: "{T}"}}'),
])
def test_authentication_string_is_a_credential_name_in_every_rule(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_authentication_string_in_data_is_taken() -> None:
    """A tool's result as data (an MCP server's rows): the member under the name, in any case."""
    data = {"rows": [{"user": "root", "authentication_string": HASH}, {"user": "app", "AUTHENTICATION_STRING": SHA2}]}
    captured = apply_policy(load_policy(env={}), "tool_call", data)
    assert captured.data == {"rows": [{"user": "root", "authentication_string": T},
                                      {"user": "app", "AUTHENTICATION_STRING": T}]}


def test_mysqls_vertical_output_keeps_its_next_column_under_an_empty_hash() -> None:
    """mysql's ``\\G`` output right-aligns its names: an ``auth_socket`` user's empty ``authentication_string:``
    stands over the next column's line, indented deeper, which is no YAML block of it."""
    text = ("*************************** 1. row ***************************\n"
            "                 user: app\n"
            "authentication_string: \n"
            "               plugin: auth_socket\n")
    assert scrubbed(text) == text


@pytest.mark.parametrize("text", [
    "The hash is in the authentication_string column: select it with care.\n",
    "GET /docs?q=authentication_string&lang=en HTTP/1.1\n",  # the name as a value
    '{"column": "authentication_string", "type": "text"}',  # a schema naming the column
    "authentication_string_length=41\n",  # another name that starts so
    '{"authentication_string": ""}',  # an empty hash (auth_socket)
])
def test_authentication_string_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_wrapped_clients_url_rule_stays_the_tables() -> None:
    """The detector's names are not the SDK's: a wrapped HTTP client's URL is redacted by the credential table
    (protocol-vectors.json), as every SDK's is, so ``authentication_string`` there is left to the text rules."""
    from bitexact.sdk.http.credentials import CREDENTIAL_KEYS

    assert "authentication_string" not in CREDENTIAL_KEYS


# -- 2. a Redis ACL file's lines ---------------------------------------------------------------------------------------


def test_an_acl_file_redis_saved_keeps_no_hash() -> None:
    """``ACL SAVE``'s users.acl (redis-server 7.0.15): each user's SHA-256 hashes, ``#HASH``; the rest kept."""
    text = (DATA / "redis_7.0.15_acl_save.acl").read_text(encoding="utf-8")
    out = scrubbed(text)
    assert out == (f"user alice on #{T} ~* resetchannels +@all\n"
                   f"user bob on #{T} #{T} ~cache:* &* -@all +get (~x* resetchannels -@all +set)\n"
                   "user carol off resetchannels -@all\n"
                   "user default on nopass ~* &* +@all\n")


def test_a_hand_written_acl_file_and_redis_conf_keep_no_password() -> None:
    """A users.acl and a redis.conf as written by hand (redis-server 7.0.15 loads both, each user logs in): the
    ``>PASSWORD`` rules, quoted too in redis.conf (whose lines are read as redis-cli reads words)."""
    acl = (DATA / "redis_7.0.15_hand.acl").read_text(encoding="utf-8")
    assert scrubbed(acl) == f"user erin on >{T} allkeys allcommands\nuser default on nopass ~* &* +@all\n"
    conf = (DATA / "redis_7.0.15_redis.conf").read_text(encoding="utf-8")
    assert scrubbed(conf) == (f"port 16424\nbind 127.0.0.1\nrequirepass {T}\nmasterauth {T}\n"
                              f'user frank on >{T} ~* +@all\nuser dave on ">{T}" ~* +@all\n')


@pytest.mark.parametrize(("text", "expected"), [
    ("$ cat /etc/redis/users.acl\nuser alice on >s3cr3tPw ~* +@all\n",
     f"$ cat /etc/redis/users.acl\nuser alice on >{T} ~* +@all\n"),
    ("    user alice on >s3cr3tPw <oldPw ~* +@all\r\n", f"    user alice on >{T} <{T} ~* +@all\r\n"),
    ("user worker on >p1 >p2 %R~jobs:* +@read", f"user worker on >{T} >{T} %R~jobs:* +@read"),
])
def test_acl_lines_are_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "user alice on the team > others, see +@all\n",  # a word that is no ACL rule: prose
    "2026-12-01 10:00:01 INFO user alice on >s3cr3tPw ~* +@all\n",  # not opening its line
    "the user alice on >s3cr3tPw ~* +@all\n",
    "user default on nopass ~* &* +@all\n",  # no password
    "user alice on resetpass offline\n",  # a word that starts as a rule does
    "superuser alice on >s3cr3tPw ~* +@all\n",
])
def test_acl_line_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. a terminal's raw transcript -----------------------------------------------------------------------------------


def test_a_raw_sqlite3_pty_transcript_keeps_no_password() -> None:
    """sqlite3 3.40.1 on a pty, as ``script`` records it (tests/capture/data: every byte the terminal received,
    readline's ``ESC[?2004h`` before each ``sqlite> `` and ``ESC[?2004l`` plus a carriage return before each first
    printed line, a CSV row's CRLF written CR CR LF): list mode with its header, a statement over two lines (``...> ``),
    ``.mode csv`` with the headers on, ``.mode line`` and ``.mode column``. At 5cd2c08 one value of nine was taken."""
    text = (DATA / "sqlite3_3.40.1_pty_raw.txt").read_bytes().decode("utf-8")
    out = scrubbed(text)
    assert "hunter2x" not in out and "pw|with|pipe" not in out
    assert out.count(T) == 9
    assert "\x1b[?2004l\rname|password\r\nbob|[CREDENTIAL]\r\nal|[CREDENTIAL]\r\n" in out  # the last column whole
    assert "\x1b[?2004l\rid,name,password\r\r\n1,bob,[CREDENTIAL]\r\r\n" in out
    assert "\x1b[?2004l\r      id = 1\r\n    name = bob\r\npassword = [CREDENTIAL]\r\n" in out


def test_a_raw_bash_pty_transcript_keeps_no_password() -> None:
    """bash 5.2.15 on a pty (its prompt ``$ ``, readline's bracketed paste around each command): ``cat users.csv``,
    ``sqlite3 -header`` and ``sqlite3 -csv -header`` print their header after ``ESC[?2004l`` and a carriage return.
    At 5cd2c08 none of the five values was taken."""
    text = (DATA / "bash_5.2.15_pty_raw.txt").read_bytes().decode("utf-8")
    out = scrubbed(text)
    for secret in ("hunter3y", "hunter2x", "pw|with|pipe"):
        assert secret not in out, secret
    assert out.count(T) == 5


@pytest.mark.parametrize("text", [
    # escape codes before no prompt, a prompt after other text, rows with no header: as on a terminal with none
    "\x1b[?2004h$ sqlite3 /tmp/a.db \"select name, password from users\"\r\n\x1b[?2004l\rbob|hunter2x\r\n",
    "\x1b[32mINFO\x1b[0m sqlite> select * from users;\r\n\x1b[?2004l\rname|password\r\nbob|hunter2x\r\n",
    "\x1b[?2004hsqlite> .headers off\r\n\x1b[?2004l\r\x1b[?2004hsqlite> select * from users;\r\n"
    "\x1b[?2004l\rname|password\r\nbob|hunter2x\r\n",  # headers off: the first line is a row that reads as names
    # (a bold CSV header on a text's first line is read as on the screen since ansi23: test_terminal_codes23.py)
])
def test_raw_transcript_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text
