"""Custody hints an agent may give a field: stricter than the policy, or cleaned upstream.

The rule is the capture layer's (:mod:`bitexact.capture.hints`, the
protocol's ``custody_hints``): a path ``KEY`` or ``KEY.SUBKEY`` mapped to
``scrub``, ``hash-only``, ``scrubbed-upstream`` or ``scrubbed-upstream:TOOL``.
The SDK only checks them at the call (or where a tool is wrapped) and hands
them to the write path as ``hints=``; applying them is the capture policy's
work, never the SDK's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bitexact.capture.errors import HintError
from bitexact.capture.hints import parse_custody, parse_hint
from bitexact.sdk.errors import CustodyHintError
from bitexact.sdk.jsonable import written_key


def is_hint(value: object) -> bool:
    """Whether ``value`` is a custody hint the protocol defines."""
    try:
        parse_hint(value, "custody")
    except HintError:
        return False
    return True


def check_custody(custody: Mapping[str, Any] | None) -> dict[str, str] | None:
    """``custody`` as a plain ``{path: hint}`` dict, or :class:`CustodyHintError` naming the path."""
    if custody is None:
        return None
    plain = dict(custody) if isinstance(custody, Mapping) else custody
    try:
        parse_custody(plain)
    except HintError as exc:
        raise CustodyHintError(str(exc), field=exc.field) from None
    # A path names the keys as the entry writes them: a key the SDK writes as other text (a lone
    # surrogate, escaped) must be named the same way, or the hint would name nothing and go unheeded.
    written: dict[str, str] = {}
    for path, hint in plain.items():  # type: ignore[union-attr]
        key = written_key(path)
        if key in written:
            # Two paths the entry writes as one key: keeping either hint could loosen the other.
            raise CustodyHintError(f"custody names {key!r} twice once written as JSON text", field=str(path))
        written[key] = hint
    return written or None
