"""Canonical JSON (RFC 8785 with the bundle spec's additions) and the strict reader.

``canonicalize`` is the only place in BitExact that turns a value into the
bytes that get hashed or signed; ``loads`` is the only JSON reader any door
uses for untrusted input.
"""

from bitexact.canon.encode import (
    MAX_DEPTH,
    Streamed,
    canonical_chunks,
    canonical_plain,
    canonical_text,
    canonicalize,
    es6_number,
    orjson_order_holds,
)
from bitexact.canon.decode import (
    DEFAULT_MAX_BYTES,
    STACK_SAFE_DEPTH,
    loads,
    nested_deeper_than,
    read_limited,
    read_within,
)
from bitexact.errors import CanonicalizationError, StrictJSONError

__all__ = [
    "MAX_DEPTH",
    "DEFAULT_MAX_BYTES",
    "STACK_SAFE_DEPTH",
    "CanonicalizationError",
    "StrictJSONError",
    "Streamed",
    "canonical_chunks",
    "canonical_plain",
    "canonical_text",
    "canonicalize",
    "es6_number",
    "loads",
    "nested_deeper_than",
    "orjson_order_holds",
    "read_limited",
    "read_within",
]
