"""Credentials the default policy found nowhere: tokens known by their own form (a GitHub or OpenAI key, a
JSON Web Token, with no name beside it), PEM private keys, compound names (DB_PASSWORD=, "client_secret":,
X-Auth-Token:), a flag and its value as two words (--password x), curl's -u user:password and -v header
lines, Ruby's and PHP's =>, unquoted JavaScript keys, XML elements (<wsse:Password>) and HTTP's cookie
headers. Each reached the store as written; the session artifact's redaction already masked the token
shapes, so recording a session kept what publishing it removed.

Each test drives ``bitexact.capture.apply_policy`` or ``scrub_text`` under the shipped default, and
one records through a real SDK run and reads every store row back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from capture.support import recorded_in_store

from bitexact.capture import apply_policy, load_policy
from bitexact.capture.apply import scrub_text
from bitexact.capture.detectors import is_credential_name
from bitexact.credential_shapes import TOKEN_SHAPES
from bitexact.sessions.unify.redact import Redactor

TOKENS = {
    "github-classic": "ghp_" + "A1b2C3d4E5" * 4,
    "github-oauth": "gho_" + "Z9y8X7w6V5" * 4,
    "github-fine-grained": "github_pat_11ABCDEFG0_" + "x1Y2z3" * 8,
    "gitlab": "glpat-" + "Ab3_De6-Gh9" * 2,
    "anthropic": "sk-ant-api03-" + "q1W2e3R4t5" * 5,
    "openai-project": "sk-proj-" + "Zx9Cv8Bn7M" * 4,
    "openai": "sk-" + "a1B2c3D4e5" * 3,
    "stripe-secret": "sk_live_" + "51HqLyjWDarj" * 2,
    "stripe-restricted": "rk_test_" + "51HqLyjWDarj" * 2,
    "aws-key-id": "AKIAIOSFODNN7EXAMPLE",
    "aws-session-key-id": "ASIA" + "Q3EXAMPLEKEY1234",
    "slack": "xoxb-123456789012-" + "abcdefghij",
    "google": "AIza" + "SyA-abcdefghijklmnopqrstuvwxyz01234",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbm4iLCJpYXQiOjE3MDB9.c2lnbmF0dXJlLWJ5dGVz",
    "jwt-unsigned": "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbm4ifQ.",
    "hugging-face": "hf_" + "AbCdEfGhIj" * 3 + "kLmN",
    "vault": "hvs." + "CAESIJx7q9Vd" * 3,
    "google-oauth": "ya29.a0AfH6SMBx" + "Kq3_zT-9wE" * 4,
    "npm": "npm_" + "a1B2c3D4e5F6" * 3,
    "sendgrid": "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
}


def _text(text: str) -> str:
    return scrub_text(load_policy(env={}), text)[0]


def _stored(data: dict[str, Any]) -> str:
    return json.dumps(apply_policy(load_policy(env={}), "tool_call", data).data, ensure_ascii=False)


# -- tokens known by their form -----------------------------------------------------------------------


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_a_token_of_every_shape_is_scrubbed_whole_wherever_it_stands(token: str) -> None:
    assert _text(f"the agent ran with {token} and stopped") == "the agent ran with [CREDENTIAL] and stopped"
    assert _text(f"line one\\n{token}") == "line one\\n[CREDENTIAL]"  # after a written escape
    assert _text(f"({token})") == "([CREDENTIAL])"
    stored = _stored({"tool": "env", "result": {"stdout": f"HOME=/root\n{token}\n", "note": token}})
    assert token not in stored and stored.count("[CREDENTIAL]") == 2


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_the_session_artifact_redaction_masks_the_same_shapes(token: str) -> None:
    """One table: what the capture policy scrubs, a published session masks (its prefilter included)."""
    redactor = Redactor()
    assert redactor.may_match(orjson.dumps({"text": f"x {token} y"}))
    assert redactor.text(f"x {token} y") == "x *** y"


def test_a_published_session_masks_a_private_key_but_never_across_another_begin_line() -> None:
    """The session redaction's PEM pattern read from each BEGIN line to an END however far (quadratic on
    many BEGIN lines); it now stops at the next BEGIN, which also keeps a stray BEGIN line before a key."""
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvR8example\nq7ZbWQ==\n-----END RSA PRIVATE KEY-----"
    assert Redactor().text(f"a {key} b") == "a *** b"
    assert Redactor().text(f"-----BEGIN PRIVATE KEY-----\n{key}") == "-----BEGIN PRIVATE KEY-----\n***"


def test_every_shape_in_the_table_is_exercised_and_holds_its_mark() -> None:
    """A text without a shape's mark is searched for none of that mark's shapes: every token of a shape holds
    its mark, and the search from the mark finds the token where its whole pattern does."""
    import re

    from bitexact.credential_shapes import SHAPES

    from capture.test_leak_edges15b import V7_TOKENS

    for shape in SHAPES:
        if shape.keep is not None:  # a token inside a longer form: tests/capture/test_leak_edges15b.py
            continue
        tokens = [token for token in (*TOKENS.values(), *V7_TOKENS.values()) if re.fullmatch(shape.pattern, token)]
        assert tokens, shape.pattern
        for token in tokens:
            assert shape.mark in token, (shape, token)
            found = re.compile(re.escape(shape.mark) + shape.search).search(f"x {token} y")
            assert found is not None and (found.start() - shape.width, found.end()) == (2, 2 + len(token)), shape
    assert TOKEN_SHAPES == tuple(shape.pattern for shape in SHAPES)
    assert "_" not in "AKIAIOSFODNN7EXAMPLE" and _text("id AKIAIOSFODNN7EXAMPLE ok") == "id [CREDENTIAL] ok"


# -- PEM private keys ----------------------------------------------------------------------------------

PEM_BODY = "MIIEowIBAAKCAQEAvR8example\nq7ZbWQ+example/base64==\n"


@pytest.mark.parametrize("label", ["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "])
def test_a_private_key_keeps_its_armour_and_loses_its_lines(label: str) -> None:
    text = f"id_rsa:\n-----BEGIN {label}PRIVATE KEY-----\n{PEM_BODY}-----END {label}PRIVATE KEY-----\ndone"
    assert _text(text) == (f"id_rsa:\n-----BEGIN {label}PRIVATE KEY-----\n[CREDENTIAL]\n"
                           f"-----END {label}PRIVATE KEY-----\ndone")


def test_a_private_key_written_with_escaped_newlines_or_cut_short_is_scrubbed() -> None:
    escaped = "-----BEGIN PRIVATE KEY-----\\nMIIEowIBAAKCAQEA\\nq7ZbWQ==\\n-----END PRIVATE KEY-----"
    assert _text(f"cert {escaped} end") == "cert -----BEGIN PRIVATE KEY-----\\n[CREDENTIAL]\\n-----END PRIVATE KEY----- end"
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAAB3NzaC1y"
    assert _text(cut) == "-----BEGIN OPENSSH PRIVATE KEY-----\n[CREDENTIAL]"
    # In a tool result as data (a file the agent read), and as a JSON document held in a string.
    pem = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}-----END PRIVATE KEY-----\n"
    stored = _stored({"tool": "read_file", "result": pem, "raw": json.dumps({"file": pem})})
    assert "MIIEow" not in stored and stored.count("[CREDENTIAL]") == 2


# -- compound names -------------------------------------------------------------------------------------

COMPOUND = ["client_secret", "CLIENT_SECRET", "clientSecret", "refresh_token", "refreshToken", "GITHUB_TOKEN",
            "id_token", "DB_PASSWORD", "PGPASSWORD", "dbPassword", "SSH_PASSPHRASE", "AWS_SECRET_ACCESS_KEY",
            "awsSecretAccessKey", "private_key", "privateKey", "MY_API_KEY", "X-Goog-Api-Key", "X-Auth-Token",
            "Ocp-Apim-Subscription-Key", "signing_key", "stripe-secret"]
NOT_CREDENTIALS = ["sort_key", "primary_key", "cache_key", "prompt_cache_key", "idempotency_key", "publicKey",
                   "AWS_ACCESS_KEY_ID", "max_tokens", "input_tokens", "promptTokenCount", "token_count",
                   "tokenizer", "monkey", "hotkey", "xtoken", "PWD", "password_policy", "secret_name", "keys"]


@pytest.mark.parametrize("name", COMPOUND)
def test_a_compound_name_ending_in_a_credential_word_is_a_credential_in_every_form(name: str) -> None:
    assert is_credential_name(name)
    assert _text(f"{name}=hunter2x") == f"{name}=[CREDENTIAL]"
    assert _text(f"export {name}='hunter2 x'") == f"export {name}='[CREDENTIAL]'"
    assert _text(f'{{"{name}": "hunter2x"}}') == f'{{"{name}": "[CREDENTIAL]"}}'
    assert _text(f"services:\n  db:\n    {name}: hunter2x\n") == f"services:\n  db:\n    {name}: [CREDENTIAL]\n"
    assert _text(f"run --{name} hunter2x now") == f"run --{name} [CREDENTIAL] now"
    assert "hunter2x" not in _stored({"tool": "t", "args": [{name: "hunter2x"}], "result": {"headers": {name: "hunter2x"}}})


def test_a_compound_name_opening_a_pair_in_a_json_document_held_in_a_string_is_found() -> None:
    """Headers as [name, value] pairs in a JSON document in a string: only a table name sent the document
    to be read as data, so a compound name's value was kept."""
    stored = _stored({"tool": "t", "result": json.dumps({"headers": [["X-Auth-Token", "abc123x"],
                                                                     ["sort_key", "kept1"]]})})
    assert "abc123x" not in stored and "kept1" in stored
    cookie = _stored({"tool": "t", "result": json.dumps([["Cookie", "sid=s3cr3t"], ["Accept", "a/b"]])})
    assert "s3cr3t" not in cookie and "a/b" in cookie  # the prefilter's names are the detector's own


