"""Credentials the default policy stored as written at 0de516f (rules version 12), scrubbed by rules version 13:

1. mysql's (and MariaDB's) ``authentication_string`` column of ``mysql.user``, the password's hash: in a table the
   client prints (boxed, ``-B``'s tab-separated) and in its vertical ``\\G`` output's ``NAME: VALUE`` line;
2. MariaDB's ``mariadb`` client wherever ``mysql`` was read as a line that prints a table (``mariadb -B`` / ``-e``,
   ``echo ... | mariadb -B``);
3. sqlite3's ``list`` mode (its default: ``|`` between cells) with its header (``sqlite3 -header``, ``.headers on``),
   its ``line`` mode's value holding a ``,`` (the key-value rule took the part before it), ``.mode box``'s table
   drawn with box-drawing characters, and a client's row whose value holds a ``|`` (sqlite3's, mysql's, psql's);
4. redis-cli's replies at its prompt (``CONFIG GET requirepass``, ``HGETALL``, ``ACL GETUSER``'s password hashes,
   ``ACL LIST``'s rules, ``HGET`` of a password field) and what it takes (``ACL SETUSER ... >password``, ``HSET``'s
   password fields), and the same replies printed to a pipe under ``redis-cli ... CONFIG GET requirepass`` on a
   shell's line; read from real transcripts (redis-cli 7.0.15, sqlite3 3.40.1 on a terminal, redis-cli to a pipe;
   tests/capture/data).

Each is set beside the look-alikes that are left.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from capture.support import DATA, recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION

T = "[CREDENTIAL]"
V12_DIGEST = "62c66fdbf1689a9249e99afab068d53022dfd86e093f25510f0a12da71ea7b3e"
V13_DIGEST = "1ec392eab7ca8a1abe4d1f8000a41ab34afa6bf4aa9b26c9f92c44d0f39e7960"
LOG = "".join(f"2026-12-01 10:{n // 60:02d}:{n % 60:02d} INFO step {n} done\n" for n in range(1, 200))
"""199 lines: a table printed after them starts on line 201, past the 64 lines a header is looked for in."""
HASH = "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9"
"""mysql_native_password's hash of a password, as ``authentication_string`` holds it."""


