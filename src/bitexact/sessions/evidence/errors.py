"""What an import refuses, typed."""

from __future__ import annotations

from bitexact.errors import BitExactError


class SessionImportError(BitExactError):
    """A session cannot be imported; the message says why and what to do."""


class SessionInputError(SessionImportError, ValueError):
    """The input cannot be read as a session (unreadable, not UTF-8, no events, unsupported format)."""


class AlreadyImportedError(SessionImportError):
    """These exact bytes were imported before; ``run_id`` names the earlier run."""

    def __init__(self, message: str, *, run_id: str, sealed: bool) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.sealed = sealed


class RunIdTakenError(SessionImportError):
    """``--run-id`` names a run that already exists."""

    def __init__(self, message: str, *, run_id: str) -> None:
        super().__init__(message)
        self.run_id = run_id