@pytest.mark.parametrize("name", NOT_CREDENTIALS)
def test_a_name_whose_last_word_is_no_credential_word_is_left(name: str) -> None:
    assert not is_credential_name(name)
    for text in (f"{name}=1024", f'{{"{name}": "abc"}}', f"{name}: abc", f"run --{name} abc"):
        assert _text(text) == text
    assert "abc" in _stored({"tool": "t", "result": {name: "abc"}})


# -- a flag and its value as two words; curl's -u ---------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("mytool --password hunter2 --verbose", "mytool --password [CREDENTIAL] --verbose"),
    ('mytool --api-key "two words" -v', 'mytool --api-key "[CREDENTIAL]" -v'),
    ("gh auth login --with-token --token ghx1234abcd", "gh auth login --with-token --token [CREDENTIAL]"),
    ("curl -u admin:hunter2 https://api.example.test", "curl -u admin:[CREDENTIAL] https://api.example.test"),
    ("curl --user 'svc:pa ss' x", "curl --user 'svc:[CREDENTIAL]' x"),
    ("wget --user=bob --password=hunter2 x", "wget --user=bob --password=[CREDENTIAL] x"),
])
def test_a_credential_flag_and_curls_user_password_are_scrubbed(text: str, expected: str) -> None:
    assert _text(text) == expected


# -- other languages' mappings and XML ------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("{password: 'hunter2x'}", "{password: '[CREDENTIAL]'}"),
    ('const cfg = {apiKey: "k-1", user: "bob"}', 'const cfg = {apiKey: "[CREDENTIAL]", user: "bob"}'),
    ("opts = { user: 'bob', clientSecret: `abc 123`, retries: 3 }", "opts = { user: 'bob', clientSecret: `[CREDENTIAL]`, retries: 3 }"),
    ("{auth: 'x-1', n: 1}", "{auth: '[CREDENTIAL]', n: 1}"),
    ("password => 'hunter2x'", "password => '[CREDENTIAL]'"),
    ("{'password' => 'hunter2x', 'user' => 'bob'}", "{'password' => '[CREDENTIAL]', 'user' => 'bob'}"),
    (':api_key => "abc123"', ':api_key => "[CREDENTIAL]"'),
    ('<wsse:Password Type="https://docs.example.test/#PasswordText">hunter2x</wsse:Password>',
     '<wsse:Password Type="https://docs.example.test/#PasswordText">[CREDENTIAL]</wsse:Password>'),
    ("<auth><user>bob</user><token>abc123</token></auth>", "<auth><user>bob</user><token>[CREDENTIAL]</token></auth>"),
], ids=["js-literal", "js-camel", "js-compound-backtick", "js-table-name", "ruby-arrow", "php-quoted-arrow",
        "ruby-symbol", "soap-password", "xml-token"])
