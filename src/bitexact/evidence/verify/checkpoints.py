"""Recorder checkpoints: each one checked in the order of bundle spec §12.1 step 8 (rules of §7)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash, verify_strict
from bitexact.evidence.checkpoint import checkpoint_body
from bitexact.evidence.verify.encodings import derives_key_id
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins
from bitexact.evidence.vocabulary import ALGORITHMS, GENESIS

HashAt = Callable[[int], "str | None"]


def check_checkpoints(
    checkpoints: Sequence[dict[str, Any]], run_id: str, count: int, hash_at: HashAt, pins: Pins
) -> None:
    """Check every checkpoint in array order; raises :class:`CheckFailed` with ``checkpoint {i}: ``."""
    expected_prev = GENESIS
    for index, checkpoint in enumerate(checkpoints):
        try:
            _check_one(index, checkpoint, run_id, count, hash_at, pins, expected_prev)
        except CheckFailed as failure:
            raise failure.prefixed(f"checkpoint {index}: ") from None
        # Chained under the previous checkpoint's own alg, checked supported above.
        expected_prev = chain_hash(checkpoint["alg"], canonicalize(checkpoint_body(checkpoint)))


def _check_one(
    index: int,
    checkpoint: dict[str, Any],
    run_id: str,
    count: int,
    hash_at: HashAt,
    pins: Pins,
    expected_prev: str,
) -> None:
    cp_run_id = checkpoint.get("run_id")
    if cp_run_id != run_id:
        raise CheckFailed(f"run_id {cp_run_id!r} does not match bundle run_id")
    seq = checkpoint.get("seq")
    if type(seq) is not int or seq != index:
        raise CheckFailed("sequence gap")
    if checkpoint.get("prev_checkpoint") != expected_prev:
        raise CheckFailed("checkpoint chain broken")
    public_key = checkpoint.get("public_key")
    if not pins.trusts_recorder_key(public_key):
        if pins.exact_recorder_key:
            raise CheckFailed("not signed by the trusted recorder key")
        raise CheckFailed("not signed by a trusted recorder key")
    alg = checkpoint.get("alg")
    if type(alg) is not str or alg not in ALGORITHMS:
        raise CheckFailed(f"unsupported hash algorithm {alg!r}")
    if not derives_key_id(checkpoint.get("key_id"), public_key):
        raise CheckFailed("key_id does not derive from its public_key")
    message = canonicalize(checkpoint_body(checkpoint))
    if not verify_strict(public_key, checkpoint.get("signature"), message):
        raise CheckFailed("signature invalid")
    steps = checkpoint.get("steps", 0)
    if type(steps) is not int:
        raise CheckFailed(f"non-integer step count {steps!r}")
    if steps > count:
        raise CheckFailed(
            f"attests {steps} steps but the bundle has {count} - history removed below a signed checkpoint"
        )
    if steps > 0 and checkpoint.get("head_hash") != hash_at(steps - 1):
        raise CheckFailed(f"attested head does not match the chain at step {steps - 1}")


def covers_head(checkpoint: dict[str, Any], count: int) -> bool:
    """Whether a (verified) checkpoint attests the whole chain."""
    steps = checkpoint.get("steps", 0)
    return type(steps) is int and steps == count
