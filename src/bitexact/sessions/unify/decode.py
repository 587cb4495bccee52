"""Strict decoding of artifact JSON and JSONL with explicit warnings (T-UAS-059).

Untrusted JSON goes through ``bitexact.canon.loads`` (the project's strict
reader).  A malformed JSONL line produces one warning naming the original
1-based line number (blank and malformed lines still count) and the cause,
never the text, and decoding continues with the next line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bitexact.canon import loads
from bitexact.errors import StrictJSONError
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.project import MISSING


def _cause(exc: StrictJSONError) -> str:
    # The strict reader's messages can name keys (duplicate key 'x'); keep
    # only the class of fault so no payload text reaches a warning.
    message = exc.message
    for prefix in ("duplicate key", "invalid UTF-8", "nesting deeper", "non-finite"):
        if message.startswith(prefix):
            return prefix
    return "invalid JSON"


def json_lines(builder: SourceBuilder, payload: bytes) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Decoded JSON objects of a JSONL payload as ``(ordinal, line, record)``.

    ``ordinal`` counts decoded objects (the source's normalized array index).
    """
    ordinal = 0
    for number, raw in enumerate(payload.split(b"\n"), start=1):
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line.strip():
            continue
        try:
            record = loads(line)
        except StrictJSONError as exc:
            builder.warn("malformed_jsonl", f"line {number}: {_cause(exc)}; record skipped", number)
            continue
        if not isinstance(record, dict):
            builder.warn("malformed_jsonl", f"line {number}: not a JSON object; record skipped", number)
            continue
        yield ordinal, number, builder.redact(record, line)
        ordinal += 1


def json_document(builder: SourceBuilder, payload: bytes) -> Any:
    """The decoded JSON document, or ``MISSING`` (with a warning) when malformed."""
    if not payload.strip():
        return MISSING
    try:
        return builder.redact(loads(payload), payload)
    except StrictJSONError as exc:
        builder.warn("malformed_json", f"{_cause(exc)}; source skipped")
        return MISSING
