"""Credentials the default policy stored as written at c05bbe9 (rules version 12 as leaks20 left it), scrubbed by
rules version 12 completed (the version and its digest unchanged: not yet shipped):

1. a CSV header below a text's 64th line under sqlite3's line that prints it (``sqlite3 -csv -header DB "select
   ..."``, ``-header -csv``, ``-tabs``) or under a statement at ``sqlite> `` after ``.headers on`` and ``.mode csv``;
2. mysql's tab-separated output, header first, under ``mysql -B`` / ``--batch`` / ``-e``, and psql's under ``psql
   --csv``, ``psql -c "copy ... to stdout ... header"`` or a lower-case ``copy ... to stdout ... header`` typed at
   psql's prompt (``app=# copy ...``);
3. a printed file named in upper case (``USERS.CSV``) and a printing line piped on (``cat users.csv | head -n 5``).

Each is set beside the look-alikes that are left: a select of ordinary columns, ``-csv`` with no header, ``-N``,
prose naming the flags, a ``.mode`` other than csv, a pipe into a command that reorders or filters lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

DEFAULT_DIGEST = "62c66fdbf1689a9249e99afab068d53022dfd86e093f25510f0a12da71ea7b3e"
T = "[CREDENTIAL]"
LOG = "".join(f"2026-12-01 10:{n // 60:02d}:{n % 60:02d} INFO step {n} done\n" for n in range(1, 200))
"""199 lines: a table printed after them starts on line 201, past the 64 lines a header is looked for in."""


@pytest.mark.parametrize(("command", "table", "expected"), [
    # 1. sqlite3's command line
    ('$ sqlite3 -csv -header app.db "select user,password from users"', "user,password\nbob,pwSq1\nal,pwSq2\n",
     f"user,password\nbob,{T}\nal,{T}\n"),
    ("$ sqlite3 -header -csv app.db 'select user, password from users;'", "user,password\nbob,pwSq1\n",
     f"user,password\nbob,{T}\n"),
    ("bob@host:~/app$ /usr/bin/sqlite3 --headers --tabs app.db 'select id, token from apps'", "id\ttoken\n7\ttk-1x\n",
     f"id\ttoken\n7\t{T}\n"),
    # 2. mysql's batch output, psql's CSV
    ('$ mysql -B -u root -e "select user, password from users" app', "user\tpassword\nbob\tpwMy1\n",
     f"user\tpassword\nbob\t{T}\n"),
    ('$ mysql --batch app -e "select user, password from users"', "user\tpassword\nbob\tpwMy2\n",
     f"user\tpassword\nbob\t{T}\n"),
    ('$ echo "select user, password from users" | mysql -B app', "user\tpassword\nbob\tpwMy3\n",
     f"user\tpassword\nbob\t{T}\n"),
    ("$ mysql -h db -u app -e 'select id, api_key from clients' prod", "id\tapi_key\n1\tak-9z\n",
     f"id\tapi_key\n1\t{T}\n"),
    ('$ psql --csv -c "select usename, passwd from pg_shadow"', "usename,passwd\nbob,md5abc\n",
     f"usename,passwd\nbob,{T}\n"),
    ('$ psql app -c "copy (select id, secret from apps) to stdout with csv header"', "id,secret\n7,sk-x1\n",
     f"id,secret\n7,{T}\n"),
    ("app=# copy users to stdout with csv header;", "id,name,password\n1,bob,pwCo1\nCOPY 1\n",
     f"id,name,password\n1,bob,{T}\nCOPY 1\n"),
    ("app=> Copy (select id, token from apps) TO stdout WITH (FORMAT csv, HEADER);", "id,token\n7,tk-2y\n",
     f"id,token\n7,{T}\n"),
    # 3. an upper-case file name, a printing line piped on
    ("$ cat USERS.CSV", "user,password\nbob,pwUp1\n", f"user,password\nbob,{T}\n"),
    ("PS C:\\app> type .\\EXPORT.TSV", "user\ttoken\r\nbob\ttk-1\r\n", f"user\ttoken\r\nbob\t{T}\r\n"),
    ("$ cat users.csv | head -n 5", "user,password\nbob,pwPi1\n", f"user,password\nbob,{T}\n"),
    ("$ head -n 100 users.csv | less", "user,password\nbob,pwPi2\n", f"user,password\nbob,{T}\n"),
])
def test_a_header_a_client_or_a_pipeline_prints_is_read_anywhere(command: str, table: str, expected: str) -> None:
    assert scrubbed(f"{LOG}{command}\n{table}$ exit\n") == f"{LOG}{command}\n{expected}$ exit\n"


SESSION = "$ sqlite3 app.db\nsqlite> .headers on\nsqlite> .mode csv\n"


@pytest.mark.parametrize(("session", "statement"), [
    (SESSION, "sqlite> select user, password from users;"),
    ("$ sqlite3 app.db\nsqlite> .mode csv\nsqlite> .header ON\n", "sqlite> SELECT user, password FROM users;"),
    (SESSION, "sqlite> select user,\n   ...> password from users;"),  # a statement on two lines
    ("$ sqlite3 -csv -header app.db\n", "sqlite> select user, password from users;"),  # set on the command line
    (SESSION + "sqlite> select count(*) from users;\n2\n", "sqlite> select user, password from users;"),
])
def test_a_statement_at_sqlites_prompt_in_csv_mode_with_headers_prints_a_header(session: str, statement: str) -> None:
    text = f"{LOG}{session}{statement}\nuser,password\nbob,pwSq3\nal,pwSq4\nsqlite> .quit\n"
    assert scrubbed(text) == text.replace("pwSq3", T).replace("pwSq4", T)


@pytest.mark.parametrize("tail", [
    # a select of ordinary columns
    '$ sqlite3 -csv -header app.db "select name,kind from items"\nname,kind\nbob,token\n',
    '$ mysql -B -e "select name, kind from items"\nname\tkind\nbob\tpassword\n',
    # -csv with no header: the first line is a row (here one that reads as names)
    '$ sqlite3 -csv app.db "select user,password from users"\nuser,password\nbob,pwSq1\n',
    '$ sqlite3 -csv -header -noheader app.db "select 1"\nuser,password\nbob,pwSq1\n',
    '$ mysql -B -N -e "select user, password from users"\nuser\tpassword\nbob\tpwMy1\n',
    '$ psql --csv -t -c "select 1"\nuser,password\nbob,pw1\n',
    '$ mysql app < dump.sql\nuser\tpassword\nbob\tpwMy1\n',  # no batch flag, no -e
    # prose naming the flags
    "Run sqlite3 -csv -header app.db to export the users:\nuser,password\nbob,pwSq1\n",
    "The mysql -B -e flags print tabs:\nuser\tpassword\nbob\tpwMy1\n",
    # psql's lower-case copy with no header, reading standard input, or in prose
    "app=# copy users to stdout with csv;\nid,password\n1,pwCo1\n",
    "app=# copy users from stdin with csv header;\nid,password\n1,pwCo1\n",
    "We copy users to stdout with a header:\nid,password\n1,pwCo1\n",
    # a session in another mode, or with headers off
    "$ sqlite3 app.db\nsqlite> .headers on\nsqlite> .mode list\nsqlite> select 1;\nuser,password\nbob,pwSq1\n",
    "$ sqlite3 app.db\nsqlite> .mode csv\nsqlite> .headers off\nsqlite> select 1;\nuser,password\nbob,pwSq1\n",
    "$ sqlite3 app.db\nsqlite> .mode csv\nsqlite> select 1;\nuser,password\nbob,pwSq1\n",
    "sqlite> .headers on\nsqlite> .mode csv\n\x00" + LOG + "sqlite> select 1;\nuser,password\nbob,pwSq1\n",  # a text after
    # a new sqlite3 session starts in list mode with no header, whatever the last one set
    SESSION + "sqlite> .quit\n$ sqlite3 b.db 'select 1'\nuser,password\nbob,pwSq1\n",
    # a pipe into a command that reorders or filters the lines
    "$ cat users.csv | sort\nuser,password\nbob,pwPi1\n",
    "$ cat users.csv | grep bob\nuser,password\nbob,pwPi1\n",
    "$ cat users.csv || head -n 5\nuser,password\nbob,pwPi1\n",
    "$ cat USERS.CSV.BAK\nuser,password\nbob,pwUp1\n",
])
def test_client_and_pipeline_look_alikes_are_left(tail: str) -> None:
    assert scrubbed(LOG + tail) == LOG + tail


def test_the_rules_version_and_the_default_digest_are_unchanged() -> None:
    """Rules version 12 is completed, not bumped: it was never shipped without these forms (13 came after)."""
    assert POLICY_VERSION >= 12
    assert load_policy(env={}).digest_under(12) == DEFAULT_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["sqlitePw1", "sessionPw2", "mysqlPw3", "upperPw4", "pipePw5"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "sqlite": f'{LOG}$ sqlite3 -csv -header a.db "select user,password from u"\nuser,password\nbob,{secrets[0]}\n',
        "session": f"{LOG}{SESSION}sqlite> select user, password from u;\nuser,password\nbob,{secrets[1]}\n",
        "mysql": f'{LOG}$ mysql -B -e "select user, password from u"\nuser\tpassword\nbob\t{secrets[2]}\n',
        "upper": f"{LOG}$ cat USERS.CSV\nuser,password\nbob,{secrets[3]}\n",
        "pipe": f"{LOG}$ cat users.csv | head -n 5\nuser,password\nbob,{secrets[4]}\n",
    }, "leak-edges21")
    assert T in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret
