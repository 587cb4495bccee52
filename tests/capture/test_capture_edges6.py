"""The capture policy (sixth review): values stored in the clear, or scrubbed twice; regression tests.

Each test failed before the fix it names. They drive the public entry points -
``bitexact.capture.apply_policy`` / ``scrub_text`` under the shipped default, and
where it matters the one write path (``Recorder`` / ``RunWriter.append``) or a real
SDK run, whose stored entry is read back. No test depends on machine speed.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, load_policy, scrub_text
from bitexact.crypto import chain_hash
from bitexact.recording import Recorder
from bitexact.sdk import close_stores
from bitexact.store import Store

CARD = "4111111111111111"


def _stored(data: dict[str, Any]) -> str:
    """What apply_policy under the shipped default stores for one tool_call, as canonical JSON."""
    return _stored_as(data, "tool_call")


def _stored_as(data: dict[str, Any], kind: str) -> str:
    return canonicalize(apply_policy(load_policy(), kind, data).data).decode()


# -- 1. applying the policy twice: a credential token written after white space is scrubbed again ----------


@pytest.mark.parametrize(
    "text",
    [
        "password = hunter2",  # a config line: white space around the "="
        "password=\thunter2",
        "retry with token =  abc123 next",
        "{'password': ['hunter2']}",  # a Python repr: the list is replaced whole, unquoted
        '"password": hunter2 secret',
    ],
)
def test_applying_the_policy_twice_declares_nothing_new(text: str) -> None:
    # docs/capture.md: "Tokens hold nothing a detector finds again, so applying the policy twice declares
    # nothing new". Before the fix "password = [CREDENTIAL]" became "password = [CREDENTIAL]]" (the
    # already-a-token check looked right after the "=", not after the white space), and a bracketed
    # "[CREDENTIAL]" was replaced by itself and counted again.
    policy = load_policy()
    once, found = scrub_text(policy, text)
    assert found == {"credentials": 1}
    twice, again = scrub_text(policy, once)
    assert (twice, again) == (once, {})


def test_a_collectors_credential_scrub_is_not_declared_again_by_the_recorder() -> None:
    # capture-controls.md, Collectors: "applying it twice is safe: a field the collector already declared,
    # and that the recorder leaves as it arrived, is not declared again". Before the fix the recorder
    # rewrote the collector's "password = [CREDENTIAL]" and declared its own scrub (health then names the
    # collector: collector-unscrubbed).
    policy = load_policy()
    sent = {"tool": "deploy", "result": "password = hunter2"}
    at_collector = apply_policy(policy, "tool_call", sent, applied_by="edge-1")
    assert at_collector.data["result"] == "password = [CREDENTIAL]"
    at_recorder = apply_policy(policy, "tool_call", at_collector.data, prior=at_collector.block)
    assert at_recorder.data == at_collector.data
    assert at_recorder.block is None


# -- 2. NAME="..." whose quoted value holds an escaped quote, a line break, or is never closed -----------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('PASSWORD="hunter2\\"and more words"', "and more words"),  # a shell / .env escape
        ('SECRET="line-one-abc\nline-two-xyz"\nUSER=ann', "line-two-xyz"),  # a .env multi-line value
        ('SECRET="line-one-abc\nline-two-xyz"\nUSER=ann', "line-one-abc"),
        ('ERROR bad config: token="tok-abc-123', "tok-abc-123"),  # cut short: a truncated log line
        ("ERROR bad config: password='hunter2-secret", "hunter2-secret"),
        ("{'password': 'hunter2-secret", "hunter2-secret"),  # a truncated Python repr
        ('{"password": "hunter2-secret', "hunter2-secret"),
    ],
)
def test_a_quoted_credential_value_is_scrubbed_whole(text: str, secret: str) -> None:
    # docs/capture.md, credentials: NAME=VALUE "the value ends at white space or ... or is quoted". A
    # quoted value with a backslash-escaped quote kept everything after the escape; one holding a line
    # break (a .env multi-line value, a PEM) or never closed matched no value at all and was stored whole.
    assert secret not in _stored({"tool": "cfg", "result": text})
    scrubbed, found = scrub_text(load_policy(), text)
    assert secret not in scrubbed and found == {"credentials": 1}


def test_a_closed_quoted_value_is_scrubbed_up_to_its_quote_only() -> None:
    # What follows the closing quote is evidence the policy did not ask to destroy.
    scrubbed, _ = scrub_text(load_policy(), 'PASSWORD="a\\"b" USER="ann" ORDER=42')
    assert scrubbed == 'PASSWORD="[CREDENTIAL]" USER="ann" ORDER=42'


# -- 3. tuples and container subclasses handed to the write path are stored unscanned ----------------------


@pytest.mark.parametrize(
    "data",
    [
        {"tool": "pay", "args": (CARD,)},
        {"tool": "pay", "args": ["ok", (CARD,)]},
        {"tool": "pay", "args": {"cards": (CARD,)}},
        {"tool": "pay", "args": [OrderedDict(card=CARD)]},
        {"tool": "pay", "args": ({"password": "hunter2-secret"},)},
    ],
)
def test_a_tuple_or_container_subclass_is_scanned_like_a_list_or_object(data: dict[str, Any]) -> None:
    # canonicalize writes a tuple as an array and a dict or list subclass as what it is, so the entry
    # stores them; the walk (and the clean-step shortcut) only descended into exact dicts and lists, and
    # kept these as captured - card number and password in the clear, with no capture block.
    stored = _stored(data)
    assert CARD not in stored and "hunter2-secret" not in stored


def test_a_tuple_handed_to_the_write_path_never_reaches_the_store(
    recorder: Recorder, store: Store, home: Path
) -> None:
    writer = recorder.start()
    result = writer.append("tool_call", {"tool": "pay", "args": ["ok", (CARD, "4111 1111 1111 1111")]})
    entry = store.entry(writer.run_id, result.step)
    assert entry["capture"]["fields"]["args"]["found"] == {"pan": 2}
    raw = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert CARD.encode() not in raw and b"4111 1111 1111 1111" not in raw
    assert json.dumps(entry["data"]["args"]) == '["ok", ["[PAN ****1111]", "[PAN ****1111]"]]'


# -- 4. a context's content_hash whose hex digits read as a card number ------------------------------------


def _holds_card_digits(digest: str) -> bool:
    """Whether a hex digest holds 12 to 19 consecutive decimal digits that pass an issuer prefix and Luhn
    (what the card detector took for a card before it knew hex digests)."""
    from bitexact.capture.detectors.pan import is_pan

    return any(is_pan(run[i:i + n]) for run in re.findall(r"\d{12,}", digest)
               for n in range(12, 20) for i in range(len(run) - n + 1))


def _tripping_text(alg: str) -> str:
    """A text whose context content_hash (under ``alg``) holds digits that read as a card number."""
    for n in range(100_000):
        text = f"doc {n}"
        if _holds_card_digits(chain_hash(alg, canonicalize({"text": text}))):
            return text
    raise AssertionError("no such text")  # about one digest in 200 holds them


def test_a_context_hash_is_not_scrubbed_as_a_card_number(home: Path) -> None:
    # docs/capture.md: "A context's content_hash is the hash of its content as stored". A hex digest holds a
    # run of 12+ decimal digits that passes an issuer prefix and Luhn about once in 200 digests; the policy
    # scrubbed it as a card ("29df...c[PAN ****4967]ed84..."), destroying the hash of content it stored
    # untouched - a false positive no rule asked for.
    text = _tripping_text("blake2b-256")
    with bitexact.run(name="review-capture6", home=home) as r:
        entry = dict(r.context("policy-doc", text))
    close_stores()
    assert entry["data"]["content"] == {"text": text}
    assert entry["data"]["content_hash"] == chain_hash(entry["alg"], canonicalize({"text": text}))
    assert "capture" not in entry


def test_a_context_hash_is_still_made_again_when_its_content_is_scrubbed() -> None:
    text = _tripping_text("blake2b-256")
    content = {"text": text, "card": CARD}
    data = {"name": "doc", "content": content, "content_hash": chain_hash("blake2b-256", canonicalize(content))}
    captured = apply_policy(load_policy(), "context", data)
    assert captured.data["content"]["card"] == "[PAN ****1111]"
    assert captured.data["content_hash"] == chain_hash("blake2b-256", canonicalize(captured.data["content"]))
    assert "content_hash" not in captured.block["fields"]


def test_a_context_hash_that_is_no_hash_of_its_content_is_still_scanned() -> None:
    # Only the content's own hash is exempt: a source's arbitrary text in the field is read as any field is.
    data = {"name": "doc", "content": {"text": "x"}, "content_hash": CARD}
    assert CARD not in _stored_as(data, "context")


def test_a_context_hash_under_a_hash_only_hint_is_still_kept_hash_only() -> None:
    content = {"text": "x"}
    data = {"name": "doc", "content": content, "content_hash": chain_hash("blake2b-256", canonicalize(content))}
    captured = apply_policy(load_policy(), "context", data, hints={"content_hash": "hash-only"})
    assert captured.data["content_hash"] == "[hash-only]"


def test_an_identity_workflow_digest_is_not_scrubbed_as_a_card_number(home: Path) -> None:
    # docs/sdk.md: "a reader recomputes it from the entry's own fields". About one digest in 200 has its hex
    # digits scrubbed as a card number ("4841...5fd[PAN ****8880]a69c..."), which no reader can recompute.
    from bitexact.sdk.identity import workflow_digest

    name = next(f"wf-{n}" for n in range(100_000)
                if _holds_card_digits(workflow_digest({"workflow": f"wf-{n}"}, "blake2b-256")))
    with bitexact.run(name="review-capture6", home=home) as r:
        entry = dict(r.identity(workflow=name))
    close_stores()
    assert entry["data"]["workflow_digest"] == workflow_digest({"workflow": name}, entry["alg"])


def _digest_holding_a_card_run() -> str:
    """A real SHA-256 hex digest whose digits hold a run that passes an issuer prefix and the Luhn check."""
    import hashlib


    for n in range(100_000):
        digest = hashlib.sha256(f"commit {n}".encode()).hexdigest()
        if _holds_card_digits(digest) and re.search(r"[a-f]\d{12,}", digest):  # a run a letter starts too
            return digest
    raise AssertionError("no digest found")


def test_a_hex_digest_in_agent_data_is_never_scrubbed_as_a_card_number() -> None:
    """About one SHA-256 digest in 200 (a git commit id, a content hash in a tool's result) holds a digit run
    that passes an issuer prefix and Luhn: it was scrubbed to `...[PAN ****1234]...`, destroying the hash."""
    policy = load_policy()
    digest = _digest_holding_a_card_run()
    for text in (digest, f"commit {digest} merged", digest[:40], json.dumps({"sha": digest})):
        assert scrub_text(policy, text) == (text, {}), text
    stored = _stored({"tool": "git_log", "result": {"head": digest}})
    assert digest in stored and "[PAN" not in stored


@pytest.mark.parametrize("text", [
    "card 4111111111111111 on file",
    "ref:4111111111111111",
    "Visa4111111111111111",  # a hex letter beside it, but no digest: 'a' alone
    "cafe4111111111111111",  # hex letters beside it, 20 hex characters: no digest
    "4111111111111111" + "x" * 40,  # 56 characters, not all hex
])
def test_a_card_number_beside_letters_that_make_no_digest_is_still_scrubbed(text: str) -> None:
    scrubbed, found = scrub_text(load_policy(), text)
    assert found.get("pan") == 1 and "4111111111111111" not in scrubbed, scrubbed
