"""Typed errors of the capture policy.

Each names the field it is about, so a person can fix the policy or the
call without reading code; callers catch the type, never parse the text.
"""

from __future__ import annotations

from bitexact.errors import BitExactError


class PolicyError(BitExactError, ValueError):
    """A capture policy cannot be used; ``field`` names where, ``reason`` says why.

    A process given such a policy refuses to start recording
    (capture-controls.md: "A policy that cannot be used refuses the process
    at start").
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"capture policy: {field}: {reason}")
        self.field = field
        self.reason = reason


class HintError(BitExactError, ValueError):
    """A custody hint (or a source-set ``capture``) is not one the contract allows."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class FieldNotOpenableError(BitExactError, ValueError):
    """A capture-block field cannot be opened (not hash-only, or committed with no key)."""


class CaptureKeyMismatchError(BitExactError, ValueError):
    """The key offered to open a field is not the one it was committed under."""

    def __init__(self, wanted: str, offered: str) -> None:
        super().__init__(
            f"the field was committed under capture key {wanted}; the key offered is {offered}"
        )
        self.wanted = wanted
        self.offered = offered


class ScrubFailedError(BitExactError):
    """A text could not be scanned within its budget, or a detector failed on it."""


class CaptureInputError(BitExactError, TypeError):
    """What was handed to the capture policy is not a step's data (a JSON object)."""
