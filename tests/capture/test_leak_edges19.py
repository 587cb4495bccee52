"""Credentials the default policy stored as written under rules version 10, scrubbed under version 11:

1. ``terraform show -json``'s resources: the members of ``values`` that ``sensitive_values`` marks (``true``, or a
   container holding a ``true`` leaf), in data, in a JSON document given as text, and in text that is no document;
   and a plan's changes, ``before`` / ``after`` as ``before_sensitive`` / ``after_sensitive`` mark them;
2. a markdown table whose header cells are in emphasis or code marks (``| **Password** |``, `` | `token` | ``);
3. a markdown table cell holding an escaped pipe ``\\|`` (the table ended there);
4. ``AUTH`` at redis-cli's other prompts: on a unix socket (``redis /var/run/redis.sock>``), ``not connected>``,
   inside a transaction (``(TX)``);
5. a URL-encoded JSON member whose quotes are ``%5C``-escaped (a JSON document held in a JSON string, encoded);
6. a CSV or TSV header below a text's 16th line (now looked for in its first 64).

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside the look-alikes that are
left: ``sensitive_values`` of ``false`` leaves and empty mirrors, a ``| **Name** | **Value** |`` table of ordinary
data, a table whose prose mentions ``\\|``, ``AUTH`` in prose.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store, scrubbed, write_policy

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION

V11_DIGEST = "ad5bbd83c4e0e6236285f2e9d19dd6112509d43f9181bc4ad04b70026bf36cf5"
"""The shipped default policy's digest under rules version 11 (docs/capture.md, "Digest")."""
V10_DIGEST = "106abe7b47163b34bb631dd9a700c593735472244daa06ac8fd72bea5ed07b4f"
T = "[CREDENTIAL]"


def stored(data: dict[str, Any], kind: str = "context") -> dict[str, Any]:
    """``data`` as the default policy stores it for a step of ``kind``."""
    return apply_policy(load_policy(env={}), kind, data).data


# -- 1. terraform show -json's sensitive_values ----------------------------------------------------------------------

RESOURCE: dict[str, Any] = {
    "address": "random_password.db", "mode": "managed", "type": "random_password", "name": "db",
    "provider_name": "registry.terraform.io/hashicorp/random", "schema_version": 3,
    "values": {"id": "none", "length": 24, "result": "Zx9!rEsult", "bcrypt_hash": "$2a$10$abcdefghijklmnopqrstuv",
               "keepers": {"a": "b"}, "special": True, "count": 918273, "override_special": None,
               "ebs": [{"kms_key_id": "kmsK3y", "size": 8}], "tags": {"env": "prod"}, "cidrs": ["10.0.0.0/8"]},
    "sensitive_values": {"result": True, "bcrypt_hash": True, "count": True, "override_special": True,
                         "keepers": {"a": True}, "ebs": [{"kms_key_id": True}], "tags": {}, "cidrs": [False],
                         "absent": True},
}
SHOW: dict[str, Any] = {"format_version": "1.0", "terraform_version": "1.6.0", "values": {
    "outputs": {"name": {"sensitive": False, "value": "db"}},
    "root_module": {"resources": [RESOURCE], "child_modules": [
        {"address": "module.a", "resources": [{**RESOURCE, "address": "module.a.random_password.db"}]}]}}}
TAKEN_VALUES = {**RESOURCE["values"], "result": T, "bcrypt_hash": T, "count": T, "keepers": T, "ebs": T}
"""``null`` marked sensitive is left (no value); ``tags`` (``{}``) and ``cidrs`` (``[false]``) mark nothing."""


def _taken(show: dict[str, Any]) -> dict[str, Any]:
    resource = {**RESOURCE, "values": TAKEN_VALUES}
    return {**show, "values": {**show["values"], "root_module": {"resources": [resource], "child_modules": [
        {"address": "module.a", "resources": [{**resource, "address": "module.a.random_password.db"}]}]}}}


def test_sensitive_values_given_as_data_are_replaced_whole() -> None:
    assert stored({"result": SHOW}) == {"result": _taken(SHOW)}
    # the resource at the top of a step, its mask before its values
    resource = {"sensitive_values": {"result": True}, "values": {"result": "x1", "id": "a"}}
    assert stored(resource) == {"sensitive_values": {"result": True}, "values": {"result": T, "id": "a"}}


