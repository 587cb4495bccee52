"""Ordinary agent evidence under a credential table word is no credential (audit 16).

The default policy replaced whole every value under `token`, `signature` and `key`, and destroyed:
every output token of an OpenAI / vLLM logprobs response (`{"token": "Hello", "logprob": -0.01}`), the
`signature` of an Anthropic thinking block (which the API needs back verbatim: the recorded conversation
could not be replayed), an S3 object's `Key`, a DynamoDB item's `Key`, a keyboard event's `key`, an i18n
`key`, a sort `key`, and every pagination token (`next_page_token`, `NextToken`). docs/capture.md
("Ordinary evidence under a credential word") now says which are left; the secrets written the same way
are still replaced. Each input below is as the service or library writes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bitexact.capture import apply_policy, load_policy, scrub_text

from .support import recorded_in_store

POLICY = load_policy(env={})
T = "[CREDENTIAL]"
OPAQUE = "q8Zr2LkWm9Xv4PtNb7Yc1HsJd6Fg3Ae0"  # a random API key's form: letters and digits mixed
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def stored(data: dict[str, Any], kind: str = "model") -> tuple[dict[str, Any], dict[str, int]]:
    """What the default policy stores of one step, and what it found, by detector."""
    captured = apply_policy(POLICY, kind, data)
    found: dict[str, int] = {}
    for field in ((captured.block or {}).get("fields") or {}).values():
        for detector, count in field.get("found", {}).items():
            found[detector] = found.get(detector, 0) + count
    return captured.data, found


def kept(payload: dict[str, Any]) -> None:
    """``payload`` is stored unchanged as data, as a JSON document in a string beside other fields, and in text."""
    data, found = stored({"response": payload})
    assert data == {"response": payload} and found == {}, data
    document = json.dumps(payload)
    data, found = stored({"status": 200, "body": document, "url": "https://api.example.com/v1"})
    assert data["body"] == document and found == {}, data["body"]
    for text in (json.dumps(payload, indent=2), f"INFO response {document} done"):
        assert scrub_text(POLICY, text) == (text, {}), scrub_text(POLICY, text)[0]


# -- 1. a model's output tokens --------------------------------------------------------------------------------------

CHAT_LOGPROBS = {
    "id": "chatcmpl-AZ1", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
    "choices": [{
        "index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "Hello world", "refusal": None},
        "logprobs": {"content": [
            {"token": "Hello", "logprob": -0.0112, "bytes": [72, 101, 108, 108, 111], "top_logprobs": [
                {"token": "Hello", "logprob": -0.0112, "bytes": [72, 101, 108, 108, 111]},
                {"token": "Hi", "logprob": -4.61, "bytes": [72, 105]}]},
            {"token": " world", "logprob": -0.2, "bytes": [32, 119, 111, 114, 108, 100], "top_logprobs": []},
        ], "refusal": None},
    }],
    "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11,
              "completion_tokens_details": {"reasoning_tokens": 0}},
}
STREAM_CHUNK = {
    "id": "chatcmpl-AZ1", "object": "chat.completion.chunk", "created": 1733050000, "model": "Qwen/Qwen2.5-7B",
    "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None,
                 "logprobs": {"content": [{"token": "Hello", "logprob": -0.01, "bytes": [72, 101, 108, 108, 111],
                                           "top_logprobs": [{"token": "Hi", "logprob": -4.6, "bytes": [72, 105]}]}]}}],
}
GEMINI_LOGPROBS = {"candidates": [{"content": {"parts": [{"text": "Hello"}], "role": "model"}, "logprobsResult": {
    "topCandidates": [{"candidates": [{"token": "Hello", "tokenId": 15043, "logProbability": -0.01},
                                      {"token": "Hi", "tokenId": 6324, "logProbability": -4.6}]}],
    "chosenCandidates": [{"token": "Hello", "tokenId": 15043, "logProbability": -0.01}]}}]}
TGI_STREAM = {"index": 1, "token": {"id": 15043, "text": "Hello", "logprob": -0.5, "special": False},
              "generated_text": None, "details": None}


@pytest.mark.parametrize("payload", [CHAT_LOGPROBS, STREAM_CHUNK, GEMINI_LOGPROBS, TGI_STREAM],
                         ids=["openai-chat", "vllm-stream-chunk", "gemini", "tgi-stream"])
def test_a_models_output_tokens_are_kept(payload: dict[str, Any]) -> None:
    kept(payload)


def test_an_output_token_written_in_a_log_line_is_kept() -> None:
    for text in (
        "ChoiceLogprobs(content=[ChatCompletionTokenLogprob(token='Hello', bytes=[72], logprob=-0.01, "
        "top_logprobs=[TopLogprob(token='Hi', bytes=[72, 105], logprob=-4.6)])], refusal=None)",
        "chunk: {'token': ' world', 'logprob': -0.2, 'bytes': [32, 119]}",
        "StreamResponse(index=1, token=Token(id=15043, text='Hello', logprob=-0.5, special=False))",
    ):
        assert scrub_text(POLICY, text) == (text, {}), scrub_text(POLICY, text)[0]


def test_a_secret_beside_a_logprob_or_named_token_elsewhere_is_still_replaced() -> None:
    # A token shape is found by its form wherever it stands.
    data, found = stored({"response": {"logprobs": {"content": [{"token": GITHUB, "logprob": -0.1}]}}})
    assert data["response"]["logprobs"]["content"][0]["token"] == T and found == {"credentials": 1}
    # A token with no logprob beside it is the table's: an OAuth response, a session.
    data, _ = stored({"response": {"token": OPAQUE, "expires_in": 3600, "logprobs": None}})
    assert data["response"]["token"] == T
    assert stored({"response": {"token": {"value": OPAQUE, "scope": "repo"}}})[0]["response"]["token"] == T
    # A logprob in another object, nested or beside, is no sibling: as data, as a document and in text.
    for payload in ({"token": OPAQUE, "meta": {"logprob": -0.1}}, {"top": [{"logprob": -0.1}], "token": OPAQUE}):
        assert stored({"response": payload})[0]["response"]["token"] == T
        document = json.dumps(payload)
        assert json.loads(stored({"status": 200, "body": document})[0]["body"])["token"] == T
        assert OPAQUE not in scrub_text(POLICY, f"INFO {document} done")[0]
    # In text: a logprob in an object closed before the name is no sibling.
    text = "{'token': 'Hello', 'logprob': -0.1} then {'token': '" + OPAQUE + "', 'expires_in': 3600}"
    assert scrub_text(POLICY, text)[0] == "{'token': 'Hello', 'logprob': -0.1} then {'token': '" + T + \
        "', 'expires_in': 3600}"
    assert scrub_text(POLICY, f"ChatCompletionTokenLogprob(token='Hi', logprob=-1.0) token={OPAQUE}")[0] == \
        f"ChatCompletionTokenLogprob(token='Hi', logprob=-1.0) token={T}"


def test_the_legacy_completions_form_and_usage_counts_are_kept_as_before() -> None:
    # Already left before audit 16 (no credential name): pinned so the rule above never widens into them.
    kept({"choices": [{"text": "Hello world", "index": 0, "logprobs": {
        "tokens": ["Hello", " world"], "token_logprobs": [-0.1, -0.2],
        "top_logprobs": [{"Hello": -0.1, "Hi": -2.3}, {" world": -0.2}], "text_offset": [0, 5]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, "max_tokens": 16,
                  "tokens_per_second": 31.2, "token_count": 5, "tokenizer": "cl100k_base"}})


# -- 2. Anthropic's thinking blocks ----------------------------------------------------------------------------------

SIGNATURE = ("EqQBCkgIARABGAIiQL6fJq3u2Y+Pz0qkAq9vZkQK6qf4m1Y9zYx0l8T2rT5QaKxXq1ZrB7s9wPpYbT9xV0uZlCw1A4kq3mB8nH2oR6UJ"
             "EgxqNw3jXh8pYf1q9Ckx2H4aDMuHZc7b0L5w2Y0t+g")
MESSAGE = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "The user asks for 27 * 453. 27 * 453 = 12231.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
        {"type": "text", "text": "27 * 453 = 12,231"},
    ],
    "stop_reason": "end_turn", "usage": {"input_tokens": 50, "output_tokens": 120},
}
SIGNATURE_DELTA = {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta",
                                                                         "signature": SIGNATURE}}


@pytest.mark.parametrize("payload", [MESSAGE, SIGNATURE_DELTA], ids=["message", "stream-delta"])
def test_a_thinking_blocks_signature_is_kept(payload: dict[str, Any]) -> None:
    kept(payload)


def test_a_thinking_block_sent_back_in_the_next_request_is_kept() -> None:
    # The replayable conversation: the assistant's thinking block goes back verbatim with the tool result.
    request = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": [
        {"role": "user", "content": "What is 27 * 453?"},
        {"role": "assistant", "content": MESSAGE["content"][:1]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "12231"}]}]}
    data, found = stored({"request": request})
    assert data == {"request": request} and found == {}


def test_a_thinking_block_written_by_the_sdk_in_a_log_line_is_kept() -> None:
    for text in (
        f"ThinkingBlock(signature='{SIGNATURE}', thinking='27 * 453 = 12231', type='thinking')",
        f'block {{"type": "thinking", "thinking": "a \\"quoted\\" step", "signature": "{SIGNATURE}"}}',
        f"{{'type': 'signature_delta', 'signature': '{SIGNATURE}'}}",
    ):
        assert scrub_text(POLICY, text) == (text, {}), scrub_text(POLICY, text)[0]


def test_other_signatures_stay_as_they_were() -> None:
    # A webhook's signature under the bare table word is replaced, as before; its header names were left before
    # and are left now (an HMAC authenticates a body; docs/capture.md names only presigned URLs' signatures).
    webhook = {"headers": {"X-Signature": "sha256=5d41402abc4b2a76b9719d911017c592", "Stripe-Signature": "t=1,v1=ab"},
               "payload": {"event": "push", "signature": "5d41402abc4b2a76b9719d911017c592"}}
    data, found = stored(webhook, "http_call")
    assert data["headers"] == webhook["headers"] and data["payload"]["signature"] == T
    # A signature in a block of another type is the table's.
    data, _ = stored({"response": {"content": [{"type": "text", "text": "hi", "signature": OPAQUE}]}})
    assert data["response"]["content"][0]["signature"] == T
    # A signature after some other member in text is the table's.
    text = f"{{'type': 'webhook', 'signature': '{OPAQUE}'}}"
    assert scrub_text(POLICY, text)[0] == f"{{'type': 'webhook', 'signature': '{T}'}}"


def test_geminis_thought_signature_is_kept_as_before() -> None:
    # Already left before audit 16: `thoughtSignature` ends in `signature` after no presigned URL's word.
    kept({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Let me check.", "thought": True, "thoughtSignature": SIGNATURE}]}}]})


# -- 3. a bare key holding a path, a dotted id or a word --------------------------------------------------------------


@pytest.mark.parametrize("payload", [
    {"Bucket": "acme-reports", "Key": "reports/2026/q3.csv"},  # s3.get_object's arguments
    {"Bucket": "acme", "Key": "uploads/2f564894-1098-4529-82f0-cc98fe621d37.png"},
    {"Bucket": "acme", "Key": "Shared/Q3 summary (final).pdf"},
    {"IsTruncated": False, "Contents": [  # list_objects_v2's answer
        {"Key": "a.txt", "LastModified": "2026-11-30T10:00:00Z", "ETag": '"9b2cf535f27731c974343645a3985328"',
         "Size": 3, "StorageClass": "STANDARD"},
        {"Key": "logs/2026/11/app.log", "Size": 9, "StorageClass": "STANDARD"}], "KeyCount": 2},
    {"TableName": "users", "Key": {"pk": {"S": "user#1"}, "sk": {"N": "42"}}},  # DynamoDB get_item
    {"type": "keydown", "key": "ArrowDown", "code": "ArrowDown", "shiftKey": False},  # a browser's key event
    {"type": "keydown", "key": "a", "code": "KeyA"}, {"type": "keydown", "key": " ", "code": "Space"},
    {"type": "keydown", "key": "F12", "code": "F12"},
    {"messages": [{"key": "menu.title", "defaultMessage": "Menu"}, {"key": "checkout.pay_now", "en": "Pay"}]},
    {"sort": [{"key": "created_at", "order": "desc"}], "filters": [{"key": "status", "op": "eq", "value": "open"}]},
    {"issues": [{"key": "PAY-4521", "fields": {"summary": "Refund fails"}}]},  # Jira
    {"env": [{"name": "API_TOKEN", "valueFrom": {"secretKeyRef": {"name": "api", "key": "token"}}}]},  # k8s
], ids=["s3-get", "s3-uuid-name", "s3-blanks", "s3-list", "dynamodb", "keyboard", "keyboard-a", "keyboard-space",
        "keyboard-f12", "i18n", "sort-filter", "jira", "k8s-secret-ref"])
def test_a_bare_key_holding_a_path_a_dotted_id_or_a_word_is_kept(payload: dict[str, Any]) -> None:
    kept(payload)


def test_a_boto3_call_written_in_a_log_line_is_kept() -> None:
    for text in ("s3.get_object(Bucket='acme', Key='reports/2026/q3.csv')", "key=created_at&order=desc",
                 "key: menu.title"):
        assert scrub_text(POLICY, text) == (text, {}), scrub_text(POLICY, text)[0]


@pytest.mark.parametrize("value", [
    OPAQUE, GITHUB, "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "AKIAIOSFODNN7EXAMPLE",
    "5d41402abc4b2a76b9719d911017c592", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AbC+dEf/ghIjKlmN0pQ=",
    "2f564894-1098-4529-82f0-cc98fe621d37",
])
def test_a_bare_key_holding_an_opaque_value_is_still_replaced(value: str) -> None:
    assert stored({"request": {"key": value}})[0] == {"request": {"key": T}}
    assert stored({"request": {"Key": value, "Bucket": "b"}})[0]["request"]["Key"] == T
    assert json.loads(stored({"status": 1, "body": json.dumps({"key": value})})[0]["body"]) == {"key": T}
    assert scrub_text(POLICY, f"GET /v1/geocode?address=Paris&key={value}")[0] == \
        f"GET /v1/geocode?address=Paris&key={T}"
    assert scrub_text(POLICY, f"key: {value}")[0] == f"key: {T}"


def test_an_object_under_a_bare_key_other_than_a_dynamodb_key_is_still_replaced_whole() -> None:
    jwk = {"kty": "oct", "k": "GawgguFyGrWKav7AX4VKUg", "alg": "HS256"}  # a JSON Web Key's secret
    assert stored({"request": {"key": jwk}})[0] == {"request": {"key": T}}
    assert stored({"request": {"Key": {"pk": "user#1"}}})[0] == {"request": {"Key": T}}  # no attribute value
    # Inside a DynamoDB key, a credential name among its attributes is still the table's.
    data, _ = stored({"request": {"Key": {"pk": {"S": "user#1"}, "api_key": {"S": OPAQUE}}}})
    assert data["request"]["Key"] == {"pk": {"S": "user#1"}, "api_key": T}


# -- 4. the same family: pagination cursors --------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [
    {"files": [], "nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRhbTlfNHVfMHJ0ZBIA"},  # Google Drive
    {"items": [], "next_page_token": "CiAKGjBpNDd2Nmp2"},
    {"pageSize": 50, "pageToken": "CiAKGjBpNDd2Nmp2"},
    {"Functions": [], "NextToken": "eyJNYXJrZXIiOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAxfQ=="},  # AWS
    {"ResourceTagMappingList": [], "PaginationToken": "AAQABAgAMHwRlY"},
    {"Contents": [], "ContinuationToken": "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=", "IsTruncated": True},
    {"continuation_token": "eyJvZmZzZXQiOjUwfQ", "prev_page_token": "eyJvZmZzZXQiOjB9", "cursor": "x"},
    {"items": [], "nextSyncToken": "CPDAlvWDx70CEPDAlvWDx70CGAU="},  # Google Calendar
], ids=["drive", "snake", "page-token", "aws-next", "aws-pagination", "s3-continuation", "cursors", "sync"])
def test_a_pagination_cursor_is_kept(payload: dict[str, Any]) -> None:
    kept(payload)


def test_credential_tokens_beside_cursors_are_still_replaced() -> None:
    data, found = stored({"response": {
        "access_token": OPAQUE, "refresh_token": OPAQUE, "id_token": OPAQUE, "session_token": OPAQUE,
        "csrf_token": OPAQUE, "authenticity_token": OPAQUE, "token_type": "Bearer", "expires_in": 3600,
        "next_page_token": "CiAKGjBp"}})
    assert data["response"] == {
        "access_token": T, "refresh_token": T, "id_token": T, "session_token": T, "csrf_token": T,
        "authenticity_token": T, "token_type": "Bearer", "expires_in": 3600, "next_page_token": "CiAKGjBp"}
    assert found == {"credentials": 6}


# -- 5. the same family: a tool's parameter named as a credential, a function's signature --------------------------

TOOLS_REQUEST = {"model": "gpt-4o", "messages": [{"role": "user", "content": "log in to the staging db"}], "tools": [
    {"type": "function", "function": {"name": "db_login", "description": "Log in to a database.", "parameters": {
        "type": "object", "required": ["user", "password"], "additionalProperties": False, "properties": {
            "user": {"type": "string"},
            "password": {"type": "string", "description": "The user's password."},
            "api_key": {"type": ["string", "null"], "description": "An API key, if the server takes one."},
            "token": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "key": {"type": "string", "enum": ["primary", "secondary"]}}}}}]}
MCP_TOOL = {"tools": [{"name": "github_auth", "inputSchema": {"type": "object", "properties": {
    "auth": {"type": "object", "properties": {"token": {"type": "string", "description": "A GitHub token"}}}}}}]}


@pytest.mark.parametrize("payload", [TOOLS_REQUEST, MCP_TOOL], ids=["openai-tools", "mcp-tools-list"])
def test_a_tools_parameter_named_as_a_credential_keeps_its_schema(payload: dict[str, Any]) -> None:
    kept(payload)


def test_a_functions_signature_in_a_code_tools_result_is_kept() -> None:
    kept({"symbols": [{"name": "load_policy", "kind": "function", "path": "src/bitexact/capture/policy.py",
                       "signature": "def load_policy(source: str | None = None) -> CapturePolicy"},
                      {"name": "Walk.run", "signature": "(self, data: dict[str, Any]) -> None"}]})


def test_a_credential_object_that_only_looks_like_a_schema_or_code_is_still_replaced() -> None:
    for value in ({"type": "bearer", "token": OPAQUE}, {"type": "basic"}, {"type": "string", "value": OPAQUE},
                  {"description": "prod", "secret": OPAQUE}):
        assert stored({"request": {"auth": value}})[0] == {"request": {"auth": T}}, value
        assert json.loads(stored({"status": 1, "body": json.dumps({"auth": value})})[0]["body"]) == {"auth": T}
    # A secret's own form in a schema's default is still found, and an HMAC signature is the table's.
    data, _ = stored({"request": {"api_key": {"type": "string", "default": GITHUB}, "signature": OPAQUE}})
    assert data == {"request": {"api_key": {"type": "string", "default": T}, "signature": T}}


# -- the whole path: a real run's store, and the command that shows what the policy scrubs ------------------------


def test_a_recorded_step_keeps_the_evidence_and_none_of_the_secrets(tmp_path: Path) -> None:
    text = recorded_in_store(tmp_path / "home", {
        "tool": "agent", "result": {"completion": CHAT_LOGPROBS, "message": MESSAGE,
                                    "s3": {"Bucket": "b", "Key": "reports/2026/q3.csv"},
                                    "page": {"nextPageToken": "CiAKGjBpNDd2Nmp2"},
                                    "auth": {"key": OPAQUE, "token": GITHUB}}}, name="fp16")
    for evidence in ('"token": " world"', SIGNATURE, "reports/2026/q3.csv", "CiAKGjBpNDd2Nmp2"):
        assert evidence in text
    assert OPAQUE not in text and GITHUB not in text


def test_capture_test_shows_the_evidence_kept(tmp_path: Path) -> None:
    line = (f"ChatCompletionTokenLogprob(token='Hello', bytes=[72], logprob=-0.01) Key='reports/2026/q3.csv' "
            f"ThinkingBlock(signature='{SIGNATURE}', thinking='x', type='thinking') token={OPAQUE}")
    env = {**os.environ, "BITEXACT_HOME": str(tmp_path / "home")}
    env.pop("BITEXACT_CAPTURE_POLICY", None)
    result = subprocess.run([sys.executable, "-m", "bitexact", "capture", "test", line, "--json"],
                            capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["text"] == line.replace(OPAQUE, T) and shown["found"] == {"credentials": 1}
