"""The capture policy (sixth review): values stored in the clear, or scrubbed twice; regression tests.

Each test failed before the fix it names. They drive the public entry points -
``bitexact.capture.apply_policy`` / ``scrub_text`` under the shipped default, and
where it matters the one write path (``Recorder`` / ``RunWriter.append``) or a real
SDK run, whose stored entry is read back. No test depends on machine speed.
"""

from __future__ import annotations

from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, load_policy, scrub_text

CARD = "4111111111111111"


def _stored(data: dict[str, Any]) -> str:
    """What apply_policy under the shipped default stores for one tool_call, as canonical JSON."""
    return canonicalize(apply_policy(load_policy(), "tool_call", data).data).decode()


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