def test_a_resource_under_a_name_rule_is_read_as_well(tmp_path: Path) -> None:
    """The walk's mixed path: a ``*.NAME`` rule reads an object member by member."""
    resource = {"values": {"result": "x1", "id": "a", "k": {"a": 1}}, "sensitive_values": {"result": True, "k": {}}}
    block = apply_policy(load_policy(env={}), "context", {"state": resource}).block
    assert (block or {}).get("fields") == {"state.values": {"mode": "scrub", "found": {"credentials": 1}, "rule": 0}}
    path = write_policy(tmp_path, {"fields": [{"kind": "*", "path": "*.note", "mode": "keep"},
                                              {"kind": "*", "path": "*", "mode": "scrub"}]})
    policy = load_policy(str(path), env={})
    assert apply_policy(policy, "context", {"result": {**resource, "note": "x1"}}).data == {
        "result": {**resource, "values": {"result": T, "id": "a", "k": {"a": 1}}, "note": "x1"}}


def test_sensitive_values_in_a_document_and_in_text_are_replaced() -> None:
    expected = _taken(SHOW)
    for indent in (None, 2):
        document = json.dumps(SHOW, indent=indent)
        assert json.loads(scrubbed(document)) == expected
        # the command, then its output: no document as a whole
        out = scrubbed("$ terraform show -json\n" + document)
        assert out.startswith("$ terraform show -json\n")
        text = out.split("\n", 1)[1]
        # a container is replaced whole, its brackets too: [CREDENTIAL] written bare
        assert json.loads(text.replace(f'"{T}"', '"@"').replace(T, '"@"').replace('"@"', json.dumps(T))) == expected
    assert stored({"a": "x", "out": json.dumps(SHOW)}, "tool_call")["out"] == json.dumps(expected)
    # the mask before the values, in a line of a log
    line = 'plan: {"sensitive_values": {"s": [true, false]}, "values": {"s": ["a1", "b2"], "n": "x"}}'
    assert scrubbed(line) == f'plan: {{"sensitive_values": {{"s": [true, false]}}, "values": {{"s": {T}, "n": "x"}}}}'


@pytest.mark.parametrize("data", [
    {"values": {"id": "x", "tags": {"a": "b"}}, "sensitive_values": {}},
    {"values": {"id": "x", "tags": {"a": "b"}, "l": ["a"]}, "sensitive_values": {"id": False, "tags": {}, "l": [False]}},
    {"values": {"id": "x"}, "sensitive_values": {"other": True}},
    {"values": {"id": "x"}, "sensitive_values": {"id": "true"}},  # a string, no flag
    {"values": "not an object", "sensitive_values": {"values": True}},
    {"values": {"id": None}, "sensitive_values": {"id": True}},
    {"note": {"sensitive_values": {"id": True}}, "values": {"id": "x"}},  # not the resource's own
    {"after": {"id": "x"}, "after_sensitive": {}, "before": "y", "before_sensitive": False},
    {"after": {"id": "x"}, "after_unknown": {"id": True}},  # no mirror
    {"after": ["a", "b"], "after_sensitive": [False, False]},
])
def test_look_alikes_of_sensitive_values_are_left(data: dict[str, Any]) -> None:
    assert stored(data) == data
    assert scrubbed(json.dumps(data)) == json.dumps(data)
    assert scrubbed("log " + json.dumps(data)) == "log " + json.dumps(data)


def test_a_mirror_nested_deeper_than_the_walk_reads_marks_its_attribute() -> None:
    """The data walk reads a mirror to 32 levels (capture.detectors.credentials.MAX_MASK_DEPTH); one nested deeper
    is read as marking, and so is a document's (read to its end, once)."""
    deep: Any = True
    for _ in range(40):
        deep = {"a": deep}
    resource = {"values": {"m": {"x": 1}, "n": "y"}, "sensitive_values": {"m": deep, "n": False}}
    assert stored(resource)["values"] == {"m": T, "n": "y"}
    assert json.loads(scrubbed(json.dumps(resource)))["values"] == {"m": T, "n": "y"}


