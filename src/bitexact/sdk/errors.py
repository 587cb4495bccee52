"""Errors the SDK raises on purpose: misuse at the call site, and recording failures in strict mode.

Non-strict runs never raise a recording failure into the agent: it becomes a
declared gap (:mod:`bitexact.sdk.failures`). Misuse that a developer fixes
in code (a custody hint that is not one, a kind the SDK may not write) is
raised where it happens, naming the field.
"""

from __future__ import annotations

from bitexact.errors import BitExactError


class SdkArgumentError(BitExactError, ValueError):
    """An SDK call was given something it cannot record; ``field`` names the argument."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class CustodyHintError(SdkArgumentError):
    """A custody hint that is not one, or a second custody for a tool already wrapped."""


class RecordingError(BitExactError):
    """Strict mode: the evidence could not be written, so the call does not answer as if it were.

    ``cause`` is the failure's cause word (``storage_unavailable``,
    ``invalid_argument``, ...), the same one a non-strict run declares.
    """

    def __init__(self, message: str, *, cause: str) -> None:
        super().__init__(message)
        self.cause = cause


class IdentityRefusedError(RecordingError):
    """Strict mode: the identity rule refused fields (the gap declaring them is written first)."""

    def __init__(self, message: str, *, fields: dict[str, str]) -> None:
        super().__init__(message, cause="invalid_argument")
        self.fields = fields


class RunClosedError(SdkArgumentError):
    """Something was recorded into a run that has already ended."""
