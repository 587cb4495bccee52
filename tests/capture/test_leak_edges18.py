"""Credentials the default policy stored as written under rules version 9, scrubbed under version 10:

1. a CSV or TSV table whose header is not on the text's first line (``$ cat users.csv`` or a log line above it);
2. a table of cells between pipes: markdown's, psql's and the mysql client's, its credential columns (and psql's
   expanded display, a field a line);
3. a Terraform state's ``sensitive_attributes``: the members of the instance's ``attributes`` its paths name, in
   data, in a JSON document given as text, and in a line of text that is no document as a whole;
4. a JSON member URL-encoded twice (``%2522password%2522%253A%2522x%2522``);
5. a Visual Studio ``.settings`` file's ``<Setting Name="Password"><Value Profile="(Default)">x</Value>``;
6. ``AUTH [USER] PASSWORD`` at redis-cli's prompt (``127.0.0.1:6379> AUTH x``).

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside the look-alikes that are
left: a ``token`` column beside a ``logprob`` one, tables of ordinary data, ``"sensitive_attributes": []``, ``AUTH``
in prose and in an SMTP log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION

V10_DIGEST = "106abe7b47163b34bb631dd9a700c593735472244daa06ac8fd72bea5ed07b4f"
"""The shipped default policy's digest under rules version 10 (docs/capture.md, "Digest")."""
V9_DIGEST = "795776cf0b643e2715a723d900aec9e0aabecf0f7332a43337751622fa7b1742"
T = "[CREDENTIAL]"


def stored(data: dict[str, Any], kind: str = "context") -> dict[str, Any]:
    """``data`` as the default policy stores it for a step of ``kind``."""
    return apply_policy(load_policy(env={}), kind, data).data


