"""The host key: the 256-bit key that seals this host's journals and spools.

Write-ahead copies of evidence that the capture policy has not yet run on
(the SDK's journal of a large entry, the proxy's stream journal, the
collector's spool) are sealed under a random key per file, and that key is
stored wrapped by the host key (:mod:`bitexact.crypto.sealed`).

The host key is the file ``BITEXACT_HOST_KEY`` names, or
``<data directory>.host.key`` beside the data directory (capture-controls.md,
"What else the policy reaches"). It is never inside the data directory, so a
copy of the store carries nothing that opens a journal. It is made owner-only
on first use, as 64 hex characters and a newline, and a file others may read
or write is refused, as ssh refuses a private key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from bitexact import config
from bitexact.errors import KeyMaterialError
from bitexact.private_files import write_private_file

ENV_VAR: Final[str] = "BITEXACT_HOST_KEY"
KEY_BYTES: Final[int] = 32
SUFFIX: Final[str] = ".host.key"
_KEY_ID_MESSAGE: Final[bytes] = b"bitexact host key id/1"
_MAX_FILE_BYTES: Final[int] = 4096


class HostKeyError(KeyMaterialError):
    """The host key file is missing where it must exist, misplaced, loose or malformed."""


@dataclass(frozen=True)
class HostKey:
    """The host key's bytes (never printed) and its id.

    The id is the first 16 bytes of HMAC-SHA256(key, "bitexact host key id/1")
    as hex: a keyed value, so it names the key without saying anything of it.
    """

    secret: bytes = field(repr=False)
    path: Path
    key_id: str = field(init=False)

    def __post_init__(self) -> None:
        if len(self.secret) != KEY_BYTES:
            raise HostKeyError(f"host key {self.path}: a host key is {KEY_BYTES} bytes, found {len(self.secret)}")
        mac = hmac.new(self.secret, _KEY_ID_MESSAGE, hashlib.sha256).digest()
        object.__setattr__(self, "key_id", mac[:16].hex())


def host_key_path(home: Path | str | None = None) -> Path:
    """Where the host key lives: ``BITEXACT_HOST_KEY``, else ``<home>.host.key`` beside ``home``."""
    explicit = os.environ.get(ENV_VAR, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    # Made absolute (lexically: a symlinked home keeps its key beside the link) so that "." or
    # "data/.." has a name of its own to put the suffix on.
    directory = Path(os.path.abspath(config.home(home)))
    return directory.parent / (directory.name + SUFFIX)


def load_host_key(home: Path | str | None = None, *, create: bool = True) -> HostKey:
    """The host key for the data directory ``home``, made on first use when ``create``.

    Raises :class:`HostKeyError` when the key would sit inside the data
    directory, when its permissions let others read or write it, or when it
    is not 64 hex characters. The message names the file, never the key.
    """
    directory = config.home(home)
    path = host_key_path(directory)
    if config.inside(path, directory):
        raise HostKeyError(
            f"host key {path} is inside the data directory {directory}: a copy of the store would carry "
            f"the key that opens its journals; set {ENV_VAR} to a path outside it"
        )
    try:
        if create and not path.exists():
            _create(path)
        return HostKey(_read(path), path)
    except HostKeyError as exc:
        if os.environ.get(ENV_VAR, "").strip():  # the file came from the setting: name the setting to fix
            raise HostKeyError(f"{exc} (the file {ENV_VAR} names)") from None
        raise


def read_host_key(path: Path) -> HostKey:
    """The host key in the file at ``path``, with the checks :func:`load_host_key` makes on the host's own.

    For opening a journal copied from another host with that host's key file
    (``bitexact capture journal --host-key``). Raises :class:`HostKeyError`
    when the file is missing, not owner-only, or not 64 hex characters.
    """
    return HostKey(_read(path), path)


def _create(path: Path) -> None:
    """Make the key whole under a temporary name, then link it into place.

    The link either makes the key or finds another process's: the final name
    never shows a half-written key to a process reading it at that moment.
    """
    secret = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HostKeyError(f"host key {path}: cannot create: {exc.strerror or exc}") from None
    try:
        write_private_file(path, secret.hex().encode("ascii") + b"\n")
    except FileExistsError:
        return  # another process or thread made it first; read theirs
    except OSError as exc:
        raise HostKeyError(f"host key {path}: cannot create: {exc.strerror or exc}") from None


def _read(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        link = config.dangling(path)
        if link is not None:  # the link is in the way: no recording can make the key there
            raise HostKeyError(f"host key {path}: {link} (a recording cannot make it through the link): create"
                               " the file it names, or remove the link") from None
        raise HostKeyError(f"host key {path}: no such file (it is made on first use by a recording)") from None
    except OSError as exc:
        raise HostKeyError(f"host key {path}: cannot open: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise HostKeyError(f"host key {path}: not a regular file")
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise HostKeyError(
                f"host key {path}: permissions {stat.S_IMODE(mode):04o} let others read or write it; "
                f"it must be owner-only (chmod 600 {path})"
            )
        data = os.read(fd, _MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    text = data.strip()
    if len(data) > _MAX_FILE_BYTES or len(text) != 2 * KEY_BYTES:
        raise HostKeyError(f"host key {path}: expected {2 * KEY_BYTES} hex characters")
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise HostKeyError(f"host key {path}: expected {2 * KEY_BYTES} hex characters, found others") from None
