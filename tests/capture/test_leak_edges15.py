"""Credentials the default policy stored as written under rules version 6, scrubbed under version 7:

1. a PostgreSQL password file's line, ``HOST:PORT:DATABASE:USER:PASSWORD`` (a whole line of five fields, its port a
   number or ``*``), and a word ``echo`` writes into a ``.pgpass`` file;
2. token shapes with no name beside them: Google OAuth access tokens (``ya29.``), SendGrid API keys (``SG.``), npm
   access tokens (``npm_``);
3. a password's label inside a line (``login failed for bob. Password: hunter2``): one word after it;
4. Windows's ``net user NAME PASSWORD`` where a shell reads a command;
5. a name/value object or a ``[name, value]`` pair written in text as a Python repr writes one (``{'name':
   'password', 'value': 'x'}``, ``[('password', 'x')]``, ``Field(name='api_key', value='x')``).

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside the look-alikes that are
left: times, IPv6 and MAC addresses, log prefixes, type annotations, prose, a variable in code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from capture.support import recorded_in_store, scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.policy import POLICY_VERSION
from bitexact.sessions.unify.redact import Redactor

V7_DIGEST = "f013523f280271eb1ed3c32b91be9936161a46a4f8593bb5b925e34256096684"
"""The shipped default policy's digest under rules version 7 (docs/capture.md, "Digest")."""
T = "[CREDENTIAL]"


# -- 1. .pgpass lines ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("db.example.com:5432:app:bob:S3cretPg1", f"db.example.com:5432:app:bob:{T}"),
    ("*:*:*:postgres:S3cretPg2", f"*:*:*:postgres:{T}"),
    ("localhost:*:mydb:bob:pa\\:ss\\\\w0rd", f"localhost:*:mydb:bob:{T}"),  # \: and \\ escaped in the password
    ("fe80\\:\\:1:5432:app:bob:S3cretPg3", f"fe80\\:\\:1:5432:app:bob:{T}"),  # an escaped IPv6 host
    ("# host:port:db:user:password\nlocalhost:5432:app:app_user:S3cretPg4\n*:6432:*:report:S3cretPg5\n",
     f"# host:port:db:user:password\nlocalhost:5432:app:app_user:{T}\n*:6432:*:report:{T}\n"),
    ("a:5432:b:c:S3cretPg6\r\nnext", f"a:5432:b:c:{T}\r\nnext"),
    ("pgpass: |\n    db:5432:app:bob:S3cretPg7\n", f"pgpass: |\n    db:5432:app:bob:{T}\n"),  # indented in YAML
    ('{"stdout": "db:5432:app:bob:S3cretPg8\\nother:5432:x:y:S3cretPg9"}',
     f'{{"stdout": "db:5432:app:bob:{T}\\nother:5432:x:y:{T}"}}'),  # lines in a JSON string, \n written
    ("cat ~/.pgpass\ndb:5432:app:bob:S3cretPg10  ", f"cat ~/.pgpass\ndb:5432:app:bob:{T}  "),
    ("echo 'db:5432:app:bob:S3cretPg11' >> ~/.pgpass", f"echo 'db:5432:app:bob:{T}' >> ~/.pgpass"),
    ('echo "db:5432:app:bob:S3cretPg12" > $HOME/.pgpass && chmod 600 $HOME/.pgpass',
     f'echo "db:5432:app:bob:{T}" > $HOME/.pgpass && chmod 600 $HOME/.pgpass'),
])
def test_a_pgpass_lines_password_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "12:30:45", "2025-05-03T12:00:00Z", "at 12:30:45:123 the job ran",
    "fe80::1:2:3", "2001:db8:0:0:0:0:0:1", "::1", "00:1a:2b:3c:4d", "00:1a:2b:3c:4d:5e",  # addresses
    "a:b:c:d:e", "ERROR:root:db:conn:refused",  # a log line's prefix: its second field no number
    "web01:1234:main:INFO:started server",  # a blank in the last field: a log line, no password
    "src/app.py:12:5: error: Name 'x' is not defined",  # a compiler's file:line:column
    "a:5432:b:c:d:e",  # six fields
    "see db:5432:app:bob:pw for the format",  # inside a line, not the line
    "db:5432::bob:pw", "db::app:bob:pw", "db:5432:app:bob:",  # an empty field
    "echo 'db:5432:app:bob:pw1' > notes.txt",  # echoed into another file
])
def test_what_only_looks_like_a_pgpass_line_is_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 2. token shapes -------------------------------------------------------------------------------------------------

