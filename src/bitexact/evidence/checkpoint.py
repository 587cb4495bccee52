"""Signed checkpoints over the chain head (bundle spec §7)."""

from __future__ import annotations

from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import GENESIS, SigningKey, chain_hash
from bitexact.evidence.timefmt import now_iso
from bitexact.evidence.vocabulary import CHECKPOINT_BODY_KEYS

def checkpoint_body(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """The 7-key signed body; a missing key counts as ``null``."""
    return {key: checkpoint.get(key) for key in CHECKPOINT_BODY_KEYS}


def checkpoint_link(checkpoint: dict[str, Any]) -> str:
    """What the next checkpoint's ``prev_checkpoint`` must be."""
    return chain_hash(checkpoint["alg"], canonicalize(checkpoint_body(checkpoint)))


def make_checkpoint(
    *,
    previous: dict[str, Any] | None,
    run_id: str,
    steps: int,
    head_hash: str,
    alg: str,
    key: SigningKey,
) -> dict[str, Any]:
    """Sign the next checkpoint after ``previous`` (None for the first)."""
    body: dict[str, Any] = {
        "run_id": run_id,
        "seq": 0 if previous is None else previous["seq"] + 1,
        "steps": steps,
        "head_hash": head_hash,
        "prev_checkpoint": GENESIS if previous is None else checkpoint_link(previous),
        "alg": alg,
        "key_id": key.key_id,
    }
    signature = key.sign(canonicalize(body))
    return {**body, "ts": now_iso(), "public_key": key.public_hex, "signature": signature.hex()}