def test_a_mapping_in_another_language_and_an_xml_element_are_scrubbed(text: str, expected: str) -> None:
    assert _text(text) == expected
    assert scrub_text(load_policy(env={}), expected) == (expected, {})


@pytest.mark.parametrize("text", [
    # A token shape inside a longer word, or cut short.
    "the task-abcdefghijklmnopqrstuvwxyz0123 is queued",  # sk- inside a longer word
    "ask-abcdefghijklmnopqrstuvwxyz",
    "sk-short",  # too short to be a key
    "ghp_tooShort123",
    "BAKIAIOSFODNN7EXAMPLE",
    "a sketch of the risk_test_plan",
    # A flag with no credential value.
    "mytool --password --verbose",  # the flag takes no value here: the next word is a flag
    "mytool --sort-key name",
    "git push -u origin main",
    "mysql -u root -p db",
    "a well--known token of thanks",
    # Mappings and elements.
    "x = {a: 1, sort_key: 2}",
    "<p>forgot the password</p>",
    "<sort_key>abc</sort_key>",
    "total => 12, tokens => 40",
    "see https://example.test/a,b:c",
    # A bare key's bare value is code, not a secret (found by the session's review).
    "def login(self, username: str, password: str) -> bool:",
    "function auth(user: string, token: string) {",
    "new OpenAI({apiKey: process.env.OPENAI_API_KEY})",
    "{key: len(key) for key in keys}",
    "const { token: authToken } = useAuth();",
    # The table's bare "key" in the forms where the spec is silent: an S3 object, a plist, a sort column.
    "<ListBucketResult><Contents><Key>photos/2024/cat.jpg</Key></Contents></ListBucketResult>",
    "<dict><key>CFBundleName</key><string>App</string></dict>",
    "aws s3api get-object --bucket b --key reports/2024/q1.csv out.csv",
    "sort --key 2 data.txt",
    # A tokenizer's special tokens.
    '{"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}',
    # A user and a group, not a password.
    "docker run -u 1000:1000 image",
    "docker exec -u root:root c sh",
    "git clone https://example.test/r && docker run -u 1000:1000 image",  # a URL's scheme runs no client
    "curl https://example.test/a\ndocker run -u 1000:1000 image",  # the client is on another line
    # Prose that decodes as base64 once padded.
    "A basic OpenAI example, basic Operations on sets, Basic Options",
    # Code and prose around PEM armour lines, with no key body between them.
    'BEGIN = "-----BEGIN PRIVATE KEY-----"\nEND = "-----END PRIVATE KEY-----"\n',
    'if line.startswith("-----BEGIN PRIVATE KEY-----"):\n    n += 1\nelif line.startswith("-----END PRIVATE KEY-----"):',
    "The file starts with -----BEGIN PRIVATE KEY----- and then base64 data follows on several lines",
])
def test_words_code_and_prose_the_rules_must_not_touch_are_left(text: str) -> None:
    assert _text(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("curl -H 'X-Api-Key: abc123' https://api.example.test", "curl -H 'X-Api-Key: [CREDENTIAL]' https://api.example.test"),
    ('curl --header "Cookie: session=abc" x', 'curl --header "Cookie: [CREDENTIAL]" x'),
    ("curl -H X-Auth-Token:abc x", "curl -H X-Auth-Token:[CREDENTIAL] x"),
    ("failed: x\\n--password hunter2", "failed: x\\n--password [CREDENTIAL]"),
    ("--password '[CREDENTIAL]", "--password '[CREDENTIAL]"),  # a token this scan wrote, its quote never closed
])
def test_curl_header_flags_flags_after_an_escape_and_an_unclosed_token(text: str, expected: str) -> None:
    assert _text(text) == expected
    assert scrub_text(load_policy(env={}), expected)[1] == {}


