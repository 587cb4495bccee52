"""A logging filter that scrubs log records with the capture policy's detectors.

A log holds no commitments to declare a scrub in, so a log line is scrubbed,
never declared (capture-controls.md, "What else the policy reaches"). A
message that cannot be scanned in its budget is replaced whole, never
logged raw.
"""

from __future__ import annotations

import logging
from typing import Final

from bitexact.capture.apply import scrub_text
from bitexact.capture.errors import ScrubFailedError
from bitexact.capture.policy import CapturePolicy, load_policy

UNSCANNED_MESSAGE: Final[str] = "[log message withheld: it could not be scanned]"


class CaptureLogFilter(logging.Filter):
    """Scrubs each record's message (arguments merged in) and its formatted exception."""

    def __init__(self, policy: CapturePolicy | None = None, name: str = "") -> None:
        super().__init__(name)
        self.policy = policy if policy is not None else load_policy()

    def _scrub(self, text: str) -> str:
        try:
            return scrub_text(self.policy, text)[0]
        except ScrubFailedError:
            return UNSCANNED_MESSAGE

    def filter(self, record: logging.LogRecord) -> bool:
        """Scrub the record in place; never drops it."""
        if self.policy.off:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: never let its raw arguments through
            record.msg, record.args = UNSCANNED_MESSAGE, None
            return True
        scrubbed = self._scrub(message)
        if scrubbed != message or record.args:
            record.msg = scrubbed
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = self._scrub(record.stack_info)
        return True
