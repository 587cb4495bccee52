"""Typed errors of the session parsers (callers catch types, never parse text)."""

from __future__ import annotations

from bitexact.errors import BitExactError


class SessionParseError(BitExactError, ValueError):
    """Base class of the session parsers' errors."""


class UnrecognizedFormatError(SessionParseError):
    """No supported engine signature was found in the input (T-UAS-017, 7.6).

    Raised by ``detect_engine``; ``parse`` reports the same condition as an
    empty trace with an "unrecognized format" diagnostic instead.
    """


class UnknownEngineError(SessionParseError):
    """The ``engine`` argument names no supported engine."""


class InvalidSessionInputError(SessionParseError, TypeError):
    """The ``text`` argument is not a ``str`` (decode bytes first)."""
