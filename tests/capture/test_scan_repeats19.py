"""Texts that stand more than once in a step are scanned once, and each place keeps what it would get alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import build
from bitexact.capture.detectors.base import first_digit
from bitexact.capture.scan import Scanner

VISA = "4111 1111 1111 1111"
SCANNER = Scanner(
    build(
        {
            "pan": {"keep_last4": True}, "iban": {}, "credentials": {},
            # Needs its context (the key a value is stored under): a rescan, never a finding taken as joined.
            "us_ssn": {"require_context": True}, "email": {},
        }
    )
)
PROSE = " the customer asked whether the blue jacket can be exchanged before Friday" * 4  # 300 characters
# Long texts (a repeat is looked for from 256 characters) and short ones, each perhaps drawn twice.
POOL = ["nothing", "card " + VISA, "123-45-6789", "Bearer abcdefgh12345678", "x-api-key: k\nnext",
        '{"password": "pw1"}', "GB82 WEST 1234 5698 7654 32", "ann@example.com", "", "k" * 40,
        "nothing" + PROSE, "card " + VISA + PROSE, "123-45-6789" + PROSE, "x-api-key: k\nnext" + PROSE,
        '{"password": "pw1", "note": "' + PROSE + '"}', "k" * 300, "K" * 300]
CONTEXTS = [None, "ssn", "note", "password"]


def alone(texts: list[str], contexts: list[str | None]) -> dict[int, tuple[str, object]]:
    deadline = Deadline.unlimited()
    out = {i: SCANNER.scrub_text(text, deadline, context=contexts[i]) for i, text in enumerate(texts)}
    return {i: result for i, result in out.items() if result[1]}


def test_a_repeated_text_is_scrubbed_at_each_place_with_its_own_context() -> None:
    ssn, card = "123-45-6789" + PROSE, "card " + VISA + PROSE
    texts = [ssn, card, ssn, card, "ssn"]
    contexts: list[str | None] = ["ssn", None, "note", "args", None]
    together = SCANNER.scrub_many(texts, Deadline.unlimited(), context_of=contexts.__getitem__)
    assert together == alone(texts, contexts)
    assert set(together) == {0, 1, 3}  # the SSN under "note" has no context that makes it one
    assert together[1][0] == together[3][0] == "card [PAN ****1111]" + PROSE


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(POOL), st.sampled_from(CONTEXTS)), min_size=2, max_size=12))
def test_scanning_repeated_texts_together_is_scanning_each_alone(items: list[tuple[str, str | None]]) -> None:
    texts = [text for text, _ in items]
    contexts = [context for _, context in items]
    together = SCANNER.scrub_many(texts, Deadline.unlimited(), context_of=contexts.__getitem__)
    assert together == alone(texts, contexts)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789ak%-\u0663", max_size=40))
def test_the_first_digit_is_the_first_ascii_digit(text: str) -> None:
    expected = next((i for i, char in enumerate(text) if char in "0123456789"), -1)
    assert first_digit(text) == expected
