"""Capture keys in a PKCS#11 token: every HMAC is CKM_SHA256_HMAC inside the token.

``{"pkcs11": {"lib": PATH, "slot": N, "label": L, "pin_env": VAR}}`` names
the token's library, its slot by slot id (CK_SLOT_ID, as ``pkcs11-tool
--list-slots`` and ``softhsm2-util --show-slots`` print it), the label of a
secret key of type CKK_GENERIC_SECRET or CKK_SHA256_HMAC with CKA_SIGN, and
the environment variable that holds the user PIN. The PIN is read from the
environment at load (and again to reconnect), never from the policy.

Token calls run on one worker thread per key (a PKCS#11 session is not for
concurrent use), so a token that hangs costs a call CALL_TIMEOUT seconds,
never the process. Any failure (a closed session, a finalized library, a
removed token, a timeout) raises KeyUnavailableError; calls then fail at
once for COOL_OFF seconds, and the first call after that reconnects: a new
session, the key found again by label, and its key id checked, so a
different key under the same label is never used.

Login is per application in PKCS#11: when another key in the same token has
already logged this process in, the token does not check the PIN again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from bitexact.crypto.keysources.base import (
    KEY_ID_MESSAGE,
    CallRunner,
    GuardedCalls,
    KeySourceError,
    KeyUnavailableError,
    check_message,
    key_id_from_mac,
)
from bitexact.crypto.keysources.file import looks_like_a_key

CALL_TIMEOUT = 2.0
LOAD_TIMEOUT = 30.0
COOL_OFF = 30.0


@dataclass(frozen=True)
class Pkcs11Limits:
    """How long one token call may take, and how long to fail fast after a failure."""

    call_timeout: float = CALL_TIMEOUT
    load_timeout: float = LOAD_TIMEOUT
    cool_off: float = COOL_OFF


def _pkcs11() -> Any:
    try:
        import pkcs11
    except ImportError:
        raise KeySourceError("PKCS#11 key sources need python-pkcs11 (pip install python-pkcs11)"
                             ) from None
    return pkcs11


@dataclass(frozen=True)
class _Spec:
    lib: str
    slot: int
    label: str
    pin_env: str
    where: str

    def pin(self) -> str:
        pin = os.environ.get(self.pin_env)
        if not pin:
            raise KeySourceError(f"{self.where}.pin_env: environment variable {self.pin_env} "
                                 "is not set (it must hold the token's user PIN)")
        return pin


def _open_key(spec: _Spec) -> Any:
    """Find the secret key by label in a fresh, logged-in session."""
    p11 = _pkcs11()
    pin = spec.pin()
    try:
        lib = p11.lib(spec.lib)
    except Exception as exc:  # the wrapper raises several types for a bad library
        raise KeySourceError(f"{spec.where}.lib: cannot load PKCS#11 library {spec.lib}: "
                             f"{type(exc).__name__}: {exc}") from None
    slots = lib.get_slots(token_present=True)
    slot = next((s for s in slots if s.slot_id == spec.slot), None)
    if slot is None:
        present = ", ".join(f"{s.slot_id} ({s.get_token().label!r})" for s in slots) or "none"
        raise KeySourceError(f"{spec.where}.slot: no token in slot {spec.slot} "
                             f"(slots with a token: {present})")
    token = slot.get_token()
    try:
        session = token.open(user_pin=pin)
    except p11.UserAlreadyLoggedIn:
        # Login is per application: another key in this token already logged in.
        session = token.open()
    except (p11.PinIncorrect, p11.PinInvalid, p11.PinLenRange, p11.PinExpired,
            p11.PinLocked) as exc:
        raise KeySourceError(f"{spec.where}.pin_env: token {token.label!r} refused the PIN in "
                             f"{spec.pin_env} ({type(exc).__name__})") from None
    # Read the whole search here: a search left open holds the session's lock.
    found = list(session.get_objects({p11.Attribute.CLASS: p11.ObjectClass.SECRET_KEY,
                                      p11.Attribute.LABEL: spec.label}))
    if not found:
        # A label of 64 hex characters that names no key is most likely the key itself: never quoted.
        named = "64 hex characters (not quoted: they look like a key)" if looks_like_a_key(spec.label) \
            else repr(spec.label)
        raise KeySourceError(f"{spec.where}.label: no secret key labelled {named} in "
                             f"token {token.label!r} (slot {spec.slot})")
    if len(found) > 1:
        raise KeySourceError(f"{spec.where}.label: {len(found)} secret keys are labelled "
                             f"{spec.label!r} in token {token.label!r}; labels must be unique")
    key = found[0]
    allowed = (p11.KeyType.GENERIC_SECRET, p11.KeyType.SHA256_HMAC)
    if key.key_type not in allowed:
        raise KeySourceError(f"{spec.where}.label: key {spec.label!r} is a {key.key_type.name} "
                             "key; a capture key is CKK_GENERIC_SECRET or CKK_SHA256_HMAC")
    if not key[p11.Attribute.SIGN]:
        raise KeySourceError(f"{spec.where}.label: key {spec.label!r} does not allow CKA_SIGN, "
                             "so the token will not compute HMACs with it")
    try:
        length = key[p11.Attribute.VALUE_LEN]
    except (p11.AttributeTypeInvalid, p11.AttributeSensitive, NotImplementedError):
        length = None  # a token that does not say: its HMACs are checked for length when loaded
    if length is not None and length != 32:
        raise KeySourceError(f"{spec.where}.label: key {spec.label!r} is {length} bytes; a capture key is "
                             "32 bytes (256 bits), as a key file's 64 hex characters and a KMS key are")
    return key


def _sign(key: Any, message: bytes) -> bytes:
    p11 = _pkcs11()
    return bytes(key.sign(message, mechanism=p11.Mechanism.SHA256_HMAC))


class Pkcs11Key:
    """A capture key that never leaves its PKCS#11 token."""

    def __init__(self, spec: _Spec, limits: Pkcs11Limits) -> None:
        self._spec = spec
        self.source = f"PKCS#11 token slot {spec.slot} key {spec.label!r}"
        loader = CallRunner(f"bitexact-pkcs11-load-{spec.label}")
        try:
            self._key: Any = loader.run(lambda: _open_key(spec), limits.load_timeout)
            mac = loader.run(lambda: _sign(self._key, KEY_ID_MESSAGE), limits.call_timeout)
        except KeySourceError:
            raise
        except Exception as exc:  # the token failed while loading: the key cannot be used
            raise KeySourceError(f"{spec.where}: the token failed: {type(exc).__name__}: {exc}"
                                 ) from None
        finally:
            loader.retire()
        if len(mac) != 32:
            raise KeySourceError(f"{spec.where}: CKM_SHA256_HMAC gave {len(mac)} bytes, not 32")
        self.key_id: str = key_id_from_mac(mac)
        # One thread: a PKCS#11 session is not for concurrent use.
        self._calls = GuardedCalls(self.source, f"bitexact-pkcs11-{spec.label}",
                                   deadline=limits.call_timeout, cool_off=limits.cool_off)

    def __repr__(self) -> str:
        return f"Pkcs11Key(source={self.source!r}, key_id={self.key_id!r})"

    def _reconnect(self) -> Any:
        key = _open_key(self._spec)
        if key_id_from_mac(_sign(key, KEY_ID_MESSAGE)) != self.key_id:
            raise RuntimeError(f"the key labelled {self._spec.label!r} is no longer the key "
                               f"loaded (key id {self.key_id})")
        return key

    def _job(self, message: bytes) -> bytes:
        # Runs on the worker thread: after a failure, reconnect first.
        if self._key is None:
            self._key = self._reconnect()
        return _sign(self._key, message)

    def hmac_sha256(self, message: bytes) -> bytes:
        """CKM_SHA256_HMAC of ``message`` in the token; KeyUnavailableError if it fails."""
        data = check_message(message)
        try:
            return self._calls.run(lambda: self._job(data))
        except KeyUnavailableError:
            self._key = None  # the next attempt opens a new session and finds the key again
            raise


def load_pkcs11_key(lib: str, slot: int, label: str, pin_env: str, *,
                    where: str = "hash_only_key.pkcs11",
                    limits: Pkcs11Limits | None = None) -> Pkcs11Key:
    """Find a token's secret key by label and compute its key id in the token."""
    spec = _Spec(lib, slot, label, pin_env, where)
    spec.pin()  # a missing PIN variable is named before any library is loaded
    return Pkcs11Key(spec, limits or Pkcs11Limits())