# -- 1. a CSV header below a text's first line -----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("$ cat users.csv\nname,password\nbob,hunter2\nal,s3cr3t\n", f"$ cat users.csv\nname,password\nbob,{T}\nal,{T}\n"),
    ("2026-12-01 10:00:00 INFO export done\nid,user,api_key\n1,bob,abc123\n",
     f"2026-12-01 10:00:00 INFO export done\nid,user,api_key\n1,bob,{T}\n"),
    # a line of prose holding a comma, then a TSV header
    ("Here it is, as asked:\n\nuser\ttoken\nbob\tt0k3n\n", f"Here it is, as asked:\n\nuser\ttoken\nbob\t{T}\n"),
    # the table ends where the cell count changes; the header is read once
    ("$ head -3 creds.csv\nid,password\n1,pw1\n2,pw2\n$ echo done\ndone\n",
     f"$ head -3 creds.csv\nid,password\n1,{T}\n2,{T}\n$ echo done\ndone\n"),
])
def test_a_csv_header_under_a_command_or_a_log_line_is_read(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_a_csv_header_below_the_first_line_among_a_steps_texts() -> None:
    data = {"a": "hello", "out": "$ cat u.csv\nid,password\n1,pw1\n", "b": ["x", "log\nuser;secret\nbob;s1\n"]}
    assert stored(data, "tool_call") == {"a": "hello", "out": f"$ cat u.csv\nid,password\n1,{T}\n",
                                         "b": ["x", f"log\nuser;secret\nbob;{T}\n"]}


@pytest.mark.parametrize("text", [
    "$ cat tokens.csv\ntoken,logprob\nHello,-0.1\n world,-2.3\n",  # a model's output tokens (ordinary.py)
    "$ cat kv.csv\nkey,value\nRegion,eu\n",  # the bare key: a table of names
    # the first header names no credential: its rows are never read as a header ("bob,token" is a row)
    "$ cat kinds.csv\nname,kind\nbob,token\nal,abc123\n",
    # a header on line 17 is read under rules version 11, which looks for it in a text's first 64 lines
    # (test_leak_edges19.py)
    "Use the token, then\nrun it, ok\nfine, done\n",  # prose
])
def test_csv_look_alikes_below_the_first_line_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 2. markdown, psql and mysql tables ------------------------------------------------------------------------------

MYSQL = """mysql> SELECT user, password, host FROM accounts;
+------+----------+-----------+
| user | password | host      |
+------+----------+-----------+
| bob  | hunter2  | localhost |
| al   | NULL     | %         |
+------+----------+-----------+
2 rows in set (0.00 sec)
"""
PSQL = """ id | username |  api_key
----+----------+-----------
  1 | bob      | abc123xyz
  2 | al       |
(2 rows)
"""


@pytest.mark.parametrize(("text", "expected"), [
    ("| user | password |\n|---|---|\n| bob | hunter2 |\n| al | s3cr3t |\n",
     f"| user | password |\n|---|---|\n| bob | {T} |\n| al | {T} |\n"),
    ("Accounts:\n\n| User | API Key | Region |\n| :--- | :---: | ---: |\n| bob | k-123 | eu |\n\nThat is all.\n",
     f"Accounts:\n\n| User | API Key | Region |\n| :--- | :---: | ---: |\n| bob | {T} | eu |\n\nThat is all.\n"),
    (MYSQL, MYSQL.replace("hunter2 ", f"{T} ")),  # mysql's NULL is no password
    (PSQL, PSQL.replace("abc123xyz", T)),
    ("user | secret\n-----+-------\nbob  | s1\n", f"user | secret\n-----+-------\nbob  | {T}\n"),
    # a database client's cell is data, a blank inside it too; a markdown cell in backticks is taken whole
    (" user | password \n------+-----------\n bob  | correct horse\n",
     f" user | password \n------+-----------\n bob  | {T}\n"),
    ("| user | password |\n|---|---|\n| al | `s3cr3t!` |\n", f"| user | password |\n|---|---|\n| al | {T} |\n"),
])
def test_a_pipe_tables_credential_columns_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


PSQL_EXPANDED = """-[ RECORD 1 ]----------
id       | 1
username | bob
password | hunter2
api_key  | k-1
-[ RECORD 2 ]----------
id       | 2
password | first line+
         | second line
note     | ok

(2 rows)
"""


def test_psqls_expanded_display_has_its_credential_fields_scrubbed() -> None:
    expected = (PSQL_EXPANDED.replace("hunter2", T).replace("k-1", T).replace("first line", T)
                .replace("second line", T))
    assert scrubbed(PSQL_EXPANDED) == expected
    # a field naming no credential, an empty value (a NULL), a line with no record above it
    for text in ("-[ RECORD 1 ]--\nid | 1\nuser | bob\n", "-[ RECORD 1 ]--\npassword | \ntoken | \n",
                 "password | hunter2\n", "| password | x |\n"):
        assert scrubbed(text) == text


def test_a_pipe_table_in_a_steps_texts_and_a_document() -> None:
    table = "| user | password |\n|---|---|\n| bob | hunter2 |\n"
    assert stored({"result": {"content": [{"type": "text", "text": table}]}}) == {
        "result": {"content": [{"type": "text", "text": table.replace("hunter2", T)}]}}
    document = json.dumps({"output": table})
    assert scrubbed(document) == json.dumps({"output": table.replace("hunter2", T)})


@pytest.mark.parametrize("text", [
    "| token | logprob |\n|---|---|\n| Hello | -0.1 |\n",  # a model's output tokens
    "| name | value |\n|---|---|\n| region | eu |\n| password | hunter2 |\n",  # no credential column
    "| key | description |\n|---|---|\n| a | b |\n",  # the bare key
    "| user | password |\n| bob | hunter2 |\n",  # no rule line under the header
    "| user | password |\n|---|---|---|\n| bob | hunter2 |\n",  # a rule of three cells under a header of two
    "| Step | Password policy |\n|---|---|\n| 1 | at least 12 characters |\n",  # a name no credential word
    "a | b\n---+---\nc | d\n",  # no credential column
    "$ ls | grep password\n---\npassword.txt\n",  # a shell pipe
    "| user | password |\n|---|---|\n| bob |\n",  # a row of another count: the table ends
    # a markdown table's prose: words with a blank, a word that names no secret, code
    "| Endpoint | Auth |\n|---|---|\n| /users | Bearer token |\n| /health | None |\n| /x | required |\n",
    "| Function | Signature |\n|---|---|\n| foo | `foo(a, b)` |\n| bar | (a: int) -> str |\n",
    "| Variable | Secret | Description |\n|---|---|---|\n| DB_URL | yes | the database |\n| API | no | x |\n",
    "| Field | Password |\n|---|---|\n| type | string |\n| placeholder | <password> |\n",
])
def test_pipe_table_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. Terraform state's sensitive_attributes -----------------------------------------------------------------------

INSTANCE: dict[str, Any] = {
    "schema_version": 3,
    "attributes": {"id": "none", "length": 24, "result": "Zx9!rEsult", "bcrypt_hash": "$2a$10$abcdefghijklmnopqrstuv",
                   "keepers": {"a": "b"}, "special": True},
    "sensitive_attributes": [[{"type": "get_attr", "value": "result"}], [{"type": "get_attr", "value": "bcrypt_hash"}],
                             [{"type": "get_attr", "value": "keepers"}, {"type": "index", "value": {"value": "a",
                                                                                                 "type": "string"}}]],
    "private": "eyJzY2hlbWFfdmVyc2lvbiI6IjMifQ==",
}
STATE: dict[str, Any] = {"version": 4, "terraform_version": "1.6.0", "resources": [
    {"mode": "managed", "type": "random_password", "name": "db", "instances": [INSTANCE]}]}
TAKEN_ATTRIBUTES = {**INSTANCE["attributes"], "result": T, "bcrypt_hash": T, "keepers": T}


def test_a_states_sensitive_attributes_given_as_data_are_replaced_whole() -> None:
    out = stored({"result": STATE})
    assert out["result"]["resources"][0]["instances"][0] == {**INSTANCE, "attributes": TAKEN_ATTRIBUTES}
    assert {key: value for key, value in out["result"].items() if key != "resources"} == {
        "version": 4, "terraform_version": "1.6.0"}


def test_an_instance_at_the_top_of_a_step_and_under_a_name_rule_is_read_as_well(tmp_path: Path) -> None:
    """The step's own object, and the walk's mixed path (a ``*.NAME`` rule reads an object member by member)."""
    from capture.support import write_policy

    paths = [[{"type": "get_attr", "value": "result"}], [{"type": "get_attr", "value": "k"}]]
    instance = {"attributes": {"result": "x1", "id": "a", "k": {"a": 1}}, "sensitive_attributes": paths}
    taken = {**instance, "attributes": {"result": T, "id": "a", "k": T}}
    assert stored(instance) == taken
    block = apply_policy(load_policy(env={}), "context", {"state": instance}).block
    assert (block or {}).get("fields") == {
        "state.attributes": {"mode": "scrub", "found": {"credentials": 2}, "rule": 0}}
    path = write_policy(tmp_path, {"fields": [{"kind": "*", "path": "*.note", "mode": "keep"},
                                              {"kind": "*", "path": "*", "mode": "scrub"}]})
    policy = load_policy(str(path), env={})
    assert apply_policy(policy, "context", {"result": {**instance, "note": "x1"}}).data == {
        "result": {**taken, "note": "x1"}}


def test_a_states_sensitive_attributes_in_a_document_and_in_text_are_replaced() -> None:
    expected = {**STATE, "resources": [{**STATE["resources"][0], "instances": [
        {**INSTANCE, "attributes": TAKEN_ATTRIBUTES}]}]}
    for indent in (None, 2):
        document = json.dumps(STATE, indent=indent)
        assert json.loads(scrubbed(document)) == expected
        # a tool's output: the command, then the file (no document as a whole)
        out = scrubbed("$ cat terraform.tfstate\n" + document)
        assert out.startswith("$ cat terraform.tfstate\n")
        text = out.split("\n", 1)[1]
        assert json.loads(text.replace(f'"{T}"', '"@"').replace(T, '"@"').replace('"@"', json.dumps(T))) == expected
    assert stored({"a": "x", "out": json.dumps(STATE)}, "tool_call")["out"] == json.dumps(expected)


@pytest.mark.parametrize("data", [
    {"attributes": {"password_length": 12, "id": "x"}, "sensitive_attributes": []},
    {"attributes": {"id": "x"}, "sensitive_attributes": [[{"type": "get_attr", "value": "other"}]]},
    {"attributes": {"id": "x"}, "sensitive_attributes": [[{"type": "index", "value": "id"}]]},
    {"attributes": "not an object", "sensitive_attributes": [[{"type": "get_attr", "value": "id"}]]},
    {"attributes": {"id": None}, "sensitive_attributes": [[{"type": "get_attr", "value": "id"}]]},
    {"note": {"sensitive_attributes": "id", "attributes": {"id": "x"}}},
])
def test_look_alikes_of_sensitive_attributes_are_left(data: dict[str, Any]) -> None:
    assert stored(data) == data
    assert scrubbed(json.dumps(data)) == json.dumps(data)
    assert scrubbed("log " + json.dumps(data)) == "log " + json.dumps(data)


# -- 4. a JSON member URL-encoded twice ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("%257B%2522password%2522%253A%2522hunter2%2522%257D", f"%257B%2522password%2522%253A%2522{T}%2522%257D"),
    ("next=%2Fcb%3Fq%3D%257B%2522user%2522%253A%2522bob%2522%252C%2522api_key%2522%253A%2522abc%2540123%2522%257D%26x",
     f"next=%2Fcb%3Fq%3D%257B%2522user%2522%253A%2522bob%2522%252C%2522api_key%2522%253A%2522{T}%2522%257D%26x"),
    ("q=%257B%2522pin%2522%253A918273%257D", f"q=%257B%2522pin%2522%253A{T}%257D"),
    ("q=%257B%2522password%2522%253A%2520%2522a%255C%2522b%2522%252C%2522n%2522%253A1%257D",
     f"q=%257B%2522password%2522%253A%2520%2522{T}%2522%252C%2522n%2522%253A1%257D"),
])
def test_a_json_member_url_encoded_twice_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "q=%257B%2522user%2522%253A%2522bob%2522%257D", "q=%257B%2522password%2522%253Atrue%257D",
    "q=%257B%2522password%2522%253A%2522%2522%257D", "q=%257B%2522sort_key%2522%253A%2522name%2522%257D",
    "%2522%253A%2522%2522",
])
def test_twice_encoded_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_run_of_twice_encoded_members_is_read_as_one_encoded_once() -> None:
    """Each member's value is read from its own colon, never past the next quote (no value read again to the text's
    end: benchmarks/capture_hostile.py holds the run's time per MiB)."""
    once = scrubbed("%22password%22%3A" * 2000)
    assert scrubbed("%2522password%2522%253A" * 2000) == once.replace("%22", "%2522").replace("%3A", "%253A")


