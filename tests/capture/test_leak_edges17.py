"""Credentials the default policy stored as written under rules version 8, scrubbed under version 9:

1. a Kubernetes Secret given as data (an object in a record, a parsed manifest in a tool's result), and its ``data``
   written in YAML as a flow mapping (``data: {password: cGFzcw==}``);
2. Terraform's sensitive values: ``"value": X`` beside ``"sensitive": true`` (``terraform output -json``, a state
   file's ``outputs``), X of any type, in data and in a JSON document given as text;
   (and in a line of text that is no document as a whole: a command and its output);
3. .NET's applicationSettings, ``<setting name="Password" serializeAs="String"><value>x</value></setting>``;
4. a CSV or TSV table's credential columns (a header on a text's first line);
5. a URL-encoded JSON member (``%7B%22password%22%3A%22x%22%7D``) and a pair encoded twice (``password%253Dx``).

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside the look-alikes that are
left: a ``Service``'s data, ``"sensitive": false``, ``<setting name="Region">``, a ``token`` column beside a
``logprob`` one, a ``key,value`` table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION

V9_DIGEST = "795776cf0b643e2715a723d900aec9e0aabecf0f7332a43337751622fa7b1742"
"""The shipped default policy's digest under rules version 9 (docs/capture.md, "Digest")."""
T = "[CREDENTIAL]"
TAKEN = {"mode": "scrub", "found": {"credentials": 1}, "rule": 0}
"""A field's declaration when the credential rule replaced one value in it (the default's one rule)."""


def stored(data: dict[str, Any], kind: str = "context") -> dict[str, Any]:
    """``data`` as the default policy stores it for a step of ``kind``."""
    return apply_policy(load_policy(env={}), kind, data).data


def found(data: dict[str, Any]) -> dict[str, Any]:
    """The capture block's fields of ``data`` as the default policy declares them (a ``context`` step)."""
    block = apply_policy(load_policy(env={}), "context", data).block
    return (block or {}).get("fields", {})


# -- 1. a Kubernetes Secret as data, and as a YAML flow mapping ------------------------------------------------------


def test_a_secret_given_as_data_has_every_value_of_its_maps_replaced_and_its_keys_kept() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "type": "Opaque",
              "data": {"username": "YWRtaW4=", "tls.crt": "LS0tLS1CRUdJTg==", "n": 12345},
              "stringData": {"config.yaml": "user: bob\npass: x\n", "nested": {"a": "b"}}}
    assert stored(secret) == {**secret, "data": {"username": T, "tls.crt": T, "n": T},
                              "stringData": {"config.yaml": T, "nested": T}}
    assert found(secret) == {"data.username": TAKEN,
                             "data.tls~1crt": TAKEN,
                             "data.n": TAKEN,
                             "stringData.config~1yaml": TAKEN,
                             "stringData.nested": TAKEN}


def test_a_secret_nested_in_a_tool_result_or_a_list_is_read_at_any_depth() -> None:
    result = {"result": {"items": [
        {"kind": "Secret", "data": {"user": "Ym9i"}, "metadata": {"name": "a"}},
        {"kind": "Service", "data": {"user": "Ym9i"}},
        {"kind": "ConfigMap", "data": {"region": "eu"}},
    ], "kind": "List"}}
    assert stored(result) == {"result": {"items": [
        {"kind": "Secret", "data": {"user": T}, "metadata": {"name": "a"}},
        {"kind": "Service", "data": {"user": "Ym9i"}},
        {"kind": "ConfigMap", "data": {"region": "eu"}},
    ], "kind": "List"}}
    # a tool_call step's args, as the recorder stores one
    assert stored({"args": [{"kind": "Secret", "stringData": {"a": "b1"}}]}, "tool_call") == {
        "args": [{"kind": "Secret", "stringData": {"a": T}}]}


@pytest.mark.parametrize("data", [
    {"kind": "Service", "data": {"user": "Ym9i", "port": 8080}},
    {"kind": "ConfigMap", "data": {"region": "eu"}},
    {"kind": "Secret", "data": {}, "metadata": {"name": "empty"}},
    {"kind": "Secret", "data": "not a map"},
    {"kind": ["Secret"], "data": {"a": "b"}},
    {"kind": "Secret", "data": {"a": None, "b": "", "c": T}},  # nothing to replace
    {"note": {"kind": "Service", "data": {"mode": "Secret"}}},
])
def test_what_is_no_secrets_map_given_as_data_is_left(data: dict[str, Any]) -> None:
    assert stored(data) == data