# -- 1. mysql's authentication_string --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("mysql> select user, authentication_string from mysql.user;\n"
     "+------+-------------------------------------------+\n"
     "| user | authentication_string                     |\n"
     "+------+-------------------------------------------+\n"
     f"| root | {HASH} |\n"
     "+------+-------------------------------------------+\n1 row in set (0.00 sec)\n",
     "mysql> select user, authentication_string from mysql.user;\n"
     "+------+-------------------------------------------+\n"
     "| user | authentication_string                     |\n"
     "+------+-------------------------------------------+\n"
     f"| root | {T} |\n"
     "+------+-------------------------------------------+\n1 row in set (0.00 sec)\n"),
    (f'$ mysql -B -e "select user, authentication_string from mysql.user"\nuser\tauthentication_string\nroot\t{HASH}\n',
     f'$ mysql -B -e "select user, authentication_string from mysql.user"\nuser\tauthentication_string\nroot\t{T}\n'),
    ("mysql> select user, authentication_string, plugin from mysql.user\\G\n"
     "*************************** 1. row ***************************\n"
     "                 user: root\n"
     f"authentication_string: {HASH}\n"
     "               plugin: mysql_native_password\n"
     "*************************** 2. row ***************************\n"
     "                 user: app\n"
     "authentication_string: \n"  # auth_socket: empty, and the next line is a column, not a YAML block's
     "               plugin: auth_socket\n",
     "mysql> select user, authentication_string, plugin from mysql.user\\G\n"
     "*************************** 1. row ***************************\n"
     "                 user: root\n"
     f"authentication_string: {T}\n"
     "               plugin: mysql_native_password\n"
     "*************************** 2. row ***************************\n"
     "                 user: app\n"
     "authentication_string: \n"
     "               plugin: auth_socket\n"),
    (f" usename | authentication_string \n---------+------------------------\n bob     | {HASH}\n",
     f" usename | authentication_string \n---------+------------------------\n bob     | {T}\n"),
])
def test_mysqls_authentication_string_column_is_taken(text: str, expected: str) -> None:
    assert scrubbed(LOG + text) == LOG + expected
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    # a select of ordinary columns, the name in prose or as a URL's value (rules version 13 reads the name as a
    # credential name in every rule: `authentication_string=x` is taken, tests/capture/test_leak_edges23.py)
    "mysql> select user, plugin from mysql.user;\n+------+-----------------------+\n| user | plugin                |\n"
    "+------+-----------------------+\n| root | mysql_native_password |\n+------+-----------------------+\n",
    "The hash is in the authentication_string column: select it with care.\n",
    "GET /docs?q=authentication_string&lang=en HTTP/1.1\n",
    "see authentication_string: the column of mysql.user that holds the hash\n",
])
def test_authentication_string_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # SHOW CREATE USER and a dump: the same hash as a statement (MySQL's AS, MariaDB's VIA ... USING)
    (f"CREATE USER `root`@`localhost` IDENTIFIED WITH 'mysql_native_password' AS '{HASH}' REQUIRE NONE",
     f"CREATE USER `root`@`localhost` IDENTIFIED WITH 'mysql_native_password' AS '{T}' REQUIRE NONE"),
    ("CREATE USER 'app'@'%' IDENTIFIED WITH caching_sha2_password AS 0x2441243030350D1F",
     f"CREATE USER 'app'@'%' IDENTIFIED WITH caching_sha2_password AS {T}"),
    (f"CREATE USER `root`@`localhost` IDENTIFIED VIA mysql_native_password USING '{HASH}' OR unix_socket",
     f"CREATE USER `root`@`localhost` IDENTIFIED VIA mysql_native_password USING '{T}' OR unix_socket"),
    ("create user u identified via ed25519 using password('s3cret');",
     f"create user u identified via ed25519 using password('{T}');"),
])
def test_the_hash_a_create_user_statement_prints_is_taken(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "The user is identified via ldap as usual.",
    "A user identified with a certificate as needed.",
    "Each user is identified with ldap as admin, not by a password.",  # lower case, a bare word: prose
])
def test_create_user_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_long_line_of_lower_case_identified_by_is_read_in_linear_time() -> None:
    """A lower-case ``identified by WORD`` looks back for its line's ``create user``: with no newline in the text it
    looked back to the text's start at every match (0de516f: 4 MiB of it took 4 s, past the default budget of 1,000
    ms/MiB, and the step was withheld; now 0.1-0.5 s). A factor of 8 or more stands between either side and the
    budget, whatever the machine's speed."""
    text = "identified by a " * (4 * 65536)
    captured = apply_policy(load_policy(env={}), "tool_call", {"result": text})
    assert captured.data == {"result": text} and not captured.gaps


# -- 2. MariaDB's client ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "table", "expected"), [
    ('$ mariadb -B -u root -e "select user, password from users" app', "user\tpassword\nbob\tpwMa1\n",
     f"user\tpassword\nbob\t{T}\n"),
    ("$ mariadb -e 'select id, api_key from clients' prod", "id\tapi_key\n1\tak-9z\n", f"id\tapi_key\n1\t{T}\n"),
    ('$ echo "select user, authentication_string from mysql.user" | mariadb -B', f"user\tauthentication_string\n"
     f"root\t{HASH}\n", f"user\tauthentication_string\nroot\t{T}\n"),
    ("bob@db:~$ /usr/bin/mariadb --batch app -e 'select user, token from t'", "user\ttoken\nbob\ttk-Ma2\n",
     f"user\ttoken\nbob\t{T}\n"),
])
def test_a_mariadb_line_printing_a_header_is_read_anywhere(command: str, table: str, expected: str) -> None:
    assert scrubbed(f"{LOG}{command}\n{table}$ exit\n") == f"{LOG}{command}\n{expected}$ exit\n"


