"""Credentials the default policy stored as written, scrubbed under rules version 7 (an audit's findings):

1. bare token shapes of more vendors (Groq ``gsk_``, Tavily ``tvly-``, Replicate ``r8_``, Perplexity ``pplx-``, xAI
   ``xai-``, LangSmith ``lsv2_pt_``, Pinecone ``pcsk_``, ``whsec_``, Slack ``xapp-``, PyPI, DigitalOcean, Shopify,
   GitLab runners, Figma, Atlassian, Linear, Notion), and the secret part of Slack and Discord webhook URLs and
   of a Telegram bot token (the host and the ids stay);
2. a presigned URL's signature (``X-Amz-Signature=``, ``X-Goog-Signature=``);
3. names written with a blank (``"API Key"``), joined in lower case (``secretkey``, ``identitytoken``), and a
   password manager's ``label`` beside a ``value``;
4. a value that is a whole variable or template reference (``TOKEN=${GITHUB_TOKEN}``) and a YAML boolean after a
   credential name are left whole (they had become ``TOKEN=[CREDENTIAL]}``, ``...Token: [CREDENTIAL]``).

Each form is scrubbed (only the secret; a second pass finds nothing new) and set beside look-alikes that are left.
"""

from __future__ import annotations

import json

import orjson
import pytest
from capture.support import scrubbed

from bitexact.capture import apply_policy, load_policy
from bitexact.sessions.unify.redact import Redactor

T = "[CREDENTIAL]"

V7_TOKENS = {
    "groq": "gsk_" + "aB3dE5gH7j" * 5 + "K9",
    "tavily": "tvly-" + "Ab12Cd34Ef" * 3 + "G5",
    "tavily-dev": "tvly-dev-" + "Ab12Cd34Ef" * 3 + "G5",
    "replicate": "r8_" + "Q7wE5rT3yU" * 3 + "1iOp9aS",
    "perplexity": "pplx-" + "a1S2d3F4g5H6" * 4,
    "xai": "xai-" + "Zq8Xw7Ce6V" * 8,
    "langsmith-pat": "lsv2_pt_" + "0123456789abcdef" * 2 + "_" + "a1b2c3d4e5",
    "langsmith-service": "lsv2_sk_" + "fedcba9876543210" * 2 + "_" + "0f1e2d3c4b",
    "pinecone": "pcsk_" + "3AbCdE_" + "Fg4Hi5Jk6L" * 6,
    "stripe-webhook": "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "slack-app": "xapp-1-A0123456789-1234567890123-" + "0123456789abcdef" * 4,
    "pypi": "pypi-AgEIcHlwaS5vcmc" + "CJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
    "digitalocean-pat": "dop_v1_" + "0123456789abcdef" * 4,
    "digitalocean-oauth": "doo_v1_" + "fedcba9876543210" * 4,
    "shopify-access": "shpat_" + "0123456789abcdef" * 2,
    "shopify-secret": "shpss_" + "fedcba9876543210" * 2,
    "gitlab-runner": "glrt-" + "t1_Ab3De6Gh9Jk2Mn5Pq8",
    "figma": "figd_" + "Ab3_De6-Gh9Jk2" * 3,
    "atlassian": "ATATT3xFfGF0" + "T2kVz9_Lq-8rW4mN" * 11 + "=A1B2C3D4",
    "linear": "lin_api_" + "Ab3De6Gh9J" * 4,
    "notion": "ntn_" + "12345678901" + "AbCdEfGhIj" * 3 + "KlMnO",
    "notion-secret": "secret_" + "Ab3De6Gh9J" * 4 + "kLm",
}
"""A token of each rules version 7 vendor form, in its documented length."""

LOOK_ALIKES = (
    "gsk_short_name", "tvly-api", "r8_model_weights", "pplx-7b-online", "xai-sdk", "lsv2_pt_abc",
    "pcsk_ shown", "whsec_...", "xapp-1-A01", "pypi-server", "pypi-AgEIshort", "dop_v1_abc",
    "shpat_xxxx", "glrt-runner", "figd_token", "ATATT3", "lin_api_key", "ntn_token",
    "secret_key_base", "secret_" + "a" * 42, "secret_" + "Ab3De6Gh9J" * 5, "client_secret_" + "Ab3De6Gh9J" * 4 + "kLm",
    "ntn_" + "1" * 45, "dop_v1_" + "0123456789abcdef" * 3, "mygsk_" + "aB3dE5gH7j" * 5 + "K9",
)
"""Names, prose and near misses: too short, a word's tail, the wrong length."""


