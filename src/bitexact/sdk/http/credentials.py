"""The credential rule for what a wrapped client records of a URL and its headers.

The rule itself is the capture layer's (:mod:`bitexact.capture.urls`, the
protocol's ``credential_keys``): a credential query parameter's value and
any user info are recorded as ``[redacted]`` (URL-encoded), every other
byte as sent; a header named in the credential table (or ``Cookie``,
``Set-Cookie``, ``Proxy-Authorization``) as ``[redacted]``, and a URL-valued
header (``Location``...) by the URL rule, as each absolute URL in any other header.
Here it is shaped for an ``http_call``: header names lower-cased, repeats
joined by ``, ``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from bitexact.capture.detectors.base import ascii_lower
from bitexact.capture.detectors.credentials import CREDENTIAL_KEYS as _TABLE
from bitexact.capture.urls import REDACTED, redact_headers, redact_url

CREDENTIAL_KEYS: Final[frozenset[str]] = frozenset(_TABLE)


def record_url(url: str) -> str:
    """``url`` as a wrapped client records it (the vectors' ``recorded_urls``)."""
    return redact_url(url)


def record_headers(headers: Iterable[tuple[str, str | bytes]] | Mapping[str, str | bytes]) -> dict[str, str]:
    """Headers as recorded: lower-case names, repeats joined by ``, ``, credentials as ``[redacted]``."""
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    recorded: dict[str, str] = {}
    for name, value in redact_headers(pairs):
        key = ascii_lower(name.decode("latin-1") if isinstance(name, bytes) else str(name))
        # A header sent as bytes is recorded as the text it is on the wire (HTTP headers are Latin-1).
        shown = value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else str(value)
        recorded[key] = f"{recorded[key]}, {shown}" if key in recorded and shown != REDACTED else shown
    return recorded
