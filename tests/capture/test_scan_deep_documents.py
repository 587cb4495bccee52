"""A JSON document held in a string and nested deep: read without recursing near the interpreter's limit,
so the agent's own finalizers keep their stack, and read deeper than Python's json module can go."""

from __future__ import annotations

import pytest

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import build
from bitexact.capture.policy import DEFAULT_DETECTORS
from bitexact.capture.scan import DetectorFailed, Scanner
from stack_room import least_finalizer_room

VISA = "4111111111111111"


@pytest.fixture
def scanner() -> Scanner:
    return Scanner(build(DEFAULT_DETECTORS))


def test_a_document_nested_past_what_any_reader_takes_fails_the_scan_with_the_stack_left_alone(
    scanner: Scanner,
) -> None:
    """It failed the scan before too, but only once Python's parser had stood at the recursion limit: a
    collection started there ran the agent's finalizers with no stack left, each dying of RecursionError."""
    text = '{"card": "' + VISA + '", "a": ' + "[" * 5000 + "]" * 5000 + "}"

    def scan() -> None:
        with pytest.raises(DetectorFailed, match="nested too deep to read"):
            scanner.scrub_document(text, Deadline.unlimited())

    assert least_finalizer_room(scan) > 500


def test_a_document_nested_past_pythons_json_but_within_orjson_is_scanned(scanner: Scanner) -> None:
    """1020 levels, past the default recursion limit: Python's parser gave up (the field failed its scan);
    orjson reads up to 1024, so it is scrubbed."""
    text = '{"card": "' + VISA + '", "a": ' + "[" * 1020 + "]" * 1020 + "}"
    scrubbed = scanner.scrub_document(text, Deadline.unlimited())
    assert scrubbed is not None
    assert scrubbed[0] == '{"card": "[PAN ****1111]", "a": ' + "[" * 1020 + "]" * 1020 + "}"


def test_a_deep_document_orjson_refuses_is_read_as_json_reads_it_when_shallow_enough(scanner: Scanner) -> None:
    """NaN is not JSON to orjson, but Python's reader (the scan's measure of a document) takes it."""
    text = '{"card": "' + VISA + '", "n": NaN, "a": ' + "[" * 300 + "]" * 300 + "}"
    scrubbed = scanner.scrub_document(text, Deadline.unlimited())
    assert scrubbed is not None and scrubbed[0].startswith('{"card": "[PAN ****1111]", "n": NaN')
    deeper = text.replace("[" * 300 + "]" * 300, "[" * 500 + "]" * 500)
    with pytest.raises(DetectorFailed, match="nested too deep to read"):
        scanner.scrub_document(deeper, Deadline.unlimited())