GOOGLE_OAUTH = "ya29.a0AfH6SMBx" + "Kq3_zT-9wE" * 4
GOOGLE_SERVICE = "ya29.c.b0Aaekm1K" + "Xq9-Zr_7tY" * 4
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
NPM = "npm_" + "a1B2c3D4e5F6" * 3


@pytest.mark.parametrize("token", [GOOGLE_OAUTH, GOOGLE_SERVICE, SENDGRID, NPM])
def test_the_new_token_shapes_are_scrubbed_whole_wherever_they_stand(token: str) -> None:
    assert scrubbed(f"the agent used {token} and stopped") == f"the agent used {T} and stopped"
    assert scrubbed(f"Authorization: Token {token}.") == f"Authorization: {T}"  # a header's value, as before
    assert scrubbed(f"line\\n{token}") == f"line\\n{T}"
    assert scrubbed(f"({token})") == f"({T})"
    stored = apply_policy(load_policy(env={}), "tool_call", {"result": {"stdout": f"x\n{token}\n"}}).data
    assert stored == {"result": {"stdout": f"x\n{T}\n"}}
    assert Redactor().text(f"x {token} y") == "x *** y"  # the session artifact's redaction: one table


def test_a_google_token_ends_before_a_sentences_full_stop() -> None:
    assert scrubbed(f"token {GOOGLE_OAUTH}. Next") == f"token {T}. Next"


@pytest.mark.parametrize("text", [
    "npm_config_registry=https://registry.npmjs.org", "npm_" + "a" * 35, "npm_" + "a" * 37,  # not 36 exactly
    "xnpm_" + "a1B2c3D4e5F6" * 3, "ya29.short", "ya29." + "." * 40, "my-ya29." + "a" * 40,
    "SG." + "a" * 21 + "." + "b" * 43, "SG." + "a" * 22 + "." + "b" * 44, "SG.Bucket.name",
])
def test_look_alikes_of_the_new_shapes_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. a password's label inside a line -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("login failed for bob. Password: hunter2", f"login failed for bob. Password: {T}"),
    ("user=bob Password: hunter2", f"user=bob Password: {T}"),
    ("Username: bob Password: hunter2 Host: db", f"Username: bob Password: {T} Host: db"),
    ("connect as bob password:hunter2 now", f"connect as bob password:{T} now"),
    ("user bob PASSWORD : hunter2", f"user bob PASSWORD : {T}"),
    ("- **Password:** hunter2", f"- **Password:** {T}"),
    ("your Password: `hunter2`", f"your Password: `{T}`"),
    ("{user: bob, password: hunter2}", f"{{user: bob, password: {T}}}"),  # a YAML flow mapping's bare value
    ("key file saved; Passphrase: c0rrect-horse", f"key file saved; Passphrase: {T}"),
    ("env DB_PASS: s3cret1 MYSQL_PWD: s3cret2", f"env DB_PASS: {T} MYSQL_PWD: {T}"),
    ("created user; temporary passwd: Xy9!ab", f"created user; temporary passwd: {T}"),
    # symbols are part of the word: it used to stop at the first of * = & ; | ( [ and leave the rest
    ("login failed. Password: Xy*9zQ!k", f"login failed. Password: {T}"),
    ("login failed. Password: ab=cdEF12", f"login failed. Password: {T}"),
    ("login failed. Password: Tr0ub4dor&3xyz", f"login failed. Password: {T}"),
    ("login failed. Password: s3cr(3t)9", f"login failed. Password: {T}"),
    ("login failed. Password: p[4]ssw0rd", f"login failed. Password: {T}"),
    ("login failed. Password: a|b;c,d", f"login failed. Password: {T}"),
    ("login failed. Password: 'hunter2' was sent", f"login failed. Password: '{T}' was sent"),
    ("set to Password: hunter2. Done", f"set to Password: {T}. Done"),  # the sentence's full stop stays
    ("(user bob, Password: hunter2)", f"(user bob, Password: {T})"),  # a bracket opened before the label
    ('{"msg": "failed. Password: hunter2\\nnext", "n": 1}', f'{{"msg": "failed. Password: {T}\\nnext", "n": 1}}'),
    ("<td>Password: hunter2</td>", f"<td>Password: {T}</td>"),
    ("x Password: " + "A" * 2000 + " y", f"x Password: {T} y"),  # a long word whole
])
def test_a_password_label_inside_a_line_has_its_word_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "def login(user: str, password: str) -> None:",  # a type annotation
    "def f(self, password: Optional[str] = None):", "def f(password: str | None = None):",
    "class Login(BaseModel): password: SecretStr", "interface Login { user: string; password: string; }",
    "fun login(password: String)", "let password: Option<String> = None;", "const s = { password: z.string() }",
    'print("Password: " + pw)', "log(f'Password: {pw}')",  # code writing the label
    "login failed. Password: incorrect, try again", "login failed: Password: required", "the Password: (hidden)",
    "export PW; echo Password: $PW", "set it as Password: ${DB_PASSWORD}",  # a variable
    "retry with token: 5 left", "status auth: ok", "the Signature: valid", "x bypass: true", "x first_pass: done",
    "the password: [CREDENTIAL] was kept",
    "log('Password: %s' % pw)", "log('Password: %(pw)s' % d)", 'puts "Password: #{pw}"',  # format placeholders
    "usage: login --user U Password: <password>", "the Password: [hidden] field", "a Password: {pw} template",
])
def test_what_follows_a_label_that_is_no_password_is_left(text: str) -> None:
    assert scrubbed(text) == text