def test_a_secret_as_data_under_a_name_rule_is_read_as_well(tmp_path: Path) -> None:
    """A ``*.NAME`` rule makes the walk read an object member by member (its mixed path): the same maps are taken."""
    from capture.support import write_policy

    path = write_policy(tmp_path, {"fields": [{"kind": "*", "path": "*.note", "mode": "keep"},
                                              {"kind": "*", "path": "*", "mode": "scrub"}]})
    policy = load_policy(str(path), env={})
    data = {"result": {"kind": "Secret", "data": {"user": "Ym9i"}, "note": "Ym9i"}}
    assert apply_policy(policy, "context", data).data == {
        "result": {"kind": "Secret", "data": {"user": T}, "note": "Ym9i"}}


@pytest.mark.parametrize(("text", "expected"), [
    ("kind: Secret\ndata: {password: cGFzcw==, user: YQ==}\n", f"kind: Secret\ndata: {{password: {T}, user: {T}}}\n"),
    ("apiVersion: v1\nkind: Secret\nstringData: {\"pw\": \"a b\", 'k': 'x',\n  tls.crt: LS0t }\n",
     f"apiVersion: v1\nkind: Secret\nstringData: {{\"pw\": {T}, 'k': {T},\n  tls.crt: {T} }}\n"),
    ("- kind: Secret\n  data: {a: b1}\n- kind: Pod\n  data: {a: b2}\n",
     f"- kind: Secret\n  data: {{a: {T}}}\n- kind: Pod\n  data: {{a: b2}}\n"),
    (f"kind: Secret\ndata: {{a: {T}, b: x1}}\n", f"kind: Secret\ndata: {{a: {T}, b: {T}}}\n"),
    # kubectl's order: data before kind
    ("apiVersion: v1\ndata: {a: b1, tls.crt: LS0t}\nkind: Secret\n", f"apiVersion: v1\ndata: {{a: {T}, tls.crt: {T}}}\nkind: Secret\n"),
    ("items:\n- data: {a: b1}\n  kind: Secret\n- data: {a: b2}\n  kind: ConfigMap\n",
     f"items:\n- data: {{a: {T}}}\n  kind: Secret\n- data: {{a: b2}}\n  kind: ConfigMap\n"),
])
def test_a_yaml_secrets_data_as_a_flow_mapping_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "kind: ConfigMap\ndata: {region: eu, zone: a}\n", "kind: Secret\ndata: {}\n",
    "kind: Service\nspec: {selector: {app: a}}\ndata: {a: b}\n",
])
def test_flow_mappings_of_no_secret_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 2. Terraform's sensitive values ---------------------------------------------------------------------------------

OUTPUT = {"db_password": {"sensitive": True, "type": "string", "value": "hunter2x"},
          "port": {"sensitive": True, "type": "number", "value": 5432},
          "conn": {"sensitive": True, "type": ["object", {"user": "string"}], "value": {"user": "bob", "pw": "x"}},
          "region": {"sensitive": False, "type": "string", "value": "eu-west-1"}}


def test_terraform_sensitive_values_given_as_data_are_replaced_whatever_their_type() -> None:
    assert stored({"result": OUTPUT}) == {"result": {
        # db_password's value was replaced under version 8 already: its name names a credential, replaced whole
        "db_password": T,
        "port": {"sensitive": True, "type": "number", "value": T},
        "conn": {"sensitive": True, "type": ["object", {"user": "string"}], "value": T},
        "region": {"sensitive": False, "type": "string", "value": "eu-west-1"}}}


STATE = """{
  "version": 4,
  "terraform_version": "1.6.0",
  "outputs": {
    "admin": {"value": {"user": "root", "pw": "x1"}, "type": ["object", {"pw": "string", "user": "string"}], "sensitive": true},
    "seed": {"value": 918273, "type": "number", "sensitive": true},
    "url": {"value": "https://db.example/x", "type": "string"}
  },
  "resources": [{"instances": [{"attributes": {"value": "ok"}, "sensitive_attributes": [[{"type": "get_attr", "value": "pw"}]]}]}]
}"""


def test_a_state_file_given_as_text_has_its_sensitive_outputs_replaced() -> None:
    assert scrubbed(STATE) == STATE.replace('{"user": "root", "pw": "x1"}', f'"{T}"').replace("918273", f'"{T}"')
    # terraform output -json, the flag before the value; and a document among a step's texts (joined, rescanned)
    text = '{"token_ttl": {"sensitive": true, "type": "string", "value": "s3cr3tV"}}'
    assert scrubbed(text) == text.replace("s3cr3tV", T)
    assert stored({"a": "b", "out": text}, "tool_call") == {"a": "b", "out": text.replace("s3cr3tV", T)}


