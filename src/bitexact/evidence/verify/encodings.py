"""Strict decoders for the hex and base64 text a bundle carries (§2.2, §8, §10.2)."""

from __future__ import annotations

import base64
import binascii
import re

from bitexact.crypto import key_id as derive_key_id

# Standard alphabet, padded, no whitespace: what "decoded strictly" admits.
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")


def strict_b64decode(text: object) -> bytes | None:
    """The bytes of standard padded base64, or ``None`` for anything else."""
    if not isinstance(text, str) or not _BASE64.fullmatch(text):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def is_hex_string(value: object) -> bool:
    """A non-empty string of hex digit pairs (either case)."""
    return isinstance(value, str) and _HEX.fullmatch(value) is not None


def derives_key_id(key_id: object, public_key: object) -> bool:
    """Whether ``key_id`` is BLAKE2b-64 of the raw bytes of hex ``public_key`` (§2.2)."""
    if not isinstance(public_key, str):
        return False
    try:
        return key_id == derive_key_id(public_key)
    except ValueError:  # not hex: nothing derives from it
        return False
