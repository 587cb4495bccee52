"""Credentials the default policy stored as written under rules version 7, scrubbed under version 8:

1. a token as a URL's whole user part, git's ``https://TOKEN@host/o/r.git`` (no password after it);
2. an XML element's attributes read as a name/value object (.NET's ``<add key="Password" value="x"/>``, Spring's
   ``<property name="password" value="x"/>``, Java's ``<entry key="api_key">x</entry>``);
3. Laravel's ``APP_KEY`` (and Datadog's ``DD_APP_KEY``);
4. a Kubernetes Secret's ``data`` / ``stringData`` values, whatever their keys, in YAML and in JSON;
5. Redis's ``requirepass`` / ``masterauth`` lines, htpasswd lines (``$apr1$``, ``{SHA}``, bcrypt), a
   PuTTY key file's private lines and MAC;
6. a label of words inside or opening a line (``API Key: x``, ``Access Token: x``, ``Client Secret: x``).

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside the look-alikes that are
left. Already taken under version 7 (pinned here so they stay): ``https://oauth2:TOKEN@``, ``x-access-token:``,
a ``ghp_`` user, a web.config connection string's ``Password=``, ``SECRET_KEY_BASE``, ``DJANGO_SECRET_KEY``,
``JWT_SECRET``, ``NEXTAUTH_SECRET``, ``redis-cli -a``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import load_policy
from bitexact.capture.policy import POLICY_VERSION

V8_DIGEST = "ce950d828b2a70ef194848b04595e8c6b8b0cdf967bdd288e814559d007a0827"
"""The shipped default policy's digest under rules version 8 (docs/capture.md, "Digest")."""
T = "[CREDENTIAL]"
HEX40 = "0123456789abcdef0123456789abcdef01234567"
OPAQUE = "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI"


# -- 1. a token as a URL's user --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    (f"git clone https://{HEX40}@github.com/o/r.git", f"git clone https://{T}@github.com/o/r.git"),
    (f"https://{OPAQUE}@dev.azure.com/org/p/_git/r", f"https://{T}@dev.azure.com/org/p/_git/r"),
    (f'{{"url": "https://{HEX40}@github.com/o/r"}}', f'{{"url": "https://{T}@github.com/o/r"}}'),
    # taken under version 7 already: a user with a password, and a token of a known shape
    (f"https://oauth2:{OPAQUE}@gitlab.com/o/r.git", f"https://{T}@gitlab.com/o/r.git"),
    (f"https://x-access-token:{OPAQUE}@github.com/o/r.git", f"https://{T}@github.com/o/r.git"),
    ("https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git", f"https://{T}@github.com/o/r.git"),
])
def test_a_token_as_a_urls_user_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "ssh://git@github.com/o/r.git", "https://bob@example.com/x", "mailto:john.smith@example.com",
    "https://john.smith.example.person@host/x",  # a dot: an e-mail address's user
    "https://deploy-bot-2024-production@host/x",  # a name with a number: letters and digits change twice
    "https://abcdefghijklmnopqrstuvwxyz@host/x",  # letters only
    "https://short1a2b3c@host/x",  # under 20 characters
])
def test_an_ordinary_url_user_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 2. XML attributes as a name/value object ------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ('<add key="Password" value="hunter2x"/>', f'<add key="Password" value="{T}"/>'),
    ('<add value="hunter2x" key="Password" />', f'<add value="{T}" key="Password" />'),
    ('<property name="password" value="hunter2x"/>', f'<property name="password" value="{T}"/>'),
    ("<property name='db.password' value='pw1'/>", f"<property name='db.password' value='{T}'/>"),
    ('<add key="ConnectionStrings:Default:Password" value="x1"/>',
     f'<add key="ConnectionStrings:Default:Password" value="{T}"/>'),
    ('<entry key="api_key">abc123secret</entry>', f'<entry key="api_key">{T}</entry>'),
    ('<appSettings>\n  <add key="StripeSecretKey" value="sk1"/>\n  <add key="Region" value="eu"/>\n</appSettings>',
     # key="Region" names no secret, and a bare key's word is ordinary evidence ({"key": "Region"} in data)
     f'<appSettings>\n  <add key="StripeSecretKey" value="{T}"/>\n  <add key="Region" value="eu"/>\n</appSettings>'),
    # taken under version 7 already
    ('<add name="Db" connectionString="Server=a;User Id=b;Password=hunter2x"/>',
     f'<add name="Db" connectionString="Server=a;User Id=b;Password={T}"/>'),
])
def test_an_xml_elements_name_value_attributes_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    '<add name="Region" value="eu-west-1"/>',  # a name naming no secret
    '<property name="password" value="${db.password}"/>',  # a reference: where the secret is
    '<add key="Password" value=""/>',  # nothing to replace
    '<entry key="api_key"/>',
])
def test_xml_attributes_naming_no_secret_or_holding_none_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. credential names ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["APP_KEY", "DD_APP_KEY", "SECRET_KEY_BASE", "DJANGO_SECRET_KEY", "JWT_SECRET",
                                  "NEXTAUTH_SECRET", "requirepass", "masterauth"])
