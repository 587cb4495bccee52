"""Name/value objects and dotted ``where`` keys (docs/capture.md).

1. A credential written as a name/value object - ``{"name": "DB_PASSWORD", "value": "X"}`` (Kubernetes env
   lists, ECS, GitHub Actions), ``{"Name": "/prod/db/password", "Value": "X"}`` (AWS SSM), ``{"key":
   "DEPLOY_TOKEN", "value": "X"}`` (GitLab/Bitbucket CI), a HAR entry's header or query parameter - was stored
   as sent under the shipped default: only the ``[name, value]`` list form was read. Its value is now replaced
   whole, as data at any depth and in a JSON document held in a string; its name is kept (``key`` is a table
   word, but there it holds a variable's name). Objects whose name names no credential are left as before.
2. A rule whose ``where`` names a dotted field (``request.method``) never matched any step; it is refused at
   load.

Every test drives the public path (``load_policy`` / ``apply_policy``), and one a real SDK run's store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bitexact.capture import PolicyError, apply, apply_policy, load_policy
from bitexact.capture.budget import Deadline
from bitexact.capture.clean import clean
from capture.support import recorded_in_store, write_policy

DEFAULT = load_policy("default")
TOKEN = "[CREDENTIAL]"


def _applied(data: dict[str, Any], policy: Any = DEFAULT) -> tuple[Any, dict[str, Any]]:
    """The stored data and the declared fields of one tool_call step."""
    captured = apply_policy(policy, "tool_call", data)
    return captured.data, (captured.block or {}).get("fields", {})


def _found(fields: dict[str, Any]) -> int:
    """How many credentials the block declares, over every field."""
    return sum(field.get("found", {}).get("credentials", 0) for field in fields.values())


# -- 1. name/value objects held as data ---------------------------------------------------------------

# (the object, its name member, its value member, the secret)
SECRET_OBJECTS = [
    ({"name": "DB_PASSWORD", "value": "k8sPw1"}, "name", "value", "k8sPw1"),
    ({"name": "GITHUB_TOKEN", "value": "ghaTok2", "valueFrom": None}, "name", "value", "ghaTok2"),
    ({"Name": "/prod/db/password", "Type": "SecureString", "Value": "ssmPw3", "Version": 4}, "Name", "Value",
     "ssmPw3"),
    ({"key": "DEPLOY_TOKEN", "value": "ciTok4", "protected": True, "masked": False}, "key", "value", "ciTok4"),
    ({"Key": "api_key", "Value": "bbKey5"}, "Key", "Value", "bbKey5"),
    ({"name": "Cookie", "value": "sid=harSid6", "comment": ""}, "name", "value", "sid=harSid6"),
    ({"name": "api_key", "value": "harKey7"}, "name", "value", "harKey7"),
    ({"name": "spring.datasource.password", "value": "dotPw8"}, "name", "value", "dotPw8"),
    ({"name": "/prod/api/key", "value": {"v": "nestedPw9"}}, "name", "value", "nestedPw9"),
    ({"name": "PIN_PASSWORD", "value": 80417}, "name", "value", "80417"),
]


@pytest.mark.parametrize(("obj", "name", "value", "secret"), SECRET_OBJECTS)
def test_a_credential_name_value_object_has_its_value_replaced_and_its_name_kept(
    obj: dict[str, Any], name: str, value: str, secret: str
) -> None:
    stored, fields = _applied({"tool": "env", "result": {"env": [{"name": "REGION", "value": "eu"}, obj]}})
    kept = stored["result"]["env"][1]
    assert kept[value] == TOKEN
    assert kept[name] == obj[name]  # the variable's name, no secret: never replaced (not even under "key")
    assert {k: v for k, v in kept.items() if k != value} == {k: v for k, v in obj.items() if k != value}
    assert secret not in json.dumps(stored)
    assert stored["result"]["env"][0] == {"name": "REGION", "value": "eu"}
    assert fields["result.env"]["found"] == {"credentials": 1}


def test_the_step_itself_and_an_object_valued_top_level_key_are_read_as_name_value_objects() -> None:
    stored, fields = _applied({"name": "DB_PASSWORD", "value": "topPw1"})
    assert stored == {"name": "DB_PASSWORD", "value": TOKEN}
    assert fields["value"]["found"] == {"credentials": 1}
    stored, fields = _applied({"tool": "ssm", "result": {"Name": "/prod/db/password", "Value": "argPw2"}})
    assert stored["result"] == {"Name": "/prod/db/password", "Value": TOKEN}
    assert fields["result.Value"]["found"] == {"credentials": 1}


def test_a_list_of_them_nested_deep_has_every_value_replaced() -> None:
    env = [{"name": f"SVC{i}_PASSWORD", "value": f"deepPw{i}"} for i in range(5)]
    data: dict[str, Any] = {"tool": "kubectl", "result": {"items": [{"spec": {"containers": [[{"env": env}]]}}]}}
    stored, fields = _applied(data)
    stored_env = stored["result"]["items"][0]["spec"]["containers"][0][0]["env"]
    assert [item["value"] for item in stored_env] == [TOKEN] * 5
    assert [item["name"] for item in stored_env] == [item["name"] for item in env]
    assert _found(fields) == 5
    assert "deepPw" not in json.dumps(stored)
    assert data["result"]["items"][0]["spec"]["containers"][0][0]["env"][0]["value"] == "deepPw0"  # input unchanged


NEAR_MISSES = [
    {"name": "REGION", "value": "eu-west-1"},
    {"name": "max_tokens", "value": 4096},
    {"Name": "/prod/db/region", "Type": "String", "Value": "eu"},
    {"name": "DB_PASSWORD", "type": "string", "description": "the password"},  # no value member
    {"name": "DB_PASSWORD", "value": None},  # nothing to replace
    {"name": "DB_PASSWORD", "value": ""},
    {"name": "sort_key", "value": "created_at"},
    {"name": 7, "value": "notAName"},  # a name member that is no string
    {"title": "DB_PASSWORD", "value": "otherMember"},  # not a name member (`label` is one, rules v7)
    {"name": "DB_PASSWORD", "val": "otherMember"},  # not a value member
]


@pytest.mark.parametrize("obj", NEAR_MISSES)
def test_an_object_that_is_no_credential_name_value_object_is_stored_as_before(obj: dict[str, Any]) -> None:
    stored, fields = _applied({"tool": "env", "result": [obj]})
    assert stored["result"] == [obj]
    assert fields == {}


def test_a_key_member_naming_no_credential_is_still_replaced_as_a_table_word() -> None:
    # `key` is in the credential table: an opaque value under it is replaced whole, as before, unless it is the
    # name of a name/value object that names a credential. Since audit 16 a bare key's dotted id or word (an
    # issue's key, a variable's name) is no credential and is left (test_false_positives16.py).
    opaque = "q8Zr2LkWm9Xv4PtNb7Yc1HsJd6Fg3Ae0"
    result = [{"key": "PAY-4521", "value": 3}, {"key": "DEPLOY_TOKEN"}, {"key": opaque, "value": 3}, {"key": opaque}]
    stored, fields = _applied({"tool": "jira", "result": result})
    assert stored["result"] == [*result[:2], {"key": TOKEN, "value": 3}, {"key": TOKEN}]
    assert fields["result"]["found"] == {"credentials": 2}


def test_the_rules_still_decide_the_value_members_mode(tmp_path: Path) -> None:
    policy = load_policy(str(write_policy(tmp_path, {
        "detectors": {"credentials": {}},
        "fields": [{"kind": "tool_call", "path": "*.value", "mode": "hash-only"},
                   {"kind": "*", "path": "*", "mode": "scrub"}],
    })))
    stored, fields = _applied({"tool": "env", "result": [{"key": "DEPLOY_TOKEN", "value": "hashPw1"}]}, policy)
    assert stored["result"] == [{"key": "DEPLOY_TOKEN", "value": "[hash-only]"}]
    assert fields["result.0.value"]["mode"] == "hash-only"


def test_without_the_credentials_detector_nothing_is_replaced(tmp_path: Path) -> None:
    policy = load_policy(str(write_policy(tmp_path, {"detectors": {"pan": {}}})))
    obj = {"name": "DB_PASSWORD", "value": "plainPw1"}
    stored, fields = _applied({"tool": "env", "result": [obj]}, policy)
    assert stored["result"] == [obj]
    assert fields == {}


# -- 1. in a JSON document held in a string ----------------------------------------------------------------

POD = {"spec": {"containers": [{"name": "api", "env": [
    {"name": "REGION", "value": "eu-west-1"},
    {"value": "podPw1", "name": "DB_PASSWORD"},  # the value before the name
    {"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "api", "key": "token"}}},
]}]}}


@pytest.mark.parametrize("dump", [
    lambda doc: json.dumps(doc),
    lambda doc: json.dumps(doc, indent=2),
    lambda doc: json.dumps(doc, separators=(",", ":")),
])
def test_a_document_in_a_string_has_the_value_replaced_and_the_rest_kept(dump: Any) -> None:
    # Beside other fields, so the document is read among many texts (the prefilter decides whether it is parsed).
    stored, fields = _applied({"tool": "kubectl", "args": ["get", "pod", "-o", "json"], "result": dump(POD)})
    doc = json.loads(stored["result"])
    env = doc["spec"]["containers"][0]["env"]
    assert env[1] == {"value": TOKEN, "name": "DB_PASSWORD"}
    assert env[0] == {"name": "REGION", "value": "eu-west-1"}
    # No value member: a secretKeyRef's "key" names an entry of a Secret, a word: left (audit 16).
    assert env[2] == {"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "api", "key": "token"}}}
    assert "podPw1" not in stored["result"]
    assert fields["result"]["found"] == {"credentials": 1}
    # Only the token changed: the document's layout is kept.
    assert stored["result"] == dump(POD).replace('"podPw1"', json.dumps(TOKEN))


@pytest.mark.parametrize(("doc", "secret"), [
    ({"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "docSsm1"}}, "docSsm1"),
    ({"variables": [{"key": "DEPLOY_TOKEN", "value": "docCi2"}]}, "docCi2"),
    ({"log": {"entries": [{"request": {"headers": [{"name": "Cookie", "value": "sid=docHar3"}],
                                       "queryString": [{"name": "api_key", "value": "docHar4"}]}}]}}, "docHar"),
    ({"wrapped": json.dumps({"env": [{"name": "DB_PASSWORD", "value": "docDoc5"}]})}, "docDoc5"),
    ({"env": [{"n\\u0061me": "x", "name": "DB_PASSWORD", "v\u0061lue": "docEsc6"}]}, "docEsc6"),
])
def test_every_form_is_found_in_a_document(doc: dict[str, Any], secret: str) -> None:
    stored, fields = _applied({"tool": "fetch", "status": 200, "result": json.dumps(doc)})
    assert secret not in json.dumps(stored)
    assert _found(fields) >= 1


def test_an_escaped_value_key_in_a_document_is_read_as_the_key_it_is() -> None:
    text = '{"name": "DB_PASSWORD", "v\\u0061lue": "escPw1"}'
    stored, _ = _applied({"tool": "x", "status": 1, "result": text})
    assert "escPw1" not in stored["result"]
    assert json.loads(stored["result"]) == {"name": "DB_PASSWORD", "value": TOKEN}


def test_a_document_keeps_its_key_member_that_names_a_credential() -> None:
    text = json.dumps({"variables": [{"key": "DEPLOY_TOKEN", "value": "keepName1"}, {"key": "PAY-4521", "value": 3}]})
    stored, _ = _applied({"tool": "gitlab", "status": 200, "result": text})
    assert json.loads(stored["result"]) == {"variables": [{"key": "DEPLOY_TOKEN", "value": TOKEN},
                                                          {"key": "PAY-4521", "value": 3}]}  # a dotted id (audit 16)


@pytest.mark.parametrize("doc", [
    {"env": [{"name": "REGION", "value": "eu-west-1"}]},
    {"Parameter": {"Name": "/prod/db/region", "Value": "eu"}},
    {"env": [{"name": "DB_PASSWORD", "description": "no value member"}]},
    {"env": [{"name": "DB_PASSWORD"}, {"value": "in another object"}]},
    {"env": {"name": "DB_PASSWORD", "items": [{"value": "one level down"}]}},
])
def test_a_document_with_no_credential_name_value_object_is_stored_as_written(doc: dict[str, Any]) -> None:
    text = json.dumps(doc)
    stored, fields = _applied({"tool": "fetch", "status": 200, "result": text})
    assert stored["result"] == text
    assert fields == {}


# -- 1. once is enough; the clean-step shortcut agrees -------------------------------------------------------

STEP: dict[str, Any] = {
    "tool": "deploy",
    "env": [{"name": "DB_PASSWORD", "value": "twicePw1"}, {"name": "REGION", "value": "eu"}],
    "vars": [{"key": "DEPLOY_TOKEN", "value": "twiceTok2"}],
    "ssm": {"Name": "/prod/db/password", "Value": "twicePw3"},
    "doc": json.dumps({"env": [{"name": "API_TOKEN", "value": "twiceTok4"}]}),
}


def test_applying_the_policy_twice_declares_nothing_new() -> None:
    once = apply_policy(DEFAULT, "tool_call", STEP)
    assert _found((once.block or {}).get("fields", {})) == 4
    twice = apply_policy(DEFAULT, "tool_call", once.data)
    assert twice.data == once.data
    assert twice.block is None
    assert clean(once.data, DEFAULT.scanner, Deadline.unlimited())  # the shortcut agrees: nothing left to change


@pytest.mark.parametrize("data", [
    {"env": [{"name": "DB_PASSWORD", "value": "cleanPw1"}]},
    {"name": "DB_PASSWORD", "value": "cleanPw2"},
    {"result": {"Name": "/prod/db/password", "Value": "cleanPw3"}},
    {"vars": [[{"key": "DEPLOY_TOKEN", "value": "cleanTok4"}]]},
])
def test_the_clean_shortcut_never_calls_such_a_step_clean(data: dict[str, Any]) -> None:
    assert not clean(data, DEFAULT.scanner, Deadline.unlimited())


def test_the_shortcut_stores_what_the_walk_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    for data in [STEP, {"env": [{"name": "REGION", "value": "eu"}]}, {"vars": [{"key": "DEPLOY_TOKEN", "value": TOKEN}]}]:
        fast = apply_policy(DEFAULT, "tool_call", data)
        with monkeypatch.context() as patched:
            patched.setattr(apply, "clean", lambda *args: False)
            slow = apply_policy(DEFAULT, "tool_call", data)
        assert (fast.data, fast.block) == (slow.data, slow.block)
    assert clean({"env": [{"name": "REGION", "value": "eu"}]}, DEFAULT.scanner, Deadline.unlimited())


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["storePw1", "storeSsm2", "storeCi3", "storeSid4", "storeKey5", "storeDoc6"]
    stored = recorded_in_store(tmp_path / "home", {
        "tool": "deploy",
        "env": [{"name": "DB_PASSWORD", "value": secrets[0]}],
        "result": {"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": secrets[1]},
                   "variables": [{"key": "DEPLOY_TOKEN", "value": secrets[2]}],
                   "har": {"headers": [{"name": "Cookie", "value": f"sid={secrets[3]}"}],
                           "queryString": [{"name": "api_key", "value": secrets[4]}]}},
        "doc": json.dumps({"env": [{"name": "DB_PASSWORD", "value": secrets[5]}]}, indent=2),
    }, "name-value-objects")
    for secret in secrets:
        assert secret not in stored, secret
    assert "DEPLOY_TOKEN" in stored and "/prod/db/password" in stored  # the names are kept


# -- 2. a where key holding a dot ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "escaped"), [("request.method", "request~1method"), ("a~b.c", "a~0b~1c")])
def test_a_where_key_with_a_dot_is_refused_at_load(tmp_path: Path, name: str, escaped: str) -> None:
    path = write_policy(tmp_path, {"fields": [
        {"kind": "*", "path": "*", "mode": "scrub"},
        {"kind": "http_call", "where": {"method": "GET", name: "POST"}, "path": "response", "mode": "hash-only"},
    ]})
    with pytest.raises(PolicyError) as caught:
        load_policy(str(path))
    assert caught.value.field == f"fields[1].where.{escaped}"
    assert "top-level" in caught.value.reason and "nested path" in caught.value.reason


def test_a_where_key_without_a_dot_still_loads_and_matches(tmp_path: Path) -> None:
    policy = load_policy(str(write_policy(tmp_path, {"fields": [
        {"kind": "http_call", "where": {"method": "POST"}, "path": "response", "mode": "hash-only"},
        {"kind": "*", "path": "*", "mode": "scrub"},
    ]})))
    posted = apply_policy(policy, "http_call", {"method": "POST", "url": "https://x.example/", "response": "r"})
    fetched = apply_policy(policy, "http_call", {"method": "GET", "url": "https://x.example/", "response": "r"})
    assert posted.data["response"] == "[hash-only]"
    assert fetched.data["response"] == "r"