# -- 5. a .settings file's <Setting Name=...><Value Profile=...> -----------------------------------------------------

SETTINGS = """<?xml version='1.0' encoding='utf-8'?>
<SettingsFile xmlns="http://schemas.microsoft.com/VisualStudio/2004/01/settings" CurrentProfile="(Default)">
  <Profiles />
  <Settings>
    <Setting Name="Region" Type="System.String" Scope="User">
      <Value Profile="(Default)">eu-west-1</Value>
    </Setting>
    <Setting Name="DbPassword" Type="System.String" Scope="User">
      <Value Profile="(Default)">hunter2x</Value>
    </Setting>
    <Setting Name="ApiToken" Type="System.String" Scope="Application"><Value Profile="(Default)">t0k3n</Value></Setting>
  </Settings>
</SettingsFile>"""


def test_a_settings_files_value_under_a_credential_name_is_scrubbed() -> None:
    assert scrubbed(SETTINGS) == SETTINGS.replace("hunter2x", T).replace("t0k3n", T)


@pytest.mark.parametrize("text", [
    '<Setting Name="Password" Type="System.String"><Value Profile="(Default)" /></Setting>',
    '<Setting Name="Password" Type="System.String"><Value Profile="(Default)"></Value></Setting>',
    '<Setting Name="Password" Type="System.String"><Value Profile="(Default)">${PW}</Value></Setting>',
    '<Setting Name="Region" Type="System.String"><Value Profile="(Default)">eu</Value></Setting>',
    '<Setting Name="Password" Type="System.String"><Value Profile="(Default)">a</value></Setting>',  # not its close
])
def test_settings_naming_no_secret_or_holding_none_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 6. AUTH at redis-cli's prompt -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:6379> AUTH hunter2\nOK\n", f"127.0.0.1:6379> AUTH {T}\nOK\n"),
    ("127.0.0.1:6379> AUTH default s3cretR1", f"127.0.0.1:6379> AUTH default {T}"),
    ("$ redis-cli -h cache\ncache:6379[2]> auth \"pa ss\"\n(error) WRONGPASS",
     f"$ redis-cli -h cache\ncache:6379[2]> auth \"{T}\"\n(error) WRONGPASS"),
    ("[::1]:6379> AUTH app 'x1'\r\nOK", f"[::1]:6379> AUTH app '{T}'\r\nOK"),
    ("redis-cli -a hunter2x ping", f"redis-cli -a {T} ping"),  # taken under version 7 already
])
def test_auth_at_redis_clis_prompt_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "Use AUTH hunter2 to log in", "the AUTH command takes a password", "AUTH failed",
    "-> AUTH PLAIN AGJvYgBodW50ZXIy\n<-  235 2.7.0 Authentication successful",  # an SMTP log (swaks)
    "127.0.0.1:6379> AUTH a b c", "127.0.0.1:6379> GET AUTH", "x > AUTH y", "127.0.0.1:6379> AUTH",
    "note: 127.0.0.1:6379> AUTH hunter2",  # the prompt opens no line
    "127.0.0.1:6379> ping", f"127.0.0.1:6379> AUTH {T}",
])
def test_auth_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 10
    assert policy.digest_under(10) == V10_DIGEST != policy.digest_under(9) == V9_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["csvPw1", "mdPw2", "tfPw3", "urlPw4", "setPw5", "redisPw6"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "csv": f"$ cat u.csv\nid,password\n1,{secrets[0]}\n",
        "md": f"| user | password |\n|---|---|\n| bob | {secrets[1]} |\n",
        "state": {"attributes": {"result": secrets[2]},
                  "sensitive_attributes": [[{"type": "get_attr", "value": "result"}]]},
        "url": f"https://h/cb?n=%2Fx%3Fd%3D%257B%2522token%2522%253A%2522{secrets[3]}%2522%257D",
        "config": f'<Setting Name="ApiToken"><Value Profile="(Default)">{secrets[4]}</Value></Setting>',
        "redis": f"127.0.0.1:6379> AUTH {secrets[5]}\nOK",
    }, "leak-edges18")
    assert T in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret
