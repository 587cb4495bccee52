"""Typed errors a user can act on.

Every error names what was wrong and, where it can, what to do about it.
Callers catch these types; they never parse message strings.
"""

from __future__ import annotations

from typing import TypeVar


class BitExactError(Exception):
    """Base class of every error BitExact raises on purpose."""

    public: str | None = None
    """What went wrong in words that quote none of the recorded data, when the raiser gave them (see
    :func:`stated`): a recording gap, which is evidence, states these, never the message itself."""


_Error = TypeVar("_Error", bound=BaseException)


def stated(error: _Error, public: str | None = None) -> _Error:
    """``error``, marked as safe to state in a gap: its own message, or ``public`` when the message quotes
    a recorded value (an integer's digits)."""
    error.public = str(error) if public is None else public  # type: ignore[attr-defined]
    return error


class StateRefusedError(BitExactError):
    """The operation is refused by a state of the data directory or of a run, not by what was asked.

    The same request succeeds, its arguments unchanged, once that state changes (a recorder key made with
    ``bitexact keys init``, a run's journals folded by ``bitexact repair``), and the message says how to
    change it. The command line exits 1 for it (a refusal), never 2 (an input to correct), whatever the
    error's other bases: a subclass may also be an :class:`EvidenceError`, so a ``ValueError``, for
    callers that caught it as one before it had its own type.
    """


class CanonicalizationError(BitExactError, ValueError):
    """A value cannot be written as canonical JSON (bundle spec §1.2)."""


class StrictJSONError(BitExactError, ValueError):
    """A document was refused by the strict JSON reader (bundle spec §1.1).

    ``str(exc)`` is the spec's message exactly; ``position`` (a character
    offset, or ``None``) says where, when the reader knows.
    """

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def where(self) -> str:
        """The message with its position, for people rather than verdicts."""
        if self.position is None:
            return self.message
        return f"{self.message} (at character {self.position})"


class KeyMaterialError(BitExactError):
    """A key file or key material is missing, malformed or unusable."""


class StoreError(BitExactError):
    """The store could not do what was asked."""


class StoreBusyError(StoreError):
    """Another process kept the store's write lock past the wait allowed (``BITEXACT_LOCK_TIMEOUT``)."""


class StoreDamagedError(StoreError):
    """The store's file does not read back as SQLite wrote it (changed outside BitExact, or its disk
    failed): nothing a retry or another argument fixes; restore it from a backup.

    ``what`` says what did not read back; the message adds why and what to do. ``bitexact health``
    quotes ``what`` alone in its findings, which say what to do themselves."""

    ADVICE = "the file was changed outside BitExact, or its disk failed; restore bitexact.db from a backup"

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(f"{what}; {self.ADVICE}")


class StaleHeadError(StoreError):
    """An append named a head that is no longer the run's head."""


class RunNotFoundError(StoreError):
    """No run with that id exists in the store."""


class EvidenceError(BitExactError, ValueError):
    """An entry, checkpoint or bundle could not be built as asked."""