PLAN: dict[str, Any] = {"format_version": "1.2", "resource_changes": [
    {"address": "aws_db_instance.db", "change": {
        "actions": ["create"], "before": None, "after": {"identifier": "db", "result": "planSecret1", "tags": {"a": "b"}},
        "after_unknown": {"id": True, "arn": True, "identifier": True},  # no mirror: what apply will know
        "before_sensitive": False, "after_sensitive": {"result": True, "tags": {}}}},
    {"address": "x.y", "change": {
        "actions": ["update"], "before": {"conn": "beforeSecret2", "n": 1}, "after": {"conn": "afterSecret3", "n": 2},
        "before_sensitive": {"conn": True}, "after_sensitive": {"conn": True, "n": False}}}],
    "output_changes": {
        "db_url": {"actions": ["create"], "before": None, "after": "postgres://h/db?x=outSecret4", "after_unknown": False,
                   "before_sensitive": False, "after_sensitive": True},
        "ids": {"actions": ["create"], "before": None, "after": ["i-1", "i-2"], "after_sensitive": [True, False]},
        "plain": {"actions": ["create"], "before": None, "after": "hello", "after_unknown": False,
                  "before_sensitive": False, "after_sensitive": False}}}
PLAN_TAKEN: dict[str, Any] = {**PLAN, "resource_changes": [
    {**PLAN["resource_changes"][0], "change": {**PLAN["resource_changes"][0]["change"],
                                               "after": {"identifier": "db", "result": T, "tags": {"a": "b"}}}},
    {**PLAN["resource_changes"][1], "change": {**PLAN["resource_changes"][1]["change"],
                                               "before": {"conn": T, "n": 1}, "after": {"conn": T, "n": 2}}}],
    "output_changes": {**PLAN["output_changes"], "db_url": {**PLAN["output_changes"]["db_url"], "after": T},
                       "ids": {**PLAN["output_changes"]["ids"], "after": T}}}


def test_a_plans_before_and_after_sensitive_mirrors_are_read_as_sensitive_values_are() -> None:
    """``terraform show -json PLAN``: a change's ``before_sensitive`` / ``after_sensitive`` mirror its ``before`` /
    ``after`` (a mirror ``true`` itself marks the whole value: an output's); ``after_unknown`` is no mirror."""
    assert stored({"plan": PLAN}) == {"plan": PLAN_TAKEN}
    for indent in (None, 2):
        document = json.dumps(PLAN, indent=indent)
        assert json.loads(scrubbed(document)) == PLAN_TAKEN
        out = scrubbed("$ terraform show -json tfplan\n" + document).split("\n", 1)[1]
        assert json.loads(out.replace(f'"{T}"', '"@"').replace(T, '"@"').replace('"@"', json.dumps(T))) == PLAN_TAKEN


