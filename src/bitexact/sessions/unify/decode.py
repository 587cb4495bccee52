"""Strict decoding of artifact JSON and JSONL with explicit warnings (T-UAS-059).

Source lines are decoded by ``orjson`` first (UAS 3.5 names no
duplicate-key rule for runtime logs, and the reference JavaScript and Go
readers take the last duplicate, as orjson does); every line orjson refuses,
or could decode lossily, goes through ``bitexact.canon.loads`` (the
project's strict reader), which either accepts it exactly or names the
fault.  "Lossily" covers the two places orjson differs from the strict
reader on valid input: integers past 64 bits (orjson yields a float) and
nesting deeper than the strict reader's 128 levels - so every value
decoded is one the project's own strict readers accept (``SourceBuilder.add``
then keeps each written record within those 128 levels).

A malformed JSONL line produces one warning naming the original 1-based
line number (blank and malformed lines still count) and the cause, never the
text, and decoding continues with the next line.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import orjson

from bitexact.canon import loads as strict_loads
from bitexact.errors import StrictJSONError
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.project import MISSING

_LONG_RUN = 19
_LONG_DIGITS = re.compile(rb"[0-9]{%d}" % _LONG_RUN)
"""A digit run orjson might decode as a float (beyond 64-bit integers)."""
_DIGIT_MAP = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_WINDOW = 1 << 20


def has_long_digit_run(payload: bytes) -> bool:
    """Whether ``payload`` holds a run of 19+ ASCII digits anywhere.

    A byte translation plus a substring search is several times faster than
    the equivalent regex over megabytes; windows overlap by the run length.
    """
    needle = b"0" * _LONG_RUN
    for start in range(0, max(len(payload), 1), _WINDOW):
        window = payload[start:start + _WINDOW + _LONG_RUN - 1]
        if needle in window.translate(_DIGIT_MAP):
            return True
    return False
_MAX_FAST_BRACKETS = 128
"""Lines with more opening brackets may nest past the strict depth limit."""


def loads(line: bytes, *, digits_checked: bool = False) -> Any:
    """Decode one JSON text exactly as the strict reader would, but fast.

    ``digits_checked``: the caller proved the text holds no long digit run
    (by scanning a whole payload once).  Raises ``StrictJSONError`` (from the
    strict reader) for anything it refuses.
    """
    if line.count(b"{") + line.count(b"[") < _MAX_FAST_BRACKETS and (
        digits_checked or _LONG_DIGITS.search(line) is None
    ):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass  # the strict reader names the fault (or accepts, e.g. lone surrogates)
    return strict_loads(line)


def _cause(exc: StrictJSONError) -> str:
    # The strict reader's messages can name keys (duplicate key 'x'); keep
    # only the class of fault so no payload text reaches a warning.
    message = exc.message
    for prefix in ("duplicate key", "invalid UTF-8", "nesting deeper", "non-finite"):
        if message.startswith(prefix):
            return prefix
    return "invalid JSON"


_UNDECODED: Any = object()


def blank(payload: bytes) -> bool:
    """``not payload.strip()`` without copying the payload (strip copies a whole source)."""
    return not payload or payload.isspace()


def json_lines(builder: SourceBuilder, payload: bytes) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Decoded JSON objects of a JSONL payload as ``(ordinal, line, record)``.

    ``ordinal`` counts decoded objects (the source's normalized array index).
    """
    # Whole-payload scans prove facts for every line at once: no long digit
    # run anywhere, and (usually) nothing the redactor could match.
    digits_checked = not has_long_digit_run(payload)
    may_redact = builder.may_redact(payload)
    ordinal = 0
    # BytesIO shares the payload's buffer: lines are produced one at a time
    # instead of a second, split copy of the whole file.
    for number, line in enumerate(io.BytesIO(payload), start=1):
        if line.isspace():
            continue
        record: Any = _UNDECODED
        # The common case inlined (no call per line); see ``loads``.  orjson reads the line with its LF (JSON
        # whitespace, as a CRLF's CR is), so the line is cut (a copy) only where its text is used.
        if line.count(b"{") + line.count(b"[") < _MAX_FAST_BRACKETS and (
            digits_checked or _LONG_DIGITS.search(line) is None
        ):
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
        if record is _UNDECODED:
            if line.endswith(b"\n"):
                line = line[:-1]
            try:
                record = strict_loads(line[:-1] if line.endswith(b"\r") else line)
            except StrictJSONError as exc:
                builder.warn("malformed_jsonl", f"line {number}: {_cause(exc)}; record skipped", number)
                continue
        if not isinstance(record, dict):
            builder.warn("malformed_jsonl", f"line {number}: not a JSON object; record skipped", number)
            continue
        builder.reading_line = number
        if may_redact:
            record = builder.redact(record, line[:-1] if line.endswith(b"\n") else line)
        yield ordinal, number, record
        ordinal += 1
    builder.reading_line = None


def json_object(builder: SourceBuilder, payload: bytes) -> dict[str, Any] | None:
    """The decoded JSON object, or None (with a warning) when malformed or not an object."""
    document = json_document(builder, payload)
    if document is MISSING:
        return None
    if not isinstance(document, dict):
        builder.warn("invalid_record", "expected a JSON object; source skipped")
        return None
    return document


def json_document(builder: SourceBuilder, payload: bytes) -> Any:
    """The decoded JSON document, or ``MISSING`` (with a warning) when malformed."""
    if blank(payload):
        return MISSING
    try:
        return builder.redact(strict_loads(payload), payload)
    except StrictJSONError as exc:
        builder.warn("malformed_json", f"{_cause(exc)}; source skipped")
        return MISSING