def test_framework_secret_names_are_credential_names(name: str) -> None:
    assert scrubbed(f"{name}=base64:abcdefghijklmnop0123456789=") == f"{name}={T}"


# -- 4. Kubernetes Secrets -------------------------------------------------------------------------------------------

SECRET_YAML = """apiVersion: v1
kind: Secret
metadata:
  name: db
type: Opaque
data:
  username: YWRtaW4=
  tls.crt: LS0tLS1CRUdJTg==
stringData:
  .dockerconfigjson: '{"auths":{}}'
  config.yaml: |
    user: bob
    pass: x
"""


def test_every_value_of_a_yaml_secrets_data_maps_is_scrubbed() -> None:
    assert scrubbed(SECRET_YAML) == SECRET_YAML.replace("YWRtaW4=", T).replace("LS0tLS1CRUdJTg==", T).replace(
        """'{"auths":{}}'""", T).replace("user: bob\n    pass: x", T)


def test_a_secret_among_other_manifests_and_in_a_list_only() -> None:
    text = ("kind: ConfigMap\ndata:\n  region: eu\n---\nkind: Secret\ndata:\n  user: Ym9i\n---\n"
            "kind: ConfigMap\ndata:\n  zone: a\n")
    assert scrubbed(text) == text.replace("Ym9i", T)
    listed = ("apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    user: Ym9i\n  kind: Secret\n  metadata:\n"
              "    name: a\n- apiVersion: v1\n  data:\n    zone: eu\n  kind: ConfigMap\nkind: List\n")
    assert scrubbed(listed) == listed.replace("Ym9i", T)


@pytest.mark.parametrize(("text", "expected"), [
    ('{"apiVersion":"v1","kind":"Secret","data":{"username":"YWRtaW4=","tls.crt":"LS0t"}}',
     f'{{"apiVersion":"v1","kind":"Secret","data":{{"username":"{T}","tls.crt":"{T}"}}}}'),
    ('{"data": {"user": "Ym9i"}, "kind": "Secret", "metadata": {"name": "a"}}',  # kubectl: kind after data
     f'{{"data": {{"user": "{T}"}}, "kind": "Secret", "metadata": {{"name": "a"}}}}'),
    ('{"kind":"List","items":[{"kind":"Secret","stringData":{"a":"b1"}},{"kind":"ConfigMap","data":{"a":"b2"}}]}',
     f'{{"kind":"List","items":[{{"kind":"Secret","stringData":{{"a":"{T}"}}}},{{"kind":"ConfigMap","data":{{"a":"b2"}}}}]}}'),
    ('log: {"kind":"Secret","data":{"a":"b1"}} {"kind":"Pod","data":{"a":"b2"}}',  # in a line of text
     f'log: {{"kind":"Secret","data":{{"a":"{T}"}}}} {{"kind":"Pod","data":{{"a":"b2"}}}}'),
])
def test_every_value_of_a_json_secrets_data_maps_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "kind: ConfigMap\ndata:\n  region: eu\n", '{"kind":"ConfigMap","data":{"region":"eu"}}',
    "kind: Secret\nmetadata:\n  name: a\n",  # no data
    "the Secret kind holds data: see the docs",
])
def test_what_is_no_secrets_data_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 5. Redis, htpasswd, PuTTY ---------------------------------------------------------------------------------------

