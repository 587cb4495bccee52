"""Chain hashes and salted field commitments (bundle spec §2.1)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
from collections.abc import Callable
from typing import Any, Final, Literal

from bitexact.canon import canonicalize
from bitexact.config import SettingError
from bitexact.errors import BitExactError

HashAlg = Literal["blake2b-256", "sha256"]
ALGORITHMS: Final[tuple[str, ...]] = ("blake2b-256", "sha256")
GENESIS: Final[str] = "0" * 64
SALT_BYTES: Final[int] = 16


class HashSettingError(SettingError, BitExactError):
    """``BITEXACT_HASH_ALG`` names no supported hash (a setting error: its message names the variable)."""


def default_alg() -> HashAlg:
    """The hash for new entries: blake2b-256, or sha256 when ``BITEXACT_HASH_ALG=sha256``."""
    raw = os.environ.get("BITEXACT_HASH_ALG", "blake2b-256")
    chosen = raw.strip().lower() or "blake2b-256"
    if chosen == "blake2b-256":
        return "blake2b-256"
    if chosen == "sha256":
        return "sha256"
    raise HashSettingError(
        f"BITEXACT_HASH_ALG={raw!r} is not a supported hash: use blake2b-256 (default) or sha256"
    )


def chain_hash(alg: str, data: bytes) -> str:
    """``H(alg, data)`` as 64 lowercase hex characters."""
    if alg == "blake2b-256":
        return hashlib.blake2b(data, digest_size=32).hexdigest()
    if alg == "sha256":
        return hashlib.sha256(data).hexdigest()
    raise ValueError(f"unsupported hash algorithm {alg!r}")


def commitment_of_bytes(alg: str, salt: bytes, canonical: bytes) -> str:
    """The commitment to already-canonical bytes under ``salt``."""
    if alg == "blake2b-256":
        return hashlib.blake2b(canonical, digest_size=32, key=salt).hexdigest()
    if alg == "sha256":
        return hmac.new(salt, canonical, hashlib.sha256).hexdigest()
    raise ValueError(f"unsupported hash algorithm {alg!r}")


def _blake2b_commitment(salt: bytes, canonical: bytes) -> str:
    return hashlib.blake2b(canonical, digest_size=32, key=salt).hexdigest()


def _sha256_commitment(salt: bytes, canonical: bytes) -> str:
    return hmac.new(salt, canonical, hashlib.sha256).hexdigest()


def committer(alg: str) -> Callable[[bytes, bytes], str]:
    """``commitment_of_bytes`` with ``alg`` chosen once, for an entry's many paths (one call each, not two).

    An unsupported ``alg`` gives the general function, which refuses it at its first use as before.
    """
    if alg == "blake2b-256":
        return _blake2b_commitment
    if alg == "sha256":
        return _sha256_commitment
    return functools.partial(commitment_of_bytes, alg)


def commitment(alg: str, salt: bytes, value: Any) -> str:
    """The commitment to ``value``: keyed BLAKE2b or HMAC-SHA256 over its canonical bytes."""
    return commitment_of_bytes(alg, salt, canonicalize(value))


def new_salt() -> bytes:
    """A fresh 16-byte CSPRNG salt."""
    return os.urandom(SALT_BYTES)


def new_salt_pool(count: int) -> bytes:
    """``count`` fresh 16-byte CSPRNG salts end to end, from one read of the system's generator: salt ``i`` is
    ``pool[16 * i : 16 * (i + 1)]`` (:func:`new_salts` as one bytes object, sliced where it is used)."""
    return os.urandom(SALT_BYTES * count)


def new_salts(count: int) -> list[bytes]:
    """``count`` fresh 16-byte CSPRNG salts, from one read of the system's generator.

    One ``getrandom`` call instead of one per salt: an entry has a salt per
    committed path, and each call cost about as much as hashing the field.
    """
    pool = os.urandom(SALT_BYTES * count)
    return [pool[i : i + SALT_BYTES] for i in range(0, len(pool), SALT_BYTES)]