@pytest.mark.parametrize("tail", [
    '$ mariadb -B -N -e "select user, password from users"\nuser\tpassword\nbob\tpwMa1\n',  # no column names
    '$ mariadb -B -e "select name, kind from items"\nname\tkind\nbob\tpassword\n',  # ordinary columns
    "Run mariadb -B -e to print tabs:\nuser\tpassword\nbob\tpwMa1\n",  # prose naming the flags
    "$ mariadb app < dump.sql\nuser\tpassword\nbob\tpwMa1\n",  # no batch flag, no -e
    "$ mariadb-dump -B app\nuser\tpassword\nbob\tpwMa1\n",  # another program
])
def test_mariadb_look_alikes_are_left(tail: str) -> None:
    assert scrubbed(LOG + tail) == LOG + tail


# -- 3. sqlite3's list, line and box modes, a row whose value holds "|" ----------------------------------------------


@pytest.mark.parametrize(("head", "table", "expected"), [
    ('$ sqlite3 -header app.db "select user,password from users"', "user|password\nbob|hunter2\nal|pw,with|pipe\n",
     f"user|password\nbob|{T}\nal|{T}\n"),
    ("$ sqlite3 app.db\nsqlite> .headers on\nsqlite> select user, password from users;",
     "user|password\nbob|hunter2\n", f"user|password\nbob|{T}\n"),
    ("$ sqlite3 -csv app.db\nsqlite> .mode list\nsqlite> .header on\nsqlite> select id, token from apps;",
     "id|token\n7|tk-Li1\n", f"id|token\n7|{T}\n"),
    # line mode: the value is the rest of its line
    ("$ sqlite3 -line app.db 'select user, password from users'",
     "    user = bob\npassword = hunter2\n\n    user = al\npassword = pw,with|pipe\n",
     f"    user = bob\npassword = {T}\n\n    user = al\npassword = {T}\n"),
    ("sqlite> .mode line\nsqlite> select id, api_key from clients;", "     id = 1\napi_key = a b,c\n",
     f"     id = 1\napi_key = {T}\n"),
])
def test_sqlites_list_and_line_modes_are_read_anywhere(head: str, table: str, expected: str) -> None:
    assert scrubbed(f"{LOG}{head}\n{table}sqlite> .quit\n") == f"{LOG}{head}\n{expected}sqlite> .quit\n"


COLUMNS = ("id  user  password                          \n--  ----  ----------------------------------\n"
           "1   bob   hunter2                           \n2   al    pw,with|pipe                      \n"
           "4   dee   long password with spaces and more\n")
"""sqlite3 3.40.1's ``.mode column`` output, as it printed it (each column padded to its rule's width)."""
COLUMNS_TAKEN = (f"id  user  password                          \n--  ----  ----------------------------------\n"
                 f"1   bob   {T}                           \n2   al    {T}                      \n4   dee   {T}\n")


@pytest.mark.parametrize("head", [
    "$ sqlite3 app.db\nsqlite> .mode column\nsqlite> select id, user, password from users;",
    "$ sqlite3 app.db\nsqlite> .headers on\nsqlite> .mode column\nsqlite> select id, user, password from users;",
    '$ sqlite3 -column -header app.db "select id, user, password from users"',
])
def test_sqlites_column_mode_is_read_by_its_rule(head: str) -> None:
    assert scrubbed(f"{LOG}{head}\n{COLUMNS}sqlite> .quit\n") == f"{LOG}{head}\n{COLUMNS_TAKEN}sqlite> .quit\n"


def test_column_mode_turns_the_headers_on_for_the_modes_after_it() -> None:
    """sqlite3 3.40.1: ``.mode column`` turns the headers on unless the session set them; they stay on after it."""
    head = "$ sqlite3 app.db\nsqlite> .mode column\nsqlite> .mode list\nsqlite> select user, password from users;\n"
    assert scrubbed(f"{LOG}{head}user|password\nbob|hunter2\n") == f"{LOG}{head}user|password\nbob|{T}\n"