# -- 2. a markdown table's header cells in emphasis or code marks ----------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("| **User** | **Password** |\n|---|---|\n| bob | hunter2 |\n", f"| **User** | **Password** |\n|---|---|\n| bob | {T} |\n"),
    ("| user | `password` |\n|---|---|\n| bob | hunter2 |\n", f"| user | `password` |\n|---|---|\n| bob | {T} |\n"),
    ("| user | _Token_ |\n| --- | --- |\n| bob | t0k3nX |\n", f"| user | _Token_ |\n| --- | --- |\n| bob | {T} |\n"),
    ("| *Name* | __API Key__ |\n|:---|:---|\n| ci | k-123 |\n",
     f"| *Name* | __API Key__ |\n|:---|:---|\n| ci | {T} |\n"),
    ("| Name | **`api_key`** |\n|---|---|\n| ci | k-123 |\n", f"| Name | **`api_key`** |\n|---|---|\n| ci | {T} |\n"),
])
def test_a_header_cell_in_markdown_marks_names_its_column(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "| **Name** | **Value** |\n|---|---|\n| region | eu |\n| password | hunter2 |\n",  # a table of names
    # a model's output tokens: the logprob column's name in any case
    "| **Token** | **Logprob** |\n|---|---|\n| Hello | -0.1 |\n", "| Token | LogProb |\n|---|---|\n| Hello | -0.1 |\n",
    "Token,Logprob\nHello,-0.1\n",
    "| **Password** | **User** |\n|---|---|\n| required | bob |\n| <password> | al |\n",  # prose cells
    "| **Password policy** | x |\n|---|---|\n| 12 chars | y |\n",  # a name no credential word
    "| **password | x |\n|---|---|\n| hunter2 | y |\n",  # marks not closed: no name
    "| **password** |\n|---|\n| hunter2 |\n",  # one cell: no table of names
])
def test_marked_header_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. a markdown cell holding an escaped pipe ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("| user | password |\n|---|---|\n| bob | hun\\|ter2 |\n| al | s3cr3t |\n",
     f"| user | password |\n|---|---|\n| bob | {T} |\n| al | {T} |\n"),
    # a pipe escaped in another column no longer ends the table
    ("| note | token |\n|---|---|\n| a\\|b | t0k3nA |\n| c | t0k3nB |\n",
     f"| note | token |\n|---|---|\n| a\\|b | {T} |\n| c | {T} |\n"),
])
def test_a_markdown_cell_holding_an_escaped_pipe_is_read_whole(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    # prose under a credential column that mentions the escaped pipe
    "| Operator | Secret |\n|---|---|\n| `\\|` | use a \\| b to write a pipe |\n",
    "| Key | Meaning |\n|---|---|\n| `\\|` | a literal pipe |\n",  # no credential column
])
def test_escaped_pipe_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_psql_cell_holding_a_backslash_and_a_pipe_is_data() -> None:
    """A psql table's cells are data: a backslash before a pipe there is no escape. Under rules version 11 the row
    (one cell more than the header) ended the table and was left; under rules version 13 (test_leak_edges22) a
    client's row is split at its rule line's joints, and the value is taken whole, backslash and all."""
    assert scrubbed(" user | password \n------+----------\n bob  | a\\|b\n") == (
        f" user | password \n------+----------\n bob  | {T}\n")


# -- 4. AUTH at redis-cli's other prompts ----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("redis /var/run/redis.sock> AUTH hunter2\nOK\n", f"redis /var/run/redis.sock> AUTH {T}\nOK\n"),
    ("$ redis-cli -s /tmp/r.sock -n 3\nredis /tmp/r.sock[3]> auth app s3cr3t\nOK",
     f"$ redis-cli -s /tmp/r.sock -n 3\nredis /tmp/r.sock[3]> auth app {T}\nOK"),
    ("not connected> AUTH hunter2\n", f"not connected> AUTH {T}\n"),
    ("127.0.0.1:6379(TX)> AUTH x1\nQUEUED\n", f"127.0.0.1:6379(TX)> AUTH {T}\nQUEUED\n"),
    ("cache:6379[2](TX)> AUTH u x2", f"cache:6379[2](TX)> AUTH u {T}"),
])
def test_auth_at_redis_clis_other_prompts_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "note: redis /tmp/r.sock> AUTH hunter2",  # the prompt opens no line
    "xnot connected> AUTH hunter2", "redis> AUTH hunter2", "/tmp/r.sock> AUTH hunter2",  # no prompt of redis-cli's
    "redis /tmp/r.sock> AUTH a b c", "not connected> AUTH", "redis /tmp/r.sock> GET AUTH",
    "We were not connected> AUTH failed twice",  # prose
])
def test_auth_look_alikes_at_other_prompts_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 5. a URL-encoded JSON member with %5C-escaped quotes ------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("q=%7B%5C%22password%5C%22%3A%5C%22hunter2%5C%22%7D", f"q=%7B%5C%22password%5C%22%3A%5C%22{T}%5C%22%7D"),
    # {"body": "{\"user\":\"bob\",\"password\":\"a\\\"b c\",\"pin\":1234}"} URL-encoded: an escaped quote inside
    ("q=%7B%22body%22%3A%20%22%7B%5C%22user%5C%22%3A%5C%22bob%5C%22%2C%5C%22password%5C%22%3A%5C%22a%5C%5C%5C%22b"
     "%20c%5C%22%2C%5C%22pin%5C%22%3A1234%7D%22%7D",
     f"q=%7B%22body%22%3A%20%22%7B%5C%22user%5C%22%3A%5C%22bob%5C%22%2C%5C%22password%5C%22%3A%5C%22{T}%5C%22%2C"
     f"%5C%22pin%5C%22%3A{T}%7D%22%7D"),
    ("d=%5c%22api_key%5c%22%3A+%5c%22k%25123%5c%22", f"d=%5c%22api_key%5c%22%3A+%5c%22{T}%5c%22"),
])
def test_a_url_encoded_member_with_escaped_quotes_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "q=%7B%5C%22user%5C%22%3A%5C%22bob%5C%22%7D", "q=%7B%5C%22password%5C%22%3Atrue%7D",
    "q=%7B%5C%22password%5C%22%3A%5C%22%5C%22%7D",  # empty
    "q=%22password%5C%22%3A%5C%22x%5C%22",  # the name's opening quote not escaped: no such member
    "q=%7B%5C%22sort_key%5C%22%3A%5C%22name%5C%22%7D",
])
def test_escaped_encoded_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 6. a CSV header below a text's 16th line ------------------------------------------------------------------------

