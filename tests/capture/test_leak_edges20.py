"""Credentials the default policy stored as written under rules version 11, scrubbed under version 12:

1. a table whose header cell holds other markup: an HTML element (``| <b>Password</b> |``, ``<strong>``,
   ``**<code>secret</code>**``) or a link (``| [Password](#pw) |``); and a markdown cell that is one HTML element
   (``<code>hunter2</code>``) under a credential column;
2. a JSON member held in a JSON string and URL-encoded twice (``%255C%2522password%255C%2522%253A...``), and a
   twice-encoded member whose value follows an encoded ``+`` (``quote_plus`` twice: ``%253A%2B%2522x%2522``);
3. a CSV or TSV header below a text's 64th line, right under a line that prints a ``.csv`` / ``.tsv`` file
   (``$ cat users.csv``, ``head -n 5 users.tsv``) or psql's ``COPY ... TO STDOUT ... HEADER``.

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside the look-alikes that are
left: a ``| <b>Name</b> | <b>Value</b> |`` table of ordinary data, a ``<b>`` heading in prose, URL-encoded JSON of
ordinary members, a CSV of ordinary data at line 200, prose naming a ``.csv`` file. A CSV with no header is still
not read (docs/capture.md says why).
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

DEFAULT_DIGEST = "62c66fdbf1689a9249e99afab068d53022dfd86e093f25510f0a12da71ea7b3e"
"""The shipped default policy's digest under rules version 12 (docs/capture.md, "Digest")."""
V11_DIGEST = "ad5bbd83c4e0e6236285f2e9d19dd6112509d43f9181bc4ad04b70026bf36cf5"
T = "[CREDENTIAL]"


# -- 1. a header cell holding an HTML element or a link --------------------------------------------------------------


@pytest.mark.parametrize(("header", "rule"), [
    ("| user | <b>Password</b> |", "|---|---|"),
    ("| user | <strong>token</strong> |", "| --- | --- |"),
    ("| user | [Password](#pw) |", "|---|---|"),
    ('| user | [Password](https://example.com/docs#pw "the password") |', "|:---|:---|"),
    ("| user | [API Key][keys] |", "|---|---|"),
    ("| user | **<code>secret</code>** |", "|---|---|"),
    ("| user | [**Password**](#pw) |", "|---|---|"),
    ('| user | <span title="the password">Password</span> |', "|---|---|"),
    ("| <b>User</b> | <b>Password</b> |", "|---|---|"),
])
def test_a_header_cell_holding_markup_names_its_column(header: str, rule: str) -> None:
    text = f"{header}\n{rule}\n| bob | hunter2x |\n| al | s3cr3t-9 |\n"
    assert scrubbed(text) == f"{header}\n{rule}\n| bob | {T} |\n| al | {T} |\n"


def test_a_markdown_cell_that_is_one_html_element_is_read_by_its_text() -> None:
    """``<code>hunter2</code>`` under a credential column read as a placeholder's ``<password>`` (prose) and was
    left; its text is the cell's value, the tags are kept."""
    text = "| <b>User</b> | <b>Password</b> |\n|---|---|\n| bob | <code>hunter2</code> |\n| al | <kbd>s3cr3t</kbd> |\n"
    assert scrubbed(text) == \
        f"| <b>User</b> | <b>Password</b> |\n|---|---|\n| bob | <code>{T}</code> |\n| al | <kbd>{T}</kbd> |\n"


@pytest.mark.parametrize("text", [
    # a table of names: no column names a credential
    "| <b>Name</b> | <b>Value</b> |\n|---|---|\n| region | eu |\n| password | hunter2 |\n",
    "| [Name](#n) | [Value](#v) |\n|---|---|\n| password | hunter2 |\n",
    # a <b> heading in prose above a table of ordinary data
    "<b>Password</b> rules for the team:\n\n| rule | limit |\n|---|---|\n| length | 12 |\n",
    "<b>Password</b>\n\n| step | note |\n|---|---|\n| 1 | reset it |\n",
    # prose cells stay prose through an element
    "| user | <b>Password</b> |\n|---|---|\n| bob | <i>required</i> |\n| al | <code>f(x)</code> |\n"
    "| cy | <em>set by the admin</em> |\n",
    "| user | <b>Password</i> |\n|---|---|\n| bob | hunter2 |\n",  # tags that do not match: no name
    "| user | [Password policy](#p) |\n|---|---|\n| bob | 12 chars |\n",  # no credential word
    "| user | <b>Password</b> and more |\n|---|---|\n| bob | hunter2 |\n",  # more than the element: no name
])
def test_markup_header_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 2. URL-encoded JSON encoded twice: %255C-escaped quotes, a value after an encoded + -----------------------------


def _encoded_twice(document: dict[str, object], *, plus: bool = False) -> str:
    """``{"body": "<document as JSON>"}`` URL-encoded twice, as a JSON body in a query string inside another URL's
    query is (``plus``: with ``quote_plus``, as ``urlencode`` writes a form)."""
    body = json.dumps({"body": json.dumps(document)})
    quote = urllib.parse.quote_plus if plus else urllib.parse.quote
    return quote(quote(body, safe=""), safe="")


def test_the_briefs_twice_encoded_member_with_escaped_quotes_is_scrubbed() -> None:
    text = "next=%257B%255C%2522password%255C%2522%253A%255C%2522x9pw%255C%2522%257D"
    assert scrubbed(text) == f"next=%257B%255C%2522password%255C%2522%253A%255C%2522{T}%255C%2522%257D"


@pytest.mark.parametrize("plus", [False, True])
def test_a_twice_encoded_member_of_a_json_string_is_scrubbed(plus: bool) -> None:
    """An escaped quote inside the value (``%255C%255C%255C%2522``) is part of it; a number is taken bare."""
    document = {"user": "bob", "password": 'a"b c', "pin": 1234, "note": "kept"}
    out = urllib.parse.unquote_plus(urllib.parse.unquote_plus(scrubbed("q=" + _encoded_twice(document, plus=plus))))
    taken = json.dumps({"body": json.dumps({"user": "bob", "password": T, "pin": "@", "note": "kept"})})
    assert out == "q=" + taken.replace('\\"@\\"', T)


def test_a_twice_encoded_member_after_an_encoded_plus_is_scrubbed() -> None:
    """``quote_plus`` twice writes the blank after the colon ``%2B``: the bare-value read took ``%2B`` and left the
    quoted value (rules version 10's form, without escapes)."""
    text = "next=%257B%2522password%2522%253A%2B%2522x1pw%2522%252C%2B%2522user%2522%253A%2B%2522bob%2522%257D"
    assert scrubbed(text) == \
        f"next=%257B%2522password%2522%253A%2B%2522{T}%2522%252C%2B%2522user%2522%253A%2B%2522bob%2522%257D"


@pytest.mark.parametrize("text", [
    "q=" + _encoded_twice({"user": "bob", "region": "eu", "n": 3}),  # ordinary members
    "q=" + _encoded_twice({"user": "bob", "region": "eu"}, plus=True),
    "q=%257B%255C%2522password%255C%2522%253Atrue%257D",  # a bare boolean: no secret
    "q=%257B%255C%2522password%255C%2522%253A%255C%2522%255C%2522%257D",  # empty
    "q=%2522password%255C%2522%253A%255C%2522x%255C%2522",  # the name's opening quote not escaped: no member
    "q=%257B%255C%2522sort_key%255C%2522%253A%255C%2522name%255C%2522%257D",
])
def test_twice_encoded_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. a CSV header under a line that prints a table, below the 64th line ---------------------------------------------

LOG = "".join(f"2026-12-01 10:{n // 60:02d}:{n % 60:02d} INFO step {n} done\n" for n in range(1, 200))
"""199 lines: a table printed after them starts on line 201, past the 64 lines a header is looked for in."""


@pytest.mark.parametrize(("command", "table", "expected"), [
    ("$ cat users.csv", "user,password\nbob,pw1Sx\nal,pw2Sx\n", f"user,password\nbob,{T}\nal,{T}\n"),
    ("bob@host:~/app$ head -n 5 /srv/users.tsv", "user\ttoken\nbob\ttok-1\n", f"user\ttoken\nbob\t{T}\n"),
    ("# /bin/cat 'exports/keys.csv'", "id;api_key\n1;k-123\n", f"id;api_key\n1;{T}\n"),
    ("$ cat a.csv b.csv", "user,password\nbob,pw1Sx\n", f"user,password\nbob,{T}\n"),
    ("PS C:\\app> Get-Content .\\users.csv", "user,password\r\nbob,pw1Sx\r\n", f"user,password\r\nbob,{T}\r\n"),
    ("app=# COPY users TO STDOUT WITH (FORMAT csv, HEADER);", "id,name,password\n1,bob,pw1Sx\nCOPY 1\n",
     f"id,name,password\n1,bob,{T}\nCOPY 1\n"),
    ("app=> \\copy (select id, secret from apps) to stdout with csv header", "id,secret\n7,sk-x1\n",
     f"id,secret\n7,{T}\n"),
])
def test_a_csv_header_under_a_printing_line_is_read_anywhere(command: str, table: str, expected: str) -> None:
    assert scrubbed(f"{LOG}{command}\n{table}$ exit\n") == f"{LOG}{command}\n{expected}$ exit\n"


