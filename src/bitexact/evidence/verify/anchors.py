"""External anchors: WORM and RFC 3161, each checked then bound to the chain (bundle spec §8, §12.1 step 9)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import verify_strict
from bitexact.evidence.verify.encodings import derives_key_id
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins
from bitexact.evidence.vocabulary import WORM_BODY_KEYS

HashAt = Callable[[int], "str | None"]


def check_anchors(
    anchors: Sequence[dict[str, Any]], run_id: str, count: int, hash_at: HashAt, pins: Pins
) -> None:
    """Check every anchor in array order; raises :class:`CheckFailed` with ``anchor {i}: ``."""
    for index, anchor in enumerate(anchors):
        try:
            _check_own(anchor, pins)
            _check_binding(anchor, run_id, count, hash_at)
        except CheckFailed as failure:
            raise failure.prefixed(f"anchor {index}: ") from None


def _check_own(anchor: dict[str, Any], pins: Pins) -> None:
    kind = anchor.get("type")
    if kind == "worm":
        check_worm(anchor, pins)
    elif kind == "rfc3161":
        # Imported here so that bundles without timestamps never need asn1crypto.
        from bitexact.evidence.verify.rfc3161 import check_rfc3161

        check_rfc3161(anchor, pins)
    else:
        raise CheckFailed(f"unknown anchor type {kind!r}")


def check_worm(anchor: dict[str, Any], pins: Pins) -> None:
    """A WORM anchor: recorder pin, signature over its 7 keys, then key id (§8)."""
    public_key = anchor.get("public_key")
    if not pins.trusts_recorder_key(public_key):
        if pins.exact_recorder_key:
            raise CheckFailed("worm anchor not signed by the trusted recorder key")
        raise CheckFailed("worm anchor not signed by a trusted recorder key")
    body = canonicalize({key: anchor.get(key) for key in WORM_BODY_KEYS})
    if not verify_strict(public_key, anchor.get("signature"), body):
        raise CheckFailed("worm anchor signature invalid")
    if not derives_key_id(anchor.get("key_id"), public_key):
        raise CheckFailed("worm anchor key_id does not derive from its public_key")


def _check_binding(anchor: dict[str, Any], run_id: str, count: int, hash_at: HashAt) -> None:
    if anchor.get("run_id") != run_id:
        raise CheckFailed("anchor run_id does not match the bundle")
    steps = anchor.get("steps")
    if type(steps) is not int or steps < 0:
        raise CheckFailed("anchor has a non-integer step count")
    if steps > count:
        raise CheckFailed(
            f"anchor attests {steps} steps but the bundle has {count} - truncated below an externally anchored head"
        )
    if steps > 0 and anchor.get("head_hash") != hash_at(steps - 1):
        raise CheckFailed("anchor head does not match the bundle chain at the anchored step")


def is_worm(anchor: dict[str, Any]) -> bool:
    return anchor.get("type") == "worm"


def is_rfc3161(anchor: dict[str, Any]) -> bool:
    return anchor.get("type") == "rfc3161"


def worm_covers_head(anchor: dict[str, Any], count: int) -> bool:
    """Whether a (verified) WORM anchor binds the whole chain."""
    steps = anchor.get("steps")
    return is_worm(anchor) and type(steps) is int and steps == count
