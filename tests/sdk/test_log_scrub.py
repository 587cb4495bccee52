"""SDK log lines go through the capture policy's detectors before any handler sees them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bitexact.sdk.stores import close_stores, recorder_for

CARD = "4111 1111 1111 1111"


def test_a_card_number_in_an_sdk_log_line_is_scrubbed(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    close_stores()
    recorder_for(home)
    with caplog.at_level(logging.WARNING, logger="bitexact.sdk"):
        logging.getLogger("bitexact.sdk").warning("recording failed for payment %s", CARD)
    assert caplog.records, "the line is still logged"
    text = caplog.records[-1].getMessage()
    assert CARD not in text and "4111111111111111" not in text
    assert "1111" in text  # the scrub keeps the last four
    close_stores()