def test_a_second_printed_table_is_read_after_a_first_naming_no_credential() -> None:
    """A header among the first lines naming no credential ends that search; a printed table below is read."""
    text = "$ cat items.csv\nname,kind\nbob,token\n" + LOG + "$ cat users.csv\nuser,password\nbob,pw1Sx\n"
    assert scrubbed(text) == "$ cat items.csv\nname,kind\nbob,token\n" + LOG + f"$ cat users.csv\nuser,password\nbob,{T}\n"


@pytest.mark.parametrize("tail", [
    "$ cat data.csv\nname,kind,count\nbob,token,3\nal,key,4\n",  # ordinary data at line 200
    "I wrote the rows to users.csv\nuser,password\nbob,pw1Sx\n",  # prose naming a file: no command
    "$ cat users.csv | sort -r\nuser,password\nbob,pw1Sx\n",  # piped into a command that reorders lines (| head: 21)
    "$ cat users.csv.bak\nuser,password\nbob,pw1Sx\n",  # no .csv file
    "$ grep bob users.csv\nuser,password\nbob,pw1Sx\n",  # a command that prints no table
    "app=# COPY users TO STDOUT;\nid,password\n1,pw1Sx\n",  # no HEADER: the first line is a row
    "app=# select 'to stdout' as header;\nid,password\n1,pw1Sx\n",  # no COPY
    "$ cat users.csv\nTotal: 2 users, 1 admin\nuser,password\nbob,pw1Sx\n",  # the line below is no header
])
def test_printed_table_look_alikes_are_left(tail: str) -> None:
    assert scrubbed(LOG + tail) == LOG + tail


def test_a_csv_with_no_header_is_left_as_documented() -> None:
    """docs/capture.md: rows of ``user,password`` with no header cannot be told from any two-column data
    (``bob,admin``, ``eu,west``); the rules read none."""
    assert scrubbed(LOG + "$ cat users.csv\nbob,hunter2\nal,s3cret\n") == LOG + "$ cat users.csv\nbob,hunter2\nal,s3cret\n"


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 12
    assert policy.digest_under(12) == DEFAULT_DIGEST != policy.digest_under(11) == V11_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["htmlPw1", "linkPw2", "codePw3", "urlPw4", "plusPw5", "csvPw6", "copyPw7"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "html": f"| user | <b>Password</b> |\n|---|---|\n| bob | {secrets[0]} |\n",
        "link": f"| user | [Password](#pw) |\n|---|---|\n| bob | {secrets[1]} |\n",
        "code": f"| user | password |\n|---|---|\n| bob | <code>{secrets[2]}</code> |\n",
        "url": f"https://h/cb?next=%257B%255C%2522password%255C%2522%253A%255C%2522{secrets[3]}%255C%2522%257D",
        "plus": f"https://h/cb?next=%257B%2522password%2522%253A%2B%2522{secrets[4]}%2522%257D",
        "csv": f"{LOG}$ cat users.csv\nuser,password\nbob,{secrets[5]}\n",
        "copy": f"{LOG}db=# COPY u TO STDOUT (FORMAT csv, HEADER);\nid,password\n1,{secrets[6]}\n",
    }, "leak-edges20")
    assert T in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret


def test_an_escaped_encoded_members_bare_value_keeps_the_blank_before_it() -> None:
    """Rules version 11 read the blank after the encoded colon (``%20``) into a bare value's placeholder."""
    assert scrubbed("q=%7B%5C%22pin%5C%22%3A%201234%7D") == f"q=%7B%5C%22pin%5C%22%3A%20{T}%7D"
    assert scrubbed("q=%257B%255C%2522pin%255C%2522%253A%25201234%257D") == \
        f"q=%257B%255C%2522pin%255C%2522%253A%2520{T}%257D"