@pytest.mark.parametrize("token", V7_TOKENS.values(), ids=V7_TOKENS.keys())
def test_a_token_of_each_new_vendor_form_is_scrubbed_whole(token: str) -> None:
    assert scrubbed(f"the agent ran with {token} and stopped") == f"the agent ran with {T} and stopped"
    assert scrubbed(f'Client("{token}")') == f'Client("{T}")'
    assert scrubbed(f"line one\\n{token}") == f"line one\\n{T}"
    stored = json.dumps(apply_policy(load_policy(env={}), "tool_call", {"tool": "env", "out": token}).data)
    assert token not in stored and T in stored
    redactor = Redactor()  # the session artifact's redaction masks the same table, its prefilter included
    assert redactor.may_match(orjson.dumps({"text": f"x {token} y"}))
    assert redactor.text(f"x {token} y") == "x *** y"


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_names_and_near_misses_of_the_new_forms_are_left(text: str) -> None:
    assert scrubbed(f"see {text} here") == f"see {text} here"
    assert Redactor().text(f"see {text} here") == f"see {text} here"


SLACK = "https://hooks.slack.com/services/T00000000/B00000000/XXXXslack71XXXXXXXXXXXX"
DISCORD = "https://discord.com/api/webhooks/1234567890123456789/discordTok72-abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJ"
TELEGRAM = "6123456789:AAF-tgTok73abcdefghijklmnopqrstuvw"


@pytest.mark.parametrize(("text", "expected"), [
    (f"curl -X POST -d '{{}}' {SLACK}", f"curl -X POST -d '{{}}' https://hooks.slack.com/services/T00000000/B00000000/{T}"),
    (f"POST {DISCORD}", f"POST https://discord.com/api/webhooks/1234567890123456789/{T}"),
    (f"POST {DISCORD.replace('discord.com', 'discordapp.com')}?wait=true",
     f"POST https://discordapp.com/api/webhooks/1234567890123456789/{T}?wait=true"),
    (f"curl -s https://api.telegram.org/bot{TELEGRAM}/sendMessage -d chat_id=1",
     f"curl -s https://api.telegram.org/bot6123456789:{T}/sendMessage -d chat_id=1"),
    (f"Use bot token {TELEGRAM} to send.", f"Use bot token 6123456789:{T} to send."),
    ("TELEGRAM=110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", f"TELEGRAM=110201543:{T}"),
])
def test_a_webhook_urls_secret_and_a_bot_token_are_scrubbed_their_host_and_ids_kept(text: str, expected: str) -> None:
    assert scrubbed(text) == expected
    assert Redactor().text(text) == expected.replace(T, "***")
    assert Redactor().may_match(orjson.dumps({"text": text}))


@pytest.mark.parametrize("text", [
    "https://hooks.slack.com/services/T00000000/B00000000/short",  # no secret's length
    "https://hooks.slack.com/services/",
    "https://discord.com/api/webhooks/1234567890123456789/short-token",
    "https://github.com/org/repo/settings/hooks/123456789/deliveries",
    "https://example.com/webhooks/12345/" + "a" * 50,  # no Discord id (17 to 20 digits)
    "at 2026-12-01 10:00:00 job 123456:AAB ok",
    "12345678:AA" + "b" * 20,  # too short for a bot token
    "12345678:AA" + "b" * 40,  # too long
    "1234:AA" + "b" * 33,  # an id too short
])
def test_webhook_and_bot_token_look_alikes_are_left(text: str) -> None:
    assert scrubbed(text) == text
    assert Redactor().text(text) == text


# -- 2. a presigned URL's signature ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("https://acme.s3.amazonaws.com/q1.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261201T100000Z"
     "&X-Amz-Signature=3f1e9c2b7a0d4e6f8a1b2c3d4e5f6071&x=1",
     "https://acme.s3.amazonaws.com/q1.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261201T100000Z"
     f"&X-Amz-Signature={T}&x=1"),
    ("https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=gcsSig337abcdef0123",
     f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={T}"),
    ('{"url": "s3", "X-Amz-Signature": "abc123def"}', f'{{"url": "s3", "X-Amz-Signature": "{T}"}}'),
    ("x-amz-signature: abc123def", f"x-amz-signature: {T}"),
])
def test_a_presigned_urls_signature_is_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected


@pytest.mark.parametrize("text", [
    "email_signature=Best regards", "X-Amz-SignedHeaders=host", "type_signature=int", '{"method_signature": "f(x)"}',
])
def test_other_signatures_and_signed_headers_are_left(text: str) -> None:
    assert scrubbed(text) == text


# -- 3. names written with a blank, joined, or as a field's label ------------------------------------------