def test_at_a_lines_start_the_header_rule_still_reads_the_rest_of_the_line() -> None:
    """Unchanged: a label opening its line is a header or a config line, its value the rest of the line (a type
    annotation there, ``    password: str``, is taken too, as under rules version 6)."""
    assert scrubbed("Password: hunter2 was rejected") == f"Password: {T}"
    assert scrubbed("note\nPassword: two words") == f"note\nPassword: {T}"
    assert scrubbed("    password: str") == f"    password: {T}"


# -- 4. net user -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("net user bob S3cret!", f"net user bob {T}"),
    ("net user svc_backup S3cret! /add", f"net user svc_backup {T} /add"),
    ("net user bob S3cret! /add /domain", f"net user bob {T} /add /domain"),
    ("NET USER bob S3cret! /ADD", f"NET USER bob {T} /ADD"),
    ('net user "build agent" "P@ss w0rd" /add', f'net user "build agent" "{T}" /add'),
    ("C:\\> net user administrator P@ssw0rd", f"C:\\> net user administrator {T}"),
    ("PS C:\\Users\\bob> net user svc S3cret /add", f"PS C:\\Users\\bob> net user svc {T} /add"),
    ("cd C:\\ && net user bob S3cret /add", f"cd C:\\ && net user bob {T} /add"),
    ("whoami; net user bob S3cret", f"whoami; net user bob {T}"),
    ("net user /domain bob S3cret", f"net user /domain bob {T}"),
])
def test_net_users_password_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "net user", "net user bob", "net user bob *", "net user bob * /add", "net user bob /delete",
    "net user bob /active:no", "NET USER bob /domain",
    "net user bob shows his groups",  # a third word that is no option: prose
    "use net user bob pw to add him", "echo net user bob pw",  # not where a shell reads a command
    "the dotnet user bob pw",  "Net User bob pw",  # another word; a spelling agents do not write
])
def test_net_user_with_no_password_to_take_is_left(text: str) -> None:
    assert scrubbed(text) == text


def test_net_user_as_an_argv_list_is_read_by_the_same_rule() -> None:
    policy = load_policy(env={})
    data = apply_policy(policy, "tool_call", {"args": ["net", "user", "bob", "ArgvPw1", "/add"]}).data
    assert data == {"args": ["net", "user", "bob", T, "/add"]}
    kept = {"args": ["net", "user", "bob", "*", "/add"]}
    assert apply_policy(policy, "tool_call", kept).data == kept


