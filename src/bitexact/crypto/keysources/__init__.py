"""Capture key sources: a key file, a KMS-encrypted file, an AWS KMS HMAC key, a PKCS#11 token.

The capture policy's ``hash_only_key`` and ``retired_keys`` entries are key
specs; :func:`load_capture_key` turns one into an :class:`HmacKey`:

    {"file": PATH}                  64 hex characters, owner-only, held in process
    {"kms_ciphertext": PATH}        a KMS ciphertext of the 32 bytes, decrypted once
    {"kms_hmac": KEY}               every HMAC is a KMS GenerateMac (HMAC_SHA_256)
    {"pkcs11": {"lib": PATH, "slot": N, "label": L, "pin_env": VAR}}
                                    every HMAC is CKM_SHA256_HMAC in the token

KMS and PKCS#11 support import their client libraries (boto3,
python-pkcs11) only when a spec asks for them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bitexact.crypto.keysources.base import (
    KEY_ID_MESSAGE,
    MAX_MESSAGE_BYTES,
    HmacKey,
    KeySourceError,
    KeyUnavailableError,
    MessageSizeError,
    key_id_of,
)
from bitexact.crypto.keysources.file import (
    InProcessKey,
    looks_like_a_key,
    generate_key_file,
    load_key_env,
    load_key_file,
)

SOURCES = ("file", "kms_ciphertext", "kms_hmac", "pkcs11")
_PKCS11_FIELDS = ("lib", "slot", "label", "pin_env")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Said instead of quoting a string that looks like a key: the key itself pasted into the policy.
KEY_NOT_QUOTED = "64 hex characters, which look like a key itself (not quoted; the key never goes in the policy)"


def _text(value: object, where: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise KeySourceError(f"{where}: expected {what}, found {_describe(value)}")
    if "\x00" in value:  # no path, key id or label holds one; the OS would refuse it with a bare ValueError
        raise KeySourceError(f"{where}: expected {what}, found one holding U+0000")
    return value


def _reference(value: str, where: str, what: str, *, a_path: bool) -> str:
    """``value`` (a key file's path, a KMS key's reference), refused without quoting it when it holds what
    looks like a key: the key itself, pasted where its reference goes (a path that exists is a path)."""
    if looks_like_a_key(value) and not (a_path and Path(value).exists()):
        raise KeySourceError(f"{where}: expected {what}, found {KEY_NOT_QUOTED}")
    return value


def _describe(value: object) -> str:
    if isinstance(value, str):
        if not value.strip():
            return "an empty string"
        return KEY_NOT_QUOTED if looks_like_a_key(value) else repr(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return {"dict": "an object", "list": "an array"}.get(type(value).__name__, type(value).__name__)


def _describe_type(value: object) -> str:
    return {"dict": "an object", "list": "an array", "NoneType": "null"}.get(type(value).__name__, type(value).__name__)


def _pkcs11_spec(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise KeySourceError(f"{where}: expected an object with lib, slot, label and pin_env, "
                             f"found {_describe(value)}")
    unknown = sorted(set(value) - set(_PKCS11_FIELDS))
    if unknown:
        raise KeySourceError(f"{where}.{unknown[0]}: unknown field "
                             "(expected lib, slot, label, pin_env)")
    missing = [name for name in _PKCS11_FIELDS if name not in value]
    if missing:
        raise KeySourceError(f"{where}.{missing[0]}: required field is missing")
    slot = value["slot"]
    if isinstance(slot, bool) or not isinstance(slot, int) or slot < 0:
        raise KeySourceError(f"{where}.slot: expected a whole number >= 0, found {_describe(slot)}")
    pin_env = value["pin_env"]
    # Never quoted: what stands where the variable's name goes is most likely the PIN itself.
    if not isinstance(pin_env, str) or not _ENV_NAME.fullmatch(pin_env):
        found = f"a {'string' if isinstance(pin_env, str) else _describe_type(pin_env)} of {len(str(pin_env))} characters"
        raise KeySourceError(f"{where}.pin_env: expected the name of an environment variable, found {found},"
                             " which is not one (the PIN itself never goes in the policy)")
    return {
        "lib": _reference(_text(value["lib"], f"{where}.lib", "the path of a PKCS#11 library"), f"{where}.lib",
                          "the path of a PKCS#11 library", a_path=True),
        "slot": slot,
        "label": _text(value["label"], f"{where}.label", "the label of a secret key"),
        "pin_env": pin_env,
    }


def load_capture_key(spec: dict[str, Any], *, field: str = "hash_only_key") -> HmacKey:
    """Load the capture key a policy's key spec names.

    ``field`` is where the spec sits in the policy (``"hash_only_key"``,
    ``"retired_keys[0]"``), so errors name it. Raises
    :class:`KeySourceError` for a malformed spec or a key that cannot be
    loaded; never returns a key it could not use once.
    """
    if not isinstance(spec, dict):
        raise KeySourceError(f"{field}: expected an object with one of {', '.join(SOURCES)}, "
                             f"found {_describe(spec)}")
    unknown = sorted(set(spec) - set(SOURCES))
    if unknown:
        if looks_like_a_key(unknown[0]):
            raise KeySourceError(f"{field}: unknown key source of {KEY_NOT_QUOTED} "
                                 f"(expected one of {', '.join(SOURCES)})")
        raise KeySourceError(f"{field}.{unknown[0]}: unknown key source "
                             f"(expected one of {', '.join(SOURCES)})")
    if len(spec) != 1:
        raise KeySourceError(f"{field}: expected exactly one of {', '.join(SOURCES)}, found "
                             + (", ".join(sorted(spec)) if spec else "none"))
    (kind, value), = spec.items()
    where = f"{field}.{kind}"
    if kind == "file":
        return load_key_file(Path(_text(value, where, "a file path")))
    if kind == "kms_ciphertext":
        from bitexact.crypto.keysources.kms import load_kms_ciphertext

        return load_kms_ciphertext(Path(_reference(_text(value, where, "a file path"), where, "a file path",
                                                   a_path=True)))
    if kind == "kms_hmac":
        from bitexact.crypto.keysources.kms import load_kms_hmac

        what = "a KMS key id, ARN or alias"
        return load_kms_hmac(_reference(_text(value, where, what), where, what, a_path=False))
    from bitexact.crypto.keysources.pkcs11 import load_pkcs11_key

    return load_pkcs11_key(**_pkcs11_spec(value, where), where=where)


__all__ = [
    "KEY_ID_MESSAGE",
    "MAX_MESSAGE_BYTES",
    "SOURCES",
    "KEY_NOT_QUOTED",
    "looks_like_a_key",
    "HmacKey",
    "InProcessKey",
    "KeySourceError",
    "KeyUnavailableError",
    "MessageSizeError",
    "generate_key_file",
    "key_id_of",
    "load_capture_key",
    "load_key_env",
    "load_key_file",
]