PPK = ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\n"
       "AAAAC3NzaC1lZDI1NTE5AAAAIG\nAAAA\nPrivate-Lines: 2\nAAAAIBfQ3m8abcdefghijklmnop\nAAAAxyz\n"
       "Private-MAC: 0123456789abcdef0123456789abcdef\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("requirepass hunter2x\nmasterauth hunter3x\n", f"requirepass {T}\nmasterauth {T}\n"),
    ('redis-cli CONFIG SET requirepass "pw 1"', f'redis-cli CONFIG SET requirepass "{T}"'),
    ("redis-server --requirepass hunter2x", f"redis-server --requirepass {T}"),
    ("requirepass: hunter2x", f"requirepass: {T}"),
    ("redis-cli -a hunter2x ping", f"redis-cli -a {T} ping"),  # taken under version 7 already
    ("bob:$apr1$abcdefgh$ABCDEFGHIJKLMNOPQRSTUV\n", f"bob:{T}\n"),
    ("bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", f"bob:{T}"),
    ("alice:$2y$05$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234\nbob:$apr1$abcdefgh$ABCDEFGHIJKLMNOPQRSTUV",
     f"alice:{T}\nbob:{T}"),
    ('{"out": "a\\nbob:$apr1$abcdefgh$ABCDEFGHIJKLMNOPQRSTUV\\n"}', f'{{"out": "a\\nbob:{T}\\n"}}'),
    (PPK, PPK.replace("AAAAIBfQ3m8abcdefghijklmnop\nAAAAxyz", T).replace("0123456789abcdef0123456789abcdef", T)),
])
def test_redis_htpasswd_and_putty_secrets_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "# requirepass foobared", "set requirepass in redis.conf", "AUTH failed", "the AUTH command takes a password",
    "AUTH $REDIS_PASSWORD", "see bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",  # not a line's start
    "note: bob:$apr1$abcdefgh$ABCDEFGHIJKLMNOPQRSTUV\n",  # not opening its line
    "Public-Lines: 2\nAAAA\nBBBB\n",  # a key file's public lines
    # "127.0.0.1:6379> AUTH default s3cretR1", AUTH at redis-cli's prompt, is read under rules version 10, found from
    # the prompt's "> " (test_leak_edges18.py)
])
def test_look_alikes_of_redis_htpasswd_and_putty_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 6. a label of words ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("API Key: abcdef123456", f"API Key: {T}"),
    ("Access Token: abcdef123456", f"Access Token: {T}"),
    ("Client Secret: abcdef123456", f"Client Secret: {T}"),
    ("the log said API Key: abc123xyz ok", f"the log said API Key: {T} ok"),
    ("AWS Secret Access Key : wJalrXUtnFEMI", f"AWS Secret Access Key : {T}"),
    ('{"msg": "API Key: abc123"}', f'{{"msg": "API Key: {T}"}}'),
])
def test_a_label_of_words_takes_the_word_after_it(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "Sort Key: name", "Primary Key: id", "The EOS Token: </s>", "Next Token: abc123",  # no secret's name
    "API Key: invalid", 'print("API Key: " + key)',  # no password word, or code
    "retry with token: 5 left", "my_api Key: x1",  # prose, and a name the other rules read
])
def test_labels_of_words_that_name_no_secret_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 8
    assert policy.digest_under(8) == V8_DIGEST != policy.digest_under(7)


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["xmlPw1", "redisPw2", "labelPw3", "kubeUser4"]
    stored = recorded_in_store(tmp_path / "home", {
        "result": {"stdout": f"kind: Secret\ndata:\n  username: {secrets[3]}\n",
                   "config": f'<add key="Password" value="{secrets[0]}"/>\nrequirepass {secrets[1]}\n'},
        "args": [f"git clone https://{HEX40}@github.com/o/r.git", f"API Key: {secrets[2]}"],
    }, "leak-edges16")
    assert T in stored
    for secret in [*secrets, HEX40]:
        assert secret not in stored, secret
    assert "github.com/o/r.git" in stored  # the URL's host and path are kept
