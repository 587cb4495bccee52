"""The capture block: what an entry declares about the fields the policy did not keep as sent.

The block is the entry's top-level ``capture`` key, so it is inside the
entry hash and every signature (conforming verifiers hash unknown keys).
Its schema is in docs/capture.md. This module holds the keyed parts:

**Hash-only fields.** The field's value is replaced in ``data`` by the
placeholder ``"[hash-only]"`` (committed like any value), and the block
carries, under the field's path, the commitment
``commitment(alg, salt, value)`` (bundle-format.md §2.1) where

* ``salt = HMAC-SHA256(K, nonce || path)[:16]`` - ``nonce`` is 16 random
  bytes stored in the block as hex, ``path`` the block path in UTF-8 (a path
  longer than 4080 bytes is replaced by ``b"sha256:" || SHA-256(path)``, so
  the message stays within the 4096 bytes every key source accepts);
* for a linkable field, ``salt = HMAC-SHA256(K, b"bitexact capture
  linkable/1")[:16]`` - the key's alone, so equal values give equal
  commitments wherever they are committed under that key; no nonce.

With no key (or a key that stops answering) the salt is 16 random bytes
that are thrown away: the field can never be opened, and is declared
``capture_key_unavailable``.

**Withheld digests.** A gap's digest of content it did not store is keyed:
``HMAC-SHA256(K, nonce || SHA-256(content))`` with a fresh 16-byte nonce,
or dropped with no key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any, Final

from bitexact.capture.errors import CaptureKeyMismatchError, FieldNotOpenableError
from bitexact.crypto import commitment, new_salt

BLOCK_VERSION: Final[int] = 1
HASH_ONLY_PLACEHOLDER: Final[str] = "[hash-only]"
WITHHELD_PLACEHOLDER: Final[str] = "[withheld]"
WITHHELD_KEY: Final[str] = "[withheld key]"
LINKABLE_MESSAGE: Final[bytes] = b"bitexact capture linkable/1"
KEY_UNAVAILABLE: Final[str] = "capture_key_unavailable"
NONCE_BYTES: Final[int] = 16
_MAX_PATH_BYTES: Final[int] = 4096 - NONCE_BYTES


def _key_unavailable_error() -> type[BaseException]:
    # Imported late: the key sources are another layer's, loaded on demand.
    from bitexact.crypto.keysources import KeyUnavailableError

    return KeyUnavailableError


def salt_message(path: str, nonce: bytes | None) -> bytes:
    """The HMAC message whose first 16 output bytes are a hash-only field's salt."""
    if nonce is None:
        return LINKABLE_MESSAGE
    raw = path.encode("utf-8")
    if len(raw) > _MAX_PATH_BYTES:
        raw = b"sha256:" + hashlib.sha256(raw).digest()
    return nonce + raw


def field_salt(key: Any, path: str, nonce: bytes | None) -> bytes:
    """The salt of a hash-only field under ``key`` (an ``HmacKey``)."""
    return key.hmac_sha256(salt_message(path, nonce))[:16]


def commit_hash_only(
    value: Any, path: str, *, key: Any | None, linkable: bool, alg: str
) -> tuple[dict[str, Any], bool]:
    """The block declaration of a hash-only field, and whether the key was unavailable.

    The caller adds ``rule`` or ``hint``. Never raises for the key: a key
    that stops answering gives an unopenable commitment instead.
    """
    declaration: dict[str, Any] = {"mode": "hash-only", "alg": alg}
    if key is not None:
        nonce = None if linkable else os.urandom(NONCE_BYTES)
        try:
            salt = field_salt(key, path, nonce)
        except _key_unavailable_error():
            salt = None
        if salt is not None:
            declaration["key_id"] = key.key_id
            if nonce is not None:
                declaration["nonce"] = nonce.hex()
            if linkable:
                declaration["linkable"] = True
            declaration["commitment"] = commitment(alg, salt, value)
            return declaration, False
    # No key: a random salt, thrown away. Never openable, by anyone.
    declaration["commitment"] = commitment(alg, new_salt(), value)
    declaration["unopenable"] = KEY_UNAVAILABLE
    return declaration, True


def open_field(block_field: dict[str, Any], path: str, candidate: Any, key: Any) -> bool:
    """Whether ``candidate`` is the value a hash-only field committed (for ``verify --open``).

    ``block_field`` is the field's declaration from the entry's capture block,
    ``path`` its path there, ``key`` the capture key (an ``HmacKey``) it was
    committed under. Raises :class:`FieldNotOpenableError` for a field that is
    not hash-only or was committed with no key, and
    :class:`CaptureKeyMismatchError` for another key.
    """
    if not isinstance(block_field, dict) or block_field.get("mode") != "hash-only":
        raise FieldNotOpenableError(f"{path}: not a hash-only field")
    key_id = block_field.get("key_id")
    if not key_id or block_field.get("unopenable"):
        raise FieldNotOpenableError(f"{path}: committed with no capture key; it can never be opened")
    if key.key_id != key_id:
        raise CaptureKeyMismatchError(key_id, key.key_id)
    linkable = block_field.get("linkable") is True
    nonce_hex = block_field.get("nonce")
    if linkable:
        nonce = None
    elif not isinstance(nonce_hex, str) or len(nonce_hex) != 2 * NONCE_BYTES:
        raise FieldNotOpenableError(f"{path}: the declaration has no valid nonce")
    else:
        nonce = bytes.fromhex(nonce_hex)
    salt = field_salt(key, path, nonce)
    expected = commitment(block_field.get("alg", "blake2b-256"), salt, candidate)
    return hmac.compare_digest(expected, str(block_field.get("commitment", "")))


def withheld_digest(key: Any | None, content: bytes) -> dict[str, Any]:
    """The keyed digest of content a gap withholds, or the declared reason it was dropped."""
    return withheld_digest_of(key, hashlib.sha256(content).digest(), len(content))


def withheld_digest_of(key: Any | None, sha256: bytes, size: int) -> dict[str, Any]:
    """:func:`withheld_digest` of content known by its SHA-256 and length alone (a body that streamed past)."""
    if key is None:
        return {"bytes": size, "digest": "dropped: no capture key"}
    nonce = os.urandom(NONCE_BYTES)
    try:
        mac = key.hmac_sha256(nonce + sha256)
    except _key_unavailable_error():
        return {"bytes": size, "digest": "dropped: capture key unavailable"}
    return {"bytes": size, "keyed": mac.hex(), "nonce": nonce.hex(), "key_id": key.key_id}


def open_withheld(declaration: dict[str, Any], content: bytes, key: Any) -> bool:
    """Whether ``content`` (exact bytes) is what a withheld digest was computed over."""
    if "keyed" not in declaration:
        raise FieldNotOpenableError("the withheld digest was dropped; it can never be opened")
    if key.key_id != declaration.get("key_id"):
        raise CaptureKeyMismatchError(str(declaration.get("key_id")), key.key_id)
    nonce = bytes.fromhex(declaration["nonce"])
    mac = key.hmac_sha256(nonce + hashlib.sha256(content).digest())
    return hmac.compare_digest(mac.hex(), declaration["keyed"])