@pytest.mark.parametrize(("text", "expected"), [
    ('$ terraform output -json\n{"db": {"sensitive": true, "type": "string", "value": "hunter2x"}, '
     '"r": {"sensitive": false, "type": "string", "value": "eu"}}\n',
     f'$ terraform output -json\n{{"db": {{"sensitive": true, "type": "string", "value": "{T}"}}, '
     '"r": {"sensitive": false, "type": "string", "value": "eu"}}\n'),
    ('state: {"a": {"value": {"u": "root", "pw": "x1"}, "type": ["object", {"pw": "string"}], "sensitive": true}, '
     '"seed": {"value": 918273, "type": "number", "sensitive": true}, "url": {"value": "h", "type": "string"}}',
     f'state: {{"a": {{"value": {T}, "type": ["object", {{"pw": "string"}}], "sensitive": true}}, '
     f'"seed": {{"value": {T}, "type": "number", "sensitive": true}}, "url": {{"value": "h", "type": "string"}}}}'),
    ('log {"sensitive": true, "value": ["a", {"b": "c"}], "n": 1} {"value": "keep"}',
     f'log {{"sensitive": true, "value": {T}, "n": 1}} {{"value": "keep"}}'),
    ('out: {"sensitive": true, "value": "x1", "type": "str', f'out: {{"sensitive": true, "value": "{T}", "type": "str'),  # cut
])
def test_terraform_sensitive_values_in_a_line_of_text_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("data", [
    {"region": {"sensitive": False, "type": "string", "value": "eu"}},
    {"x": {"sensitive": "true", "value": "eu"}},  # a string, not Terraform's flag
    {"x": {"sensitive": True, "values": ["eu"]}},
    {"x": {"sensitive": True, "value": None}},
])
def test_look_alikes_of_terraform_outputs_are_left(data: dict[str, Any]) -> None:
    assert stored(data) == data


@pytest.mark.parametrize("text", [
    '{"region": {"sensitive": false, "type": "string", "value": "eu"}}',
    '{"a": {"sensitive": true}, "b": {"value": "eu"}}',  # the flag and the value in two objects
    '{"sensitive_attributes": [], "value": "eu"}',
    'log {"a": {"sensitive": true}, "b": {"value": "eu"}} {"sensitive": false, "value": "eu"}',  # in a line
    'log {"sensitive": "true", "value": "eu"}',
])
def test_look_alikes_of_terraform_documents_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. .NET's applicationSettings -----------------------------------------------------------------------------------

SETTINGS = """<applicationSettings>
  <MyApp.Properties.Settings>
    <setting name="Region" serializeAs="String">
      <value>eu-west-1</value>
    </setting>
    <setting name="Password" serializeAs="String">
      <value>hunter2x</value>
    </setting>
    <setting name="StripeApiKey" serializeAs="String"><value>sk1abc</value></setting>
  </MyApp.Properties.Settings>
</applicationSettings>"""


def test_a_dotnet_settings_value_under_a_credential_name_is_scrubbed() -> None:
    assert scrubbed(SETTINGS) == SETTINGS.replace("hunter2x", T).replace("sk1abc", T)


@pytest.mark.parametrize("text", [
    '<setting name="Password" serializeAs="String"><value /></setting>',
    '<setting name="Password" serializeAs="String"><value></value></setting>',
    '<setting name="Password" serializeAs="String"><value>${PW}</value></setting>',  # a reference
    '<setting name="Region" serializeAs="String"><value>eu</value></setting>',
])
def test_dotnet_settings_naming_no_secret_or_holding_none_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 4. CSV and TSV --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("id,user,password\n1,bob,hunter2\n2,al,s3cr3t\n", f"id,user,password\n1,bob,{T}\n2,al,{T}\n"),
    ("user\tapi_key\r\nbob\tabc123\r\nal\t\r\n", f"user\tapi_key\r\nbob\t{T}\r\nal\t\r\n"),  # TSV; an empty cell
    ('name;"Client Secret";region\na;"x;y""z";eu\nb;q;us\nthe end\n3;4;5\n',  # a quoted cell; the table ends
     f'name;"Client Secret";region\na;"{T}";eu\nb;{T};us\nthe end\n3;4;5\n'),
    ('id,password,note\n1,"multi\nline",ok\n', f'id,password,note\n1,"{T}",ok\n'),
    ("id,token\n1,abc123\n", f"id,token\n1,{T}\n"),
    ("id,password\n1,pw1\n2\n3,pw3\n", f"id,password\n1,{T}\n2\n3,pw3\n"),  # the table ends at a line of one cell
])
def test_a_csv_tables_credential_columns_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


