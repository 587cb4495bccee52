"""Helpers for the key source tests: the reference HMAC, the local KMS, the SoftHSM2 token.

Nothing here is skipped: a missing real part (boto3, python-pkcs11,
SoftHSM2) fails the test with what to install.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as crypto_hmac
from local_kms import KmsServer, KmsState

SOFTHSM_LIB = "/usr/lib/softhsm/libsofthsm2.so"
PIN = "4711-bitexact"
SO_PIN = "so-0815-bitexact"
PIN_ENV = "BITEXACT_TEST_TOKEN_PIN"
ID_MESSAGE = b"bitexact capture key id/1"


def reference_hmac(secret: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 by pyca/cryptography, independently of the code under test."""
    mac = crypto_hmac.HMAC(secret, hashes.SHA256())
    mac.update(message)
    return mac.finalize()


def require_boto3() -> None:
    try:
        import boto3  # noqa: F401
    except ImportError:
        pytest.fail("boto3 is not installed: .venv/bin/pip install boto3")


def require_softhsm() -> Any:
    missing = []
    if not shutil.which("softhsm2-util") or not os.path.exists(SOFTHSM_LIB):
        missing.append("SoftHSM2 (apt-get install -y softhsm2)")
    try:
        import pkcs11
    except ImportError:
        missing.append("python-pkcs11 (.venv/bin/pip install python-pkcs11)")
    if missing:
        pytest.fail("PKCS#11 tests need a real token: install " + " and ".join(missing))
    return pkcs11


# -- AWS KMS ---------------------------------------------------------------------------------

@dataclass
class Kms:
    state: KmsState
    server: KmsServer
    monkeypatch: pytest.MonkeyPatch
    extra: list[KmsServer] = field(default_factory=list)

    def restart(self) -> KmsServer:
        """A new server on the same port and keys (after ``server.stop()``)."""
        self.server = KmsServer(self.state, port=self.server.port)
        self.extra.append(self.server)
        return self.server

    def boto_client(self) -> Any:
        import boto3

        return boto3.client("kms", region_name=self.state.region, endpoint_url=self.server.endpoint)


# -- SoftHSM2 --------------------------------------------------------------------------------

@dataclass
class Token:
    """A SoftHSM2 token made for this test session, and what was put in it."""

    lib: str
    slot: int
    doomed_slot: int
    token_dir: Path
    secrets: dict[str, bytes]
    p11: Any

    def spec(self, label: str, slot: int | None = None) -> dict[str, Any]:
        return {"pkcs11": {"lib": self.lib, "slot": self.slot if slot is None else slot,
                           "label": label, "pin_env": PIN_ENV}}

    def admin_session(self, slot: int | None = None) -> Any:
        """A read-write session; login is per process, so reuse one if present."""
        p11 = self.p11
        lib = p11.lib(self.lib)
        token = next(s for s in lib.get_slots(token_present=True)
                     if s.slot_id == (self.slot if slot is None else slot)).get_token()
        try:
            return token.open(rw=True, user_pin=PIN)
        except p11.UserAlreadyLoggedIn:
            return token.open(rw=True)

    def reinitialize(self) -> None:
        """C_Finalize then C_Initialize: every session and login in this process is gone."""
        self.p11.lib(self.lib).reinitialize()


def import_secret(token: Token, session: Any, label: str, secret: bytes,
                  key_type: Any = None, sign: bool = True) -> None:
    p11 = token.p11
    A = p11.Attribute
    session.create_object({
        A.CLASS: p11.ObjectClass.SECRET_KEY,
        A.KEY_TYPE: key_type if key_type is not None else p11.KeyType.GENERIC_SECRET,
        A.VALUE: secret, A.LABEL: label, A.TOKEN: True, A.PRIVATE: True,
        A.SIGN: sign, A.VERIFY: sign, A.SENSITIVE: True, A.EXTRACTABLE: False,
    })


def init_token(conf_env: dict[str, str], label: str) -> None:
    subprocess.run(["softhsm2-util", "--init-token", "--free", "--label", label,
                    "--pin", PIN, "--so-pin", SO_PIN],
                   env=conf_env, check=True, capture_output=True, timeout=60)


