"""Values the policy must scrub that used to reach the stored data unscrubbed, found in review.

Each test pins one leak that is now closed; none depends on machine speed
(no budget is exercised).
"""

from __future__ import annotations

import copy
import json

from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, load_policy

VISA = "4111111111111111"


# -- 1. a credential-named TOP-LEVEL key holding an object is kept as sent ----


def test_a_top_level_credential_key_holding_an_object_is_replaced_whole() -> None:
    # The same value one level down is replaced whole ({"x": {"auth": ...}} ->
    # {"x": {"auth": "[CREDENTIAL]"}}), and inside a JSON string too; at the
    # top level Walk.run takes the object-valued branch and never asks
    # replaced_whole(), so the secret is stored as captured with no block.
    data = {"auth": {"user": "alice", "password_value": "s3cret-pw"}}
    captured = apply_policy(load_policy(), "tool_call", data)
    assert "s3cret-pw" not in json.dumps(captured.data)
    assert captured.data == {"auth": "[CREDENTIAL]"}
    assert captured.block is not None
    assert captured.block["fields"]["auth"]["found"] == {"credentials": 1}


def test_a_top_level_credential_key_holding_an_object_matches_the_nested_case() -> None:
    policy = load_policy()
    secret = {"scheme": "Bearer", "value": "tok-123"}
    nested = apply_policy(policy, "tool_call", {"x": {"token": secret}})
    top = apply_policy(policy, "tool_call", {"token": secret})
    assert nested.data == {"x": {"token": "[CREDENTIAL]"}}
    assert top.data == {"token": "[CREDENTIAL]"}


# -- 2. a JSON document in a string, key and colon separated by white space ----


def test_a_json_document_with_space_before_the_colon_is_scrubbed_by_key() -> None:
    # '"password" : "..."' is valid JSON (Jackson's pretty printer writes it).
    # Scanned alone it is found (the document path replaces it); scanned with
    # any other text of the step (here, the key "body") the joined pass has no
    # '":' anchor, no backslash, so the document is never parsed: kept raw.
    document = '{"user": "alice", "password" : "hunter2"}'
    captured = apply_policy(load_policy(), "tool_call", {"body": document})
    assert "hunter2" not in json.dumps(captured.data)
    assert captured.data == {"body": '{"user": "alice", "password" : "[CREDENTIAL]"}'}


def test_a_json_document_with_a_newline_before_the_colon_holding_an_object_is_scrubbed() -> None:
    document = '{"token"\n: {"value": "tok-abc-123"}}'
    captured = apply_policy(load_policy(), "tool_call", {"args": [document, "other"]})
    assert "tok-abc-123" not in json.dumps(captured.data)


def test_the_scanner_finds_the_same_in_a_document_alone_and_joined() -> None:
    from bitexact.capture.budget import Deadline

    scanner = load_policy().scanner
    document = '{"token" : "abcdef"}'
    alone = scanner.scrub_many([document], Deadline.unlimited())
    joined = scanner.scrub_many(["body", document], Deadline.unlimited())
    assert alone[0][0] == '{"token" : "[CREDENTIAL]"}'
    assert joined.get(1, (None,))[0] == alone[0][0]


# -- 3. a str subclass (StrEnum, markupsafe.Markup, numpy.str_) is never read ---


class _Text(str):
    """A str subclass, as markupsafe.Markup, numpy.str_ or a StrEnum member is."""


def test_a_card_number_in_a_str_subclass_is_scrubbed() -> None:
    # canonicalize writes a str subclass as the string it is, so the stored
    # entry holds the card number; the walk only reads type(value) is str.
    data = {"result": {"card": _Text(VISA)}}
    before = copy.deepcopy(data)
    captured = apply_policy(load_policy(), "tool_call", data)
    assert data == before
    assert VISA not in canonicalize(captured.data).decode()
    assert captured.block is not None


def test_a_credential_in_a_str_subclass_inside_a_list_is_scrubbed() -> None:
    data = {"args": [_Text("password=hunter2")]}
    captured = apply_policy(load_policy(), "tool_call", data)
    assert "hunter2" not in canonicalize(captured.data).decode()