def test_a_csv_table_among_a_steps_texts_is_read_from_its_own_first_line() -> None:
    data = {"a": "hello", "out": "id,password\n1,pw1\n", "b": ["x", "user;token\nbob;t0k\n"]}
    assert stored(data, "tool_call") == {"a": "hello", "out": f"id,password\n1,{T}\n", "b": ["x", f"user;token\nbob;{T}\n"]}


@pytest.mark.parametrize("text", [
    "token,logprob\nHello,-0.1\n world,-2.3\n",  # a model's output tokens (ordinary.py)
    "key,value\nRegion,eu\n",  # the bare key: a table of names
    "Use the token, then\nrun it, ok\n",  # prose: a cell that is no name
    "id,user\n1,bob\n",  # no credential column
    "id,password\n1,${DB_PW}\n",  # a reference
    "id,password\n",  # a header alone
    # "$ cat users.csv\nid,password\n1,pw1\n", a header below a text's first line, is read under rules version 10
    # (test_leak_edges18.py)
])
def test_tables_with_no_credential_column_to_take_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 5. URL-encoded JSON and pairs encoded twice ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("POST /login?data=%7B%22password%22%3A%22hunter2%22%7D", f"POST /login?data=%7B%22password%22%3A%22{T}%22%7D"),
    ("body=%7B%22user%22%3A%22bob%22%2C%22api_key%22%3A%22abc123%22%7D&x=1",
     f"body=%7B%22user%22%3A%22bob%22%2C%22api_key%22%3A%22{T}%22%7D&x=1"),
    ("q=%7B%22password%22%3A+%22a%5C%22b%22%2C%22n%22%3A1%7D", f"q=%7B%22password%22%3A+%22{T}%22%2C%22n%22%3A1%7D"),
    ("q=%7B%22pin%22%3A918273%7D", f"q=%7B%22pin%22%3A{T}%7D"),
    ("next=%2Flogin%3Fpassword%253Dhunter2%2526user%253Dbob", f"next=%2Flogin%3Fpassword%253D{T}%2526user%253Dbob"),
    ("body=password%253Dhunter2", f"body=password%253D{T}"),
    # taken under version 8 already: a pair encoded once
    ("next=%2Fcb%3Fpassword%3Dhunter2%26user%3Dbob", f"next=%2Fcb%3Fpassword%3D{T}%26user%3Dbob"),
])
def test_url_encoded_json_members_and_twice_encoded_pairs_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "q=%7B%22user%22%3A%22bob%22%7D", "q=%7B%22password%22%3A%22%22%7D", "q=%7B%22password%22%3Atrue%7D",
    "q=%7B%22sort_key%22%3A%22name%22%7D", "next=%2Fcb%3Fuser%253Dbob",
])
def test_url_encoded_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_run_of_encoded_pairs_is_read_once_within_the_budget() -> None:
    """``password%3D`` repeated: each pair's value was read again to the text's end from every ``%3D`` inside the
    one before it (quadratic: 256 KiB took about 100 s under rules version 8, past the policy's 1 s budget, and the
    text was refused). The value found first is taken whole, to where no pair's separator ends it."""
    text = "password%3D" * (256 * 1024 // 11)
    assert scrubbed(text) == f"password%3D{T}"
    assert scrubbed("password%253D" * 2000) == f"password%253D{T}"


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 9
    assert policy.digest_under(9) == V9_DIGEST != policy.digest_under(8)


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["kubePw1", "tfPw2", "netPw3", "csvPw4", "urlPw5"]
    stored_text = recorded_in_store(tmp_path / "home", {
        "result": {"kind": "Secret", "data": {"password": "x", "user": secrets[0]}},
        "outputs": {"o": {"sensitive": True, "value": secrets[1]}},
        "config": f'<setting name="ApiToken" serializeAs="String"><value>{secrets[2]}</value></setting>',
        "csv": f"id,secret\n1,{secrets[3]}\n",
        "url": f"https://h/cb?d=%7B%22token%22%3A%22{secrets[4]}%22%7D",
    }, "leak-edges17")
    assert T in stored_text
    for secret in secrets:
        assert secret not in stored_text, secret
