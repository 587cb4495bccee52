"""Hashes, field commitments, ed25519 keys and strict signature checks.

Nothing outside this package touches key material.
"""

from bitexact.crypto.hashes import (
    ALGORITHMS,
    GENESIS,
    HashAlg,
    chain_hash,
    commitment,
    default_alg,
    new_salt,
    new_salts,
)
from bitexact.crypto.ed25519 import (
    SigningKey,
    is_small_order,
    key_id,
    verify_strict,
)

__all__ = [
    "ALGORITHMS",
    "GENESIS",
    "HashAlg",
    "SigningKey",
    "chain_hash",
    "commitment",
    "default_alg",
    "is_small_order",
    "key_id",
    "new_salt",
    "new_salts",
    "verify_strict",
]
