"""ed25519 signing keys, key ids and strict verification (bundle spec §2.2).

Strict verification refuses small-order public keys and non-canonical
signatures (S >= L) before the RFC 8032 check, so two verifiers built on
different libraries agree on every signature.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bitexact.config import dangling
from bitexact.errors import KeyMaterialError
from bitexact.private_files import file_kind, write_private_file

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_KEY_HEX = re.compile(r"[0-9a-fA-F]{64}")
_SIG_HEX = re.compile(r"[0-9a-fA-F]{128}")
_MAX_PEM_BYTES = 64 * 1024
"""An ed25519 PKCS#8 PEM is 119 bytes; a key file past this is no key (``/dev/zero`` named by mistake)."""


def _blocked_encodings() -> frozenset[bytes]:
    # libsodium's small-order list (through 1.0.18), derived as the spec shows.
    p = _P
    d = -121665 * pow(121666, -1, p) % p

    def sqrt(a: int) -> int | None:
        r = pow(a, (p + 3) // 8, p)
        if r * r % p != a % p:
            r = r * pow(2, (p - 1) // 4, p) % p
        return r if r * r % p == a % p else None

    s = sqrt(1 + d)
    assert s is not None
    y8 = next(
        y for t in (s, p - s) if (y := sqrt((t - 1) * pow(d, -1, p) % p)) is not None
    )
    return frozenset(y.to_bytes(32, "little") for y in (0, 1, p - 1, p, p + 1, y8, p - y8))


_BLOCKED = _blocked_encodings()


def is_small_order(raw: bytes) -> bool:
    """True when ``raw`` encodes one of the blocked small-order points."""
    return raw[:31] + bytes([raw[31] & 0x7F]) in _BLOCKED


def key_id(public_key: bytes | str) -> str:
    """BLAKE2b with an 8-byte digest over the raw 32-byte public key."""
    raw = bytes.fromhex(public_key) if isinstance(public_key, str) else public_key
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


def verify_strict(public_key_hex: object, signature: object, message: bytes) -> bool:
    """The four-part strict ed25519 check of §2.2.

    ``signature`` is 128 hex characters, or the raw 64 bytes (DSSE decodes
    base64 first). Never raises: anything malformed is simply not valid.
    """
    if not isinstance(public_key_hex, str) or not _KEY_HEX.fullmatch(public_key_hex):
        return False
    if isinstance(signature, str):
        if not _SIG_HEX.fullmatch(signature):
            return False
        sig = bytes.fromhex(signature)
    elif isinstance(signature, (bytes, bytearray)) and len(signature) == 64:
        sig = bytes(signature)
    else:
        return False
    raw = bytes.fromhex(public_key_hex)
    if is_small_order(raw):
        return False
    if int.from_bytes(sig[32:], "little") >= _L:
        return False
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(sig, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _pem_refusal(exc: Exception) -> str:
    """Why cryptography refused a PEM key, in our words: its own message points at its FAQ's URL."""
    if isinstance(exc, TypeError):  # "Password was not given but private key is encrypted"
        return "it is encrypted with a password, and BitExact's keys never are"
    if isinstance(exc, UnsupportedAlgorithm):
        return "it holds a kind of key this build cannot read"
    if "Unable to load PEM file" in str(exc):
        return "no PEM block in it: damaged, empty, or another kind of file"
    return "its PEM block does not decode as a private key: damaged?"


@dataclass(frozen=True)
class SigningKey:
    """An ed25519 private key with its public half and key id."""

    private: Ed25519PrivateKey

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh key that is not small-order (ed25519 keygen never is; checked anyway)."""
        while True:
            key = cls(Ed25519PrivateKey.generate())
            if not is_small_order(key.public_raw):
                return key

    @classmethod
    def from_pem(cls, data: bytes, *, source: str = "key") -> SigningKey:
        """Load a PKCS#8 PEM private key."""
        try:
            private = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise KeyMaterialError(f"{source} is not a PEM private key ({_pem_refusal(exc)}): put the key"
                                   " file back from a backup of keys/") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise KeyMaterialError(
                f"{source} holds a {type(private).__name__}, not an ed25519 private key"
            )
        return cls(private)

    @classmethod
    def load(cls, path: Path, *, owner_only: bool = False, advice: str = "") -> SigningKey:
        """Read a key written by :meth:`save`. ``owner_only``: refuse a file others may read or write, as ssh
        refuses such a private key (a key that signs must be one only its owner could have used); ``advice``
        ends that refusal's message."""
        try:
            # O_NONBLOCK: a named pipe in the key's place opens at once (a plain open waited for a writer:
            # `keys show`, `export`, `verify RUN` and `health` hung), and is refused below.
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as file:
                mode = os.fstat(file.fileno()).st_mode
                if not stat.S_ISREG(mode):
                    raise KeyMaterialError(
                        f"key {path} is {file_kind(mode)}, not a regular file: move it away"
                        " and put the key file back (from a backup of keys/)"
                    )
                if owner_only and mode & (stat.S_IRWXG | stat.S_IRWXO):
                    raise KeyMaterialError(
                        f"key {path}: permissions {stat.S_IMODE(mode):04o} let others read or write it;"
                        f" it must be owner-only (chmod 600 {path}){advice}"
                    )
                data = file.read(_MAX_PEM_BYTES + 1)
        except FileNotFoundError:
            link = dangling(path)
            if link is not None:  # the link is in the way: `keys init` cannot make the key through it
                raise KeyMaterialError(
                    f"key {path}: {link} (an unmounted secrets volume?): restore the file it names, or remove"
                    " the link and run `bitexact keys init`"
                ) from None
            raise KeyMaterialError(
                f"no key at {path}: create one with `bitexact keys init`"
            ) from None
        except IsADirectoryError:  # opened, then refused by fdopen before the check above: named as the others
            raise KeyMaterialError(
                f"key {path} is a directory, not a regular file: move it away and put the key file back (from a"
                " backup of keys/)"
            ) from None
        except OSError as exc:
            raise KeyMaterialError(f"cannot read key {path}: {exc.strerror}") from None
        if len(data) > _MAX_PEM_BYTES:
            raise KeyMaterialError(f"key {path} is larger than any PEM ed25519 key ({_MAX_PEM_BYTES} bytes at most)")
        return cls.from_pem(data, source=str(path))

    def pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (what :meth:`save` writes)."""
        return self.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def save(self, path: Path) -> None:
        """Write the key as PEM, owner-only, refusing to overwrite an existing file."""
        pem = self.pem()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KeyMaterialError(f"cannot make the key directory {path.parent}: {exc.strerror or exc}") from None
        try:
            # Whole or absent under its name: a crash never leaves a half-written PEM that load refuses.
            write_private_file(path, pem)
        except FileExistsError:
            raise KeyMaterialError(
                f"{path} already exists: refusing to overwrite a key (move it away first)"
            ) from None
        except OSError as exc:  # a full disk, a read-only file system: nothing is left under the name
            raise KeyMaterialError(f"cannot write the key {path}: {exc.strerror or exc}") from None

    @property
    def public_raw(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @property
    def public_hex(self) -> str:
        return self.public_raw.hex()

    @property
    def key_id(self) -> str:
        return key_id(self.public_raw)

    def sign(self, message: bytes | bytearray) -> bytes:
        """The 64-byte signature over ``message``."""
        return self.private.sign(message)
