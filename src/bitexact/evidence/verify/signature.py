"""The detached bundle signature (bundle spec §9, §12.1 step 12)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import verify_strict
from bitexact.evidence.signature import signed_body
from bitexact.evidence.verify.encodings import derives_key_id, is_hex_string
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins


def check_signature(
    container: Mapping[str, Any], redactions: dict[str, list[str]], pins: Pins
) -> bool:
    """Check the signature if there is one; returns whether the bundle is signed."""
    signature = container.get("signature")
    if signature is None:
        if pins.bundle_pinned:
            raise CheckFailed("bundle is unsigned but a trusted key was required - refusing to verify")
        return False
    algorithm = signature.get("algorithm")
    if algorithm != "ed25519":
        raise CheckFailed(f"unsupported signature algorithm {algorithm!r}")
    public_key = signature.get("public_key")
    if not is_hex_string(public_key):
        raise CheckFailed("signature.public_key is not a hex string")
    if not is_hex_string(signature.get("signature")):
        raise CheckFailed("signature.signature is not a hex string")
    if "key_id" in signature and not derives_key_id(signature["key_id"], public_key):
        raise CheckFailed("signature key_id does not derive from its public_key")
    if not pins.trusts_bundle_key(public_key):
        if pins.exact_bundle_key:
            raise CheckFailed("signature public_key is not the trusted key")
        raise CheckFailed("signature public_key is not among the trusted keys")
    message = canonicalize(signed_body(container, signature, redactions))
    if not verify_strict(public_key, signature["signature"], message):
        raise CheckFailed("signature check failed - bundle altered after signing")
    return True