@pytest.mark.parametrize("tail", [
    '$ sqlite3 -column app.db "select 1"\n' + COLUMNS,  # -column prints no header: no rule either, so a row
    "$ sqlite3 app.db\nsqlite> .headers off\nsqlite> .mode column\nsqlite> .mode list\nsqlite> select 1;\n"
    "user|password\nbob|pw1\n",
    "sqlite> .mode column\nsqlite> select name, kind from items;\nname  kind    \n----  --------\nbob   password\n",
    "Results:\n" + COLUMNS,  # no client's line above it (sqlcmd and others print so too: not read)
])
def test_column_mode_look_alikes_are_left(tail: str) -> None:
    assert scrubbed(LOG + tail) == LOG + tail


@pytest.mark.parametrize(("text", "expected"), [
    # sqlite3's .mode box, psql's unicode line style, a table of double lines
    ("┌──────┬──────────────┐\n│ user │   password   │\n├──────┼──────────────┤\n│ bob  │ hunter2      │\n"
     "│ al   │ pw,with|pipe │\n└──────┴──────────────┘\n",
     f"┌──────┬──────────────┐\n│ user │   password   │\n├──────┼──────────────┤\n│ bob  │ {T}      │\n"
     f"│ al   │ {T} │\n└──────┴──────────────┘\n"),
    (" user │ password \n──────┼──────────\n bob  │ pgPw9\n(1 row)\n",
     f" user │ password \n──────┼──────────\n bob  │ {T}\n(1 row)\n"),
    ("╔══════╦═════════╗\n║ user ║ token   ║\n╠══════╬═════════╣\n║ bob  ║ tkDbl1  ║\n╚══════╩═════════╝\n",
     f"╔══════╦═════════╗\n║ user ║ token   ║\n╠══════╬═════════╣\n║ bob  ║ {T}  ║\n╚══════╩═════════╝\n"),
    # a value holding "|" in mysql's, sqlite3's .mode table and psql's tables: the rows after it are read too
    ("+------+----------+\n| user | password |\n+------+----------+\n| a|b  | x|y|z    |\n| d    | eee      |\n"
     "+------+----------+\n",
     f"+------+----------+\n| user | password |\n+------+----------+\n| a|b  | {T}    |\n| d    | {T}      |\n"
     "+------+----------+\n"),
    (" id | secret \n----+-------------\n  1 | a|b|c\n  2 | plain9\n(2 rows)\n",
     f" id | secret \n----+-------------\n  1 | {T}\n  2 | {T}\n(2 rows)\n"),
])
def test_a_boxed_table_and_a_value_holding_a_pipe_are_read(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("tail", [
    # list mode with no header: its first line is a row (here one that reads as names)
    '$ sqlite3 app.db "select user,password from users"\nuser|password\nbob|hunter2\n',
    "$ sqlite3 app.db\nsqlite> .headers on\nsqlite> .headers off\nsqlite> select 1;\nuser|password\nbob|pw1\n",
    "$ sqlite3 -header app.db\nsqlite> .mode csv\nsqlite> select 1;\nuser|password\nbob|pw1\n",  # csv: no "|"
    # a select of ordinary columns; line mode's ordinary fields
    '$ sqlite3 -header app.db "select name,kind from items"\nname|kind\nbob|password\n',
    "sqlite> .mode line\nsqlite> select name, kind from items;\n name = bob\n kind = password,token\n",
    # a "|"-separated log line and prose naming the flag
    "$ tail app.log\n2026-12-01|password|changed for bob\nuser|password\nbob|x\n",
    "Run sqlite3 -header app.db to see:\nuser|password\nbob|pwSq1\n",
    # a box of prose (no rule under a header), a markdown row holding an unescaped pipe still ends its table
    "┌──────┬──────┐\n│ user │ kind │\n├──────┼──────┤\n│ bob  │ pw   │\n└──────┴──────┘\n",
    "| user | password |\n|---|---|\n| a | b|c |\n",
])
def test_sqlite_and_table_look_alikes_are_left(tail: str) -> None:
    assert scrubbed(LOG + tail) == LOG + tail


def test_a_real_sqlite3_session_is_read_as_its_modes_print() -> None:
    """sqlite3 3.40.1 on a terminal (escape sequences as a terminal shows them: none): ``.headers on`` in list mode,
    ``.mode line``, ``.mode box`` are taken; ``.mode csv`` with ``.headers off`` and ``.mode list`` after it print no
    header, and their rows are left (no rule tells them from any data)."""
    text = (DATA / "sqlite3_3.40.1_tty.txt").read_text(encoding="utf-8")
    out = scrubbed(LOG + text)[len(LOG):]
    header_on, no_header = out.split("sqlite> .mode csv\n")
    for secret in ("hunter2", "pw,with|pipe", "Tr0ub|4dor&3"):
        assert secret not in header_on, secret
        assert no_header.count(secret) == 2, secret  # csv and list with no header: left
    assert header_on.count(T) == 9
    assert "| 1  | bob  |" in header_on  # .mode table of ordinary columns


# -- 4. redis-cli ----------------------------------------------------------------------------------------------------


REDIS = (DATA / "redis_cli_7.0.15_tty.txt").read_bytes().decode("utf-8")  # CRLF kept, as the terminal wrote it
REDIS_SECRETS = [
    "S3cr3tRedisPw",  # AUTH (rules version 10 and 11) and CONFIG GET requirepass's reply
    "AlicePw9",  # ACL SETUSER alice on >AlicePw9
    "bbae3d542cda94a679e2cab87489b19b0a4ecce27fad1ed0f6d2f8437faf4f39",  # ACL GETUSER's and ACL LIST's hash
    "048a726e8b90dbf0ee66de41a162103f948c0aa8a7bb0e178b7354228d57a133",  # ACL LIST: the default user's
    "hunter2", "tk-abc123",  # HSET's fields, HGETALL's and HGET's replies
]


def test_a_real_redis_cli_session_keeps_no_password() -> None:
    out = scrubbed(LOG + REDIS)
    for secret in REDIS_SECRETS:
        assert secret not in out, secret
    for carol in ("201967a7fd7dc915", "b4eab785dffab60f"):  # carol's two hashes, each a line of the nested array
        assert carol not in out
    assert out.count(T) == 21


@pytest.mark.parametrize(("typed", "expected"), [
    # a rule quoted as redis-cli reads a word, a hash given with "#", a password removed with "<"
    ('ACL SETUSER bob on ">my pass word" ~* +@all', f'ACL SETUSER bob on ">{T}" ~* +@all'),
    (f"acl setuser bob on #{'ab' * 32} <oldPw1 >newPw2", f"acl setuser bob on #{T} <{T} >{T}"),
    ('HMSET user:2 name al password "two words" token tk-2', f'HMSET user:2 name al password "{T}" token {T}'),
])
def test_what_redis_cli_takes_at_its_prompt(typed: str, expected: str) -> None:
    for prompt in ("127.0.0.1:6379> ", "redis /run/redis.sock[1]> ", "cache:6380(TX)> "):
        assert scrubbed(f"{prompt}{typed}\r\nOK\r\n") == f"{prompt}{expected}\r\nOK\r\n"


@pytest.mark.parametrize("kept", [
    '1) "maxmemory"\r\n2) "0"',  # CONFIG GET of an ordinary parameter
    '3) "tls-key-file-pass"\r\n4) ""',  # an empty value
    '1) "name"\r\n2) "password"\r\n3) "note"\r\n4) "token"',  # HGETALL: values that are credential words
    'HGET kinds name\r\n"password"', "HSET kinds name password note token",
    ' 5) "commands"\r\n 6) "-@all +get"',  # ACL GETUSER's other items
])
def test_redis_cli_look_alikes_in_the_session_are_left(kept: str) -> None:
    assert kept in scrubbed(REDIS)


@pytest.mark.parametrize("text", [
    # (rules version 14 reads CONFIG GET's numbered reply wherever it stands, test_leak_edges25: HGET's bare "x" here)
    '> HGET user:1 password\n"x"\n',  # a quote in markdown, no prompt
    'note: 127.0.0.1:6379> HGET user:1 password\n"x"\n',  # the prompt not opening its line
    '127.0.0.1:6379> CONFIG GET maxmemory\n1) "maxmemory"\n2) "0"\n',
    "127.0.0.1:6379> ACL SETUSER bob on ~* +@all\nOK\n",  # no password in the rules
    "127.0.0.1:6379> HSET user:1 name bob kind password\n(integer) 2\n",
    "We ran ACL SETUSER bob on >pw in prose, and HGETALL user:1.\n",
])
def test_redis_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


PIPE = (DATA / "redis_cli_7.0.15_pipe.txt").read_text(encoding="utf-8")
"""redis-cli 7.0.15 given each command on the shell's line, its output to a pipe (as an agent's tool reads it): each
string bare on a line of its own; the last with ``--no-raw``, numbered and quoted as at the prompt."""


def test_redis_cli_replies_printed_to_a_pipe_keep_no_password() -> None:
    out = scrubbed(LOG + PIPE)
    for secret in ("S3cr3tRedisPw", "hunter2", "tk-abc123", "201967a7fd7dc915", "b4eab785dffab60f", "bbae3d542cda94a6",
                   "048a726e8b90dbf0"):
        assert secret not in out, secret
    for kept in ("masterauth\n\ntls-auth-clients\nyes\n", "name\nbob\npassword\n", "commands\n-@all +get\nkeys\n"):
        assert kept in out, kept


@pytest.mark.parametrize("text", [
    "$ redis-cli CONFIG GET maxmemory\nmaxmemory\n0\n",
    "$ redis-cli HGETALL kinds\nkind\npassword\nnote\nhello\n",
    "$ redis-cli HGET user:1 name\nbob\n",
    "Run redis-cli CONFIG GET requirepass to see it:\nrequirepass\nis the name\n",  # prose
    "$ redis-cli -h db -p 6380\nrequirepass\nx\n",  # redis-cli opening its prompt: no command
    "$ redis-cli CONFIG GET requirepass\nrequirepass\n\n",  # no password set
    "$ redis-cli ACL GETUSER bob\nflags\non\npasswords\ncommands\n+@all\n",  # nopass
])
def test_redis_cli_lines_look_alikes_are_left(text: str) -> None:
    assert scrubbed(LOG + text) == LOG + text


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 13
    assert policy.digest_under(13) == V13_DIGEST != policy.digest_under(12) == V12_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["authPw1", "mariaPw2", "listPw3", "boxPw4", "redisPw5", "aclPw6"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "mysql": f"{LOG}mysql> select user, authentication_string from mysql.user\\G\n"
                 f"authentication_string: {secrets[0]}\n",
        "mariadb": f'{LOG}$ mariadb -B -e "select user, password from u"\nuser\tpassword\nbob\t{secrets[1]}\n',
        "list": f'{LOG}$ sqlite3 -header a.db "select user,password from u"\nuser|password\nbob|{secrets[2]}\n',
        "box": f"│ user │ password │\n├──────┼──────────┤\n│ bob  │ {secrets[3]} │\n",
        "redis": f'127.0.0.1:6379> CONFIG GET requirepass\r\n1) "requirepass"\r\n2) "{secrets[4]}"\r\n'
                 f"127.0.0.1:6379> ACL SETUSER bob on >{secrets[5]} ~* +@all\r\nOK\r\n",
    }, "leak-edges22")
    assert T in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret
    assert not re.search(r"\*6BB4", stored_text)
