"""Logs are scrubbed, never declared; a streamed body is scanned once reassembled."""

from __future__ import annotations

import logging

import pytest

from bitexact.capture import CaptureLogFilter, load_policy, reassemble, scrub_stream, scrub_text
from bitexact.capture.errors import ScrubFailedError

VISA = "4111111111111111"


@pytest.fixture
def records() -> list[logging.LogRecord]:
    return []


@pytest.fixture
def logger(records: list[logging.LogRecord]) -> logging.Logger:
    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    log = logging.getLogger("bitexact.test.capture")
    log.handlers[:] = []
    handler = Keep()
    handler.addFilter(CaptureLogFilter(load_policy()))
    log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.DEBUG)
    return log


def test_a_log_message_and_its_arguments_are_scrubbed(logger: logging.Logger, records: list) -> None:
    logger.info("charging %s with token=%s", VISA, "abc123")
    assert records[0].getMessage() == "charging [PAN ****1111] with token=[CREDENTIAL]"


def test_a_logged_exception_is_scrubbed(logger: logging.Logger, records: list) -> None:
    try:
        raise ValueError(f"bad card {VISA}")
    except ValueError:
        logger.exception("failed")
    formatted = logging.Formatter().format(records[0])
    assert VISA not in formatted and "[PAN ****1111]" in formatted


def test_with_the_policy_off_logs_pass_as_they_are() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "card %s", (VISA,), None)
    assert CaptureLogFilter(load_policy("off")).filter(record)
    assert record.getMessage() == f"card {VISA}"


def test_a_message_that_cannot_be_scanned_is_not_logged_raw() -> None:
    class Slow:
        def __init__(self) -> None:
            self.now = 0.0

        def __call__(self) -> float:
            self.now += 5.0
            return self.now

    with pytest.raises(ScrubFailedError):
        scrub_text(load_policy(), f"card {VISA}", clock=Slow())


def test_a_card_number_split_across_chunks_is_found_once_reassembled() -> None:
    chunks = [b'data: {"text": "card 4111 11', b"11 1111 1", b'111"}\n\n']
    assert all(scrub_text(load_policy(), c.decode())[1] == {} for c in chunks)  # no chunk alone holds it
    scrubbed, counts = scrub_stream(load_policy(), chunks)
    assert counts == {"pan": 1}
    assert scrubbed == 'data: {"text": "card [PAN ****1111]"}\n\n'


def test_reassembly_decodes_a_character_split_across_chunks() -> None:
    text = "card \u0664\u0661\u0661\u0661111111111111"
    raw = text.encode("utf-8")
    chunks = [raw[:6], raw[6:7], raw[7:]]  # split inside a two-byte character
    assert reassemble(chunks) == text
    assert scrub_stream(load_policy(), chunks)[1] == {"pan": 1}
