"""Capture keys held in the process: a key file of 64 hex characters.

A key file holds the 32-byte key as 64 hex characters (either case), with
any surrounding whitespace. It must be owner-only: a key file that its group
or anyone else can read or write is refused at load (as ssh refuses a
private key), because a capture key read by someone else makes every
hash-only field guessable by them. ``chmod 600 FILE`` fixes it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from bitexact.crypto.keysources.base import KEY_BYTES, KeySourceError, check_message, key_id_of
from bitexact.private_files import write_private_file

ENV_VAR = "BITEXACT_CAPTURE_KEY"
# A key file is 64 characters and a newline; anything far larger is not one,
# and is not read into memory whole.
_MAX_FILE_BYTES = 4096
_HEX = frozenset(b"0123456789abcdefABCDEF")


@dataclass(frozen=True)
class InProcessKey:
    """A capture key whose bytes this process holds (file or KMS-decrypted)."""

    secret: bytes = field(repr=False)
    source: str
    key_id: str = field(init=False)

    def __post_init__(self) -> None:
        if len(self.secret) != KEY_BYTES:
            raise KeySourceError(
                f"{self.source}: a capture key is {KEY_BYTES} bytes, found {len(self.secret)}"
            )
        object.__setattr__(self, "key_id", key_id_of(self.secret))

    def hmac_sha256(self, message: bytes) -> bytes:
        """HMAC-SHA256 in process; never raises KeyUnavailableError."""
        return hmac.new(self.secret, check_message(message), hashlib.sha256).digest()


def _check_permissions(path: Path, fd: int, where: str, others_may_read: bool) -> None:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise KeySourceError(f"{where}: not a regular file")
    if os.name == "nt":  # POSIX mode bits mean nothing there; ACLs are the user's job
        return
    if others_may_read:
        if mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise KeySourceError(
                f"{where}: permissions {stat.S_IMODE(mode):04o} let others replace the key; "
                f"remove group and world write (chmod go-w {path})"
            )
    elif mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeySourceError(
            f"{where}: permissions {stat.S_IMODE(mode):04o} let others read or write the key; "
            f"it must be owner-only (chmod 600 {path})"
        )


def parse_key_hex(data: bytes, where: str) -> bytes:
    """The 32 key bytes from a key file's contents; errors never quote the key."""
    text = data.strip()
    bad = next((i for i, b in enumerate(text) if b not in _HEX), None)
    if bad is not None:
        raise KeySourceError(
            f"{where}: expected 64 hex characters, found a character that is not hex "
            f"at position {bad + 1}"
        )
    if len(text) != 2 * KEY_BYTES:
        raise KeySourceError(
            f"{where}: expected {2 * KEY_BYTES} hex characters, found {len(text)}"
        )
    return bytes.fromhex(text.decode("ascii"))


def read_private_file(
    path: Path, where: str, limit: int = _MAX_FILE_BYTES, *, others_may_read: bool = False
) -> bytes:
    """Read a key file, refusing loose permissions and oversize files.

    Owner-only unless ``others_may_read`` (a KMS ciphertext, which KMS
    guards); never writable by group or others either way.
    """
    try:
        # O_NONBLOCK: a FIFO put where the key should be must not hang the load.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise KeySourceError(
            f"{where}: no such file (make one with `bitexact capture keygen -o {path}`)"
        ) from None
    except OSError as exc:
        raise KeySourceError(f"{where}: cannot open: {exc.strerror}") from None
    try:
        _check_permissions(path, fd, where, others_may_read)
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise KeySourceError(f"{where}: larger than {limit} bytes, not a key file")
    return data


def load_key_file(path: Path | str) -> InProcessKey:
    """Load a capture key file (64 hex characters, owner-only)."""
    if looks_like_a_key(str(path)) and not Path(path).exists():
        # The key itself given where its file's path goes: never quoted, not even in this refusal.
        raise KeySourceError("capture key file: the value given holds what looks like a key (64 hex characters),"
                             " not the path of a key file; give the file's path, never the key")
    path = Path(path)
    where = f"capture key file {path}"
    secret = parse_key_hex(read_private_file(path, where), where)
    return InProcessKey(secret, where)


def looks_like_a_key(text: str) -> bool:
    """Whether ``text`` is 64 hex characters: the key itself, pasted where a path or reference goes, which
    an error must never quote."""
    stripped = text.strip()
    return len(stripped) == 2 * KEY_BYTES and all(c in "0123456789abcdefABCDEF" for c in stripped)


def generate_key_file(path: Path) -> str:
    """Write a fresh random key as 64 hex + newline, owner-only; return its key id.

    Refuses to overwrite an existing file: replacing a capture key would
    leave every field committed under it unopenable.
    """
    path = Path(path)
    secret = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a directory goes: not "already exists" for the key
        raise KeySourceError(f"capture key file {path}: cannot create {path.parent}: "
                             f"{exc.strerror or exc}") from None
    try:
        # Whole or absent under its name: a crash never leaves half a key that load refuses.
        write_private_file(path, secret.hex().encode("ascii") + b"\n")
    except FileExistsError:
        raise KeySourceError(
            f"capture key file {path}: already exists; refusing to overwrite a key "
            "(rotate by writing a new file and moving this one to retired_keys)"
        ) from None
    except OSError as exc:
        raise KeySourceError(f"capture key file {path}: cannot create: {exc.strerror}") from None
    return key_id_of(secret)


def load_key_env() -> InProcessKey | None:
    """The key file ``BITEXACT_CAPTURE_KEY`` names, or ``None`` when it is unset or empty."""
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return None
    try:
        return load_key_file(value)
    except KeySourceError as exc:
        raise KeySourceError(f"{ENV_VAR}: {exc}") from None
