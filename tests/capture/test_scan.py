"""What a detector reads: strings at any depth, numbers, keys, JSON documents in strings."""

from __future__ import annotations

import json

import pytest

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import build
from bitexact.capture.policy import DEFAULT_DETECTORS
from bitexact.capture.scan import MAX_NESTED_DOCUMENTS, DetectorFailed, Scanner

VISA = "4111111111111111"


@pytest.fixture
def scanner() -> Scanner:
    return Scanner(build(DEFAULT_DETECTORS))


def scrub(scanner: Scanner, text: str) -> str:
    return scanner.scrub_text(text, Deadline.unlimited())[0]


def test_a_json_document_in_a_string_keeps_its_layout(scanner: Scanner) -> None:
    text = '{ "a" :  "' + VISA + '",\n  "b": [1, 2] }'
    assert scrub(scanner, text) == '{ "a" :  "[PAN ****1111]",\n  "b": [1, 2] }'


def test_escaped_digits_in_a_document_hide_nothing(scanner: Scanner) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in VISA)
    assert scrub(scanner, '{"card": "' + escaped + '"}') == '{"card": "[PAN ****1111]"}'


def test_a_value_shadowed_by_a_repeated_key_is_read(scanner: Scanner) -> None:
    text = '{"card": "' + VISA + '", "card": "nothing"}'
    assert scrub(scanner, text) == '{"card": "[PAN ****1111]", "card": "nothing"}'
    assert json.loads(scrub(scanner, text)) == {"card": "nothing"}  # what a plain reader would have seen


def test_a_number_in_a_document_is_read_as_its_text(scanner: Scanner) -> None:
    assert scrub(scanner, '[' + VISA + ', 5]') == '["[PAN ****1111]", 5]'


def test_a_key_in_a_document_is_read(scanner: Scanner) -> None:
    assert scrub(scanner, '{"' + VISA + '": 1}') == '{"[PAN ****1111]": 1}'


def test_a_credential_key_in_a_document_replaces_its_value_whole(scanner: Scanner) -> None:
    assert scrub(scanner, '{"auth": {"user": "ann", "pw": "x"}, "ok": true}') == '{"auth": "[CREDENTIAL]", "ok": true}'
    assert scrub(scanner, '{"token": null, "key": ""}') == '{"token": null, "key": ""}'


def test_documents_nested_in_strings_are_read_at_every_level(scanner: Scanner) -> None:
    inner = json.dumps({"token": "zz", "card": VISA})
    outer = json.dumps({"payload": inner})
    doubly = json.dumps([outer])
    result = json.loads(json.loads(json.loads(scrub(scanner, doubly))[0])["payload"])
    assert result == {"token": "[CREDENTIAL]", "card": "[PAN ****1111]"}


def test_documents_nested_too_deep_fail_the_scan(scanner: Scanner) -> None:
    # Each level of quoting doubles the escapes, so the limit is reached from
    # the inside: a document met at the limit's depth is refused, not read.
    text = json.dumps([VISA])
    assert scanner.scrub_document(text, Deadline.unlimited(), depth=MAX_NESTED_DOCUMENTS - 1) is not None
    with pytest.raises(DetectorFailed):
        scanner.scrub_document(text, Deadline.unlimited(), depth=MAX_NESTED_DOCUMENTS)


def test_text_that_only_looks_like_a_document_is_read_as_text(scanner: Scanner) -> None:
    assert scrub(scanner, "{not json " + VISA + "}") == "{not json [PAN ****1111]}"


def test_many_texts_at_once_match_one_at_a_time(scanner: Scanner) -> None:
    texts = [
        "nothing",
        "card " + VISA,
        '{"api_key": "x1"}',
        "DE89 3704 0044 0532 0130 00",
        "token=abc next",
        '{"a": "\\u0034111111111111111"}',
        "Bearer abcdefgh12345678",
        "x-api-key: k\nnext",
    ]
    deadline = Deadline.unlimited()
    together = scanner.scrub_many(texts, deadline)
    alone = {i: scanner.scrub_text(t, deadline) for i, t in enumerate(texts)}
    assert together == {i: r for i, r in alone.items() if r[1]}
    assert set(together) == {1, 2, 3, 4, 5, 6, 7}


class Exploding:
    name = "exploding"
    context_free = True

    def find(self, text, deadline, *, context=None, prefilter=False):  # noqa: ANN001, ANN201
        raise ZeroDivisionError("a detector bug")


def test_a_detector_that_raises_fails_the_scan_with_a_typed_error() -> None:
    scanner = Scanner((Exploding(),))
    with pytest.raises(DetectorFailed):
        scanner.scrub_text("anything", Deadline.unlimited())