PREAMBLE = "".join(f"2026-12-01 10:00:{n:02d} INFO step {n} done\n" for n in range(1, 41))


@pytest.mark.parametrize(("text", "expected"), [
    (PREAMBLE + "$ cat users.csv\nid,password\n1,pw1\n", PREAMBLE + f"$ cat users.csv\nid,password\n1,{T}\n"),
    ("".join(f"line {n}\n" for n in range(1, 64)) + "user\ttoken\nbob\tt0k3n\n",  # the 64th line
     "".join(f"line {n}\n" for n in range(1, 64)) + f"user\ttoken\nbob\t{T}\n"),
])
def test_a_csv_header_within_a_texts_first_64_lines_is_read(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "".join(f"line {n}\n" for n in range(1, 65)) + "id,password\n1,pw1\n",  # the 65th line: not looked for
    # the first header names no credential: the search ends there, its rows are never read as a header
    PREAMBLE + "name,kind\nbob,token\nal,abc123\n",
    PREAMBLE + "Hello, world\n" + "id,password\n1,pw1\n",  # a line of names above it (no credential): the end
])
def test_csv_look_alikes_below_the_16th_line_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 11
    assert policy.digest_under(11) == V11_DIGEST != policy.digest_under(10) == V10_DIGEST


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["tfPw1", "mdPw2", "pipePw3", "redisPw4", "urlPw5", "planPw6"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "show": {"values": {"result": secrets[0]}, "sensitive_values": {"result": True}},
        "md": f"| user | **Password** |\n|---|---|\n| bob | {secrets[1]} |\n",
        "pipe": f"| user | token |\n|---|---|\n| bob | a\\|{secrets[2]} |\n",
        "redis": f"redis /var/run/redis.sock> AUTH {secrets[3]}\nOK",
        "url": f"https://h/cb?q=%7B%5C%22password%5C%22%3A%5C%22{secrets[4]}%5C%22%7D",
        "plan": json.dumps({"change": {"after": {"result": secrets[5]}, "after_sensitive": {"result": True}}}),
    }, "leak-edges19")
    assert T in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret


@pytest.mark.parametrize("text", [
    'log {"password": true, "api_key": false, "token": null} done',
    "repr {'password': None, 'secret': True, 'token': False} x",
])
def test_a_credential_members_bare_boolean_or_null_in_text_is_left(text: str) -> None:
    """`"password": true` in a line of text became `"password": [CREDENTIAL]`, which holds no secret and breaks
    the JSON, while the same member given as data was left (booleans and null are no secret)."""
    assert scrubbed(text) == text


def test_a_credential_members_quoted_literal_or_number_in_text_is_still_taken() -> None:
    assert scrubbed('log {"password": "true", "secret": 12, "pin": 1234}') == \
        'log {"password": "[CREDENTIAL]", "secret": [CREDENTIAL], "pin": [CREDENTIAL]}'