# -- 5. name/value objects and [name, value] pairs in text ----------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("{'name': 'password', 'value': 'x1secret'}", f"{{'name': 'password', 'value': '{T}'}}"),
    ("[{'name': 'DB_PASSWORD', 'type': 'str', 'value': 'x2secret'}]",
     f"[{{'name': 'DB_PASSWORD', 'type': 'str', 'value': '{T}'}}]"),
    ("{'value': 'x3secret', 'name': 'GITHUB_TOKEN'}", f"{{'value': '{T}', 'name': 'GITHUB_TOKEN'}}"),
    ("{'Name': '/prod/db/password', 'Value': 'x4secret'}", f"{{'Name': '/prod/db/password', 'Value': '{T}'}}"),
    ("{'key': 'DEPLOY_TOKEN', 'value': 'x5secret'}", f"{{'key': 'DEPLOY_TOKEN', 'value': '{T}'}}"),
    ('log: {"name": "api_key", "value": "x6secret"} sent', f'log: {{"name": "api_key", "value": "{T}"}} sent'),
    ("{'name': 'PIN_PASSWORD', 'value': 80417}", f"{{'name': 'PIN_PASSWORD', 'value': {T}}}"),
    ("[('password', 'x7secret')]", f"[('password', '{T}')]"),
    ("[('Accept', 'json'), ('Authorization', 'Basic x8secret')]", f"[('Accept', 'json'), ('Authorization', '{T}')]"),
    ('headers=[["Authorization", "x9secret"]]', f'headers=[["Authorization", "{T}"]]'),
    ("dict_items([('pin', 8042)])", f"dict_items([('pin', {T})])"),
    ("Header(name='Authorization', value='Bearer x10secret')", f"Header(name='Authorization', value='{T}')"),
    ("Field(name='api_key', value='x11secret')", f"Field(name='api_key', value='{T}')"),
    ("Param(value='x12secret', name='token')", f"Param(value='{T}', name='token')"),
    ("Var(name='DB_PASSWORD', masked=True, value='x13secret')", f"Var(name='DB_PASSWORD', masked=True, value='{T}')"),
])
def test_a_name_value_object_or_pair_written_in_text_has_its_value_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "{'name': 'REGION', 'value': 'eu-west-1'}", "Field(name='region', value='eu')", "[('Accept', 'json')]",
    "{'name': 'DB_PASSWORD', 'description': 'the password'}",  # no value member
    "{'name': 'DB_PASSWORD', 'value': None}", "{'name': 'DB_PASSWORD', 'value': ''}", "('password', None)",
    "('password', 'a', 'b')",  # three items: no pair
    "f('password', pw)", "Field(name='api_key', value=api_key)",  # a variable in code
])
def test_text_with_no_credential_name_value_pair_is_left(text: str) -> None:
    assert scrubbed(text) == text


def test_a_key_member_naming_no_credential_is_still_the_table_word_it_is() -> None:
    opaque = "q8Zr2LkWm9Xv4PtNb7Yc1HsJd6Fg3Ae0"
    assert scrubbed(f"{{'key': '{opaque}', 'value': 3}}") == f"{{'key': '{T}', 'value': 3}}"
    # Audit 16: a bare key holding a dotted id (an issue's key) is no credential (test_false_positives16.py).
    assert scrubbed("{'key': 'PAY-4521', 'value': 3}") == "{'key': 'PAY-4521', 'value': 3}"


# -- the rules version and the store ---------------------------------------------------------------------------------


def test_the_rules_version_and_the_default_digest_name_these_rules() -> None:
    """A step scrubbed under these rules must not claim the digest of rules that let these values through."""
    policy = load_policy(env={})
    assert POLICY_VERSION >= 7
    assert policy.digest_under(7) == V7_DIGEST != policy.digest_under(6)


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = ["pgpassPw1", "labelPw2", "netUserPw3", "reprPw4", "pairPw5", "fieldPw6"]
    stored = recorded_in_store(tmp_path / "home", {
        "result": {"stdout": f"db:5432:app:bob:{secrets[0]}\n", "log": f"login failed. Password: {secrets[1]}"},
        "args": [f"net user bob {secrets[2]} /add", f"{{'name': 'password', 'value': '{secrets[3]}'}}",
                 f"[('password', '{secrets[4]}')]", f"Field(name='api_key', value='{secrets[5]}')"],
        "tokens": [GOOGLE_OAUTH, SENDGRID, NPM],
    }, "leak-edges15")
    assert T in stored
    for secret in [*secrets, GOOGLE_OAUTH, SENDGRID, NPM]:
        assert secret not in stored, secret
    assert json.dumps("db:5432:app:bob:")[1:-1] in stored  # the line's other fields are kept