# -- a pair URL-encoded in another value; Basic without its padding ----------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("https://app.example.test/login?next=%2Fcb%3Fpassword%3Dhunter2%26user%3Dbob&x=1",
     "https://app.example.test/login?next=%2Fcb%3Fpassword%3D[CREDENTIAL]%26user%3Dbob&x=1"),
    ("redirect_uri=https%3A%2F%2Fapp.example.test%2Fcb%3Faccess_token%3Dabc123",
     "redirect_uri=https%3A%2F%2Fapp.example.test%2Fcb%3Faccess_token%3D[CREDENTIAL]"),
    ("state=x%3Bclient_secret%3Ds3cr3t%3Bv%3D1", "state=x%3Bclient_secret%3D[CREDENTIAL]%3Bv%3D1"),
])
def test_a_credential_pair_url_encoded_inside_another_value_is_scrubbed(text: str, expected: str) -> None:
    assert _text(text) == expected
    assert _text("q=a%3Db%26sort_key%3Dd") == "q=a%3Db%26sort_key%3Dd"


def test_a_basic_token_written_without_its_padding_is_scrubbed() -> None:
    import base64

    token = base64.b64encode(b"ann:hunter").decode()
    assert token.endswith("==")
    assert _text(f"Authorization: Basic {token.rstrip('=')}") == "Authorization: [CREDENTIAL]"
    assert _text(f"sent basic {token.rstrip('=')} upstream") == "sent basic [CREDENTIAL] upstream"


# -- HTTP's own credential headers; curl -v ----------------------------------------------------------


def test_cookies_and_proxy_credentials_are_credentials_as_keys_and_as_header_lines() -> None:
    """A wrapped Python client redacts Cookie, Set-Cookie and Proxy-Authorization itself; an event from
    another language's client, or a raw HTTP exchange in a tool's output, met no detector that did."""
    stored = _stored({"tool": "t", "result": {"headers": {"Cookie": "sid=abc123", "Set-Cookie": "sid=abc123",
                                                          "Proxy-Authorization": "Digest abc123", "Accept": "a/b"}}})
    assert "abc123" not in stored and "a/b" in stored
    verbose = ("* Connected to api.example.test\n> GET /v1 HTTP/1.1\n> X-Api-Key: k-abc123\n> Cookie: sid=abc123\n"
               "< HTTP/1.1 200 OK\n< Set-Cookie: sid=abc123; HttpOnly\n< Content-Type: text/plain\n")
    assert _text(verbose) == ("* Connected to api.example.test\n> GET /v1 HTTP/1.1\n> X-Api-Key: [CREDENTIAL]\n"
                              "> Cookie: [CREDENTIAL]\n< HTTP/1.1 200 OK\n< Set-Cookie: [CREDENTIAL]\n"
                              "< Content-Type: text/plain\n")


# -- the same through the write path -------------------------------------------------------------------


def test_scrubbing_twice_declares_nothing_new() -> None:
    policy = load_policy(env={})
    text = (f"{TOKENS['anthropic']} DB_PASSWORD=x1 --token t1 curl -u a:b "
            f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}-----END PRIVATE KEY-----")
    once, counts = scrub_text(policy, text)
    assert counts == {"credentials": 5}
    assert scrub_text(policy, once) == (once, {})


def test_a_recorded_step_keeps_none_of_them_anywhere_in_the_store(tmp_path: Path) -> None:
    secrets = [TOKENS["github-classic"], "hunter2-db", "c1ient-s3cret", "MIIEowIBAAKCAQEAvR8example"]
    stored = recorded_in_store(tmp_path / "home", {
        "tool": "shell",
        "args": ["cat .env"],
        "result": {"stdout": f"GITHUB_TOKEN={secrets[0]}\nDB_PASSWORD={secrets[1]}\n",
                   "oauth": {"client_secret": secrets[2]},
                   "key": f"-----BEGIN PRIVATE KEY-----\n{secrets[3]}\n-----END PRIVATE KEY-----"},
    })
    assert [s for s in secrets if s in stored] == []
