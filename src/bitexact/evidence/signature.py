"""The detached bundle signature (bundle spec §9)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bitexact.canon import canonical_chunks
from bitexact.crypto import SigningKey
from bitexact.evidence.timefmt import now_iso


def signed_body(
    container: Mapping[str, Any], signature: Mapping[str, Any], redactions: dict[str, list[str]]
) -> dict[str, Any]:
    """What the signature covers: format, run_id, chain, signed_at, key_id, checkpoints,
    anchors when the container has them, and the redactions map when any entry has markers."""
    body: dict[str, Any] = {
        "format": container.get("format"),
        "run_id": container.get("run_id"),
        "chain": container.get("chain"),
    }
    for key in ("signed_at", "key_id"):
        if key in signature:
            body[key] = signature[key]
    for key in ("checkpoints", "anchors"):
        if key in container:
            body[key] = container[key]
    if redactions:
        body["redactions"] = redactions
    return body


def sign_container(
    container: dict[str, Any], redactions: dict[str, list[str]], key: SigningKey
) -> dict[str, Any]:
    """Sign ``container`` last, after checkpoints, anchors and markers are final."""
    signature: dict[str, Any] = {
        "algorithm": "ed25519",
        "key_id": key.key_id,
        "public_key": key.public_hex,
        "signed_at": now_iso(),
    }
    signature["signature"] = key.sign(signed_message(signed_body(container, signature, redactions))).hex()
    return signature


def signed_message(body: dict[str, Any]) -> bytearray:
    """The canonical bytes of a signed body whose checkpoints may be :class:`~bitexact.canon.Streamed`.

    ed25519 signs a message held whole, so the bytes are gathered once, in
    place: a streamed array (a JSONL header's checkpoints) is never held as
    parsed objects or as a list of pieces besides them.
    """
    message = bytearray()
    for chunk in canonical_chunks(body):
        message += chunk
    return message