def test_names_written_with_a_blank_are_credentials_as_object_keys_and_in_quoted_text() -> None:
    data = {"API Key": "k1", "Access Token": "t1", "Client Secret": "s1", "Secret Key": "k2",
            "Sort Key": "name", "Next Page": "2", "Display Name": "Ann"}
    stored = apply_policy(load_policy(env={}), "tool_call", {"result": data}).data["result"]
    assert stored == {"API Key": T, "Access Token": T, "Client Secret": T, "Secret Key": T,
                      "Sort Key": "name", "Next Page": "2", "Display Name": "Ann"}
    text = "resp: {'API Key': 'k1', 'Sort Key': 'name', \"Client Secret\": \"s1\"}"
    assert scrubbed(text) == f"resp: {{'API Key': '{T}', 'Sort Key': 'name', \"Client Secret\": \"{T}\"}}"


@pytest.mark.parametrize("name", ["secretkey", "privatekey", "accesstoken", "refreshtoken", "authkey",
                                  "identitytoken", "SECRETKEY", "apikey", "accesskey", "clientsecret"])
def test_joined_lower_case_names_are_credentials(name: str) -> None:
    stored = apply_policy(load_policy(env={}), "tool_call", {"cfg": {name: "v1x"}}).data["cfg"]
    assert stored == {name: T}
    assert scrubbed(f"{name}=v1x next") == f"{name}={T} next"


@pytest.mark.parametrize("name", ["monkey", "xtoken", "turkey", "hockey", "donkey", "mytoken", "sortkey"])
def test_joined_words_that_only_end_like_a_credential_are_left(name: str) -> None:
    assert apply_policy(load_policy(env={}), "tool_call", {"cfg": {name: "v1x"}}).data["cfg"] == {name: "v1x"}


def test_docker_configs_identity_token_and_a_password_managers_labelled_fields_are_scrubbed() -> None:
    docker = {"auths": {"myregistry.azurecr.io": {"auth": "Ym9iOng=", "identitytoken": "idTok57abc"}}}
    assert apply_policy(load_policy(env={}), "tool_call", docker).data == {
        "auths": {"myregistry.azurecr.io": {"auth": T, "identitytoken": T}}}
    fields = {"fields": [{"id": "x1", "type": "CONCEALED", "label": "API Key", "value": "opKey405"},
                         {"name": "api key", "value": "bwKey410"},
                         {"label": "Title", "value": "My Login"}]}
    assert apply_policy(load_policy(env={}), "tool_call", fields).data == {
        "fields": [{"id": "x1", "type": "CONCEALED", "label": "API Key", "value": T},
                   {"name": "api key", "value": T},
                   {"label": "Title", "value": "My Login"}]}
    assert scrubbed(json.dumps(fields)) == json.dumps({
        "fields": [{"id": "x1", "type": "CONCEALED", "label": "API Key", "value": T},
                   {"name": "api key", "value": T},
                   {"label": "Title", "value": "My Login"}]})


# -- 4. references, YAML booleans -------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "TOKEN=${GITHUB_TOKEN} next",
    "//npm.pkg.github.com/:_authToken=${NPM_TOKEN}",
    'TOKEN="${GITHUB_TOKEN}"',
    "api_key=$API_KEY next",
    "automountServiceAccountToken: false",
    "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n",
    "password: {{ .Values.password }}",
    'password: "{{ .Values.db.password | quote }}"',
    'cfg: {"password": "${DB_PASSWORD}"}',
])
def test_a_whole_variable_or_template_reference_and_a_yaml_boolean_are_left_whole(text: str) -> None:
    assert scrubbed(text) == text


def test_a_reference_in_data_is_left_and_a_value_that_only_looks_like_one_is_scrubbed() -> None:
    data = {"password": "${DB_PASSWORD}", "token": "${{ secrets.T }}", "api_key": "$ecret1", "secret": "${X}y"}
    assert apply_policy(load_policy(env={}), "tool_call", data).data == {
        "password": "${DB_PASSWORD}", "token": "${{ secrets.T }}", "api_key": T, "secret": T}


@pytest.mark.parametrize(("text", "expected"), [
    ("password=$ecret1 x", f"password={T} x"),  # a password opening with "$", not a variable's capitals
    ("password=${DB_PW:-hunter2} x", f"password={T} x"),  # a default holds the secret: whole, its brace too
    ("PASSWORD=$Hunter2", f"PASSWORD={T}"),
    ("password: trueish", f"password: {T}"),
    ("gcloud secrets versions access latest --secret=prod-db-password", f"gcloud secrets versions access latest --secret={T}"),
])
def test_values_that_only_look_like_a_reference_or_a_boolean_are_scrubbed(text: str, expected: str) -> None:
    assert scrubbed(text) == expected
