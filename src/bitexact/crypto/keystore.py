"""The recorder's signing keys on disk: the current key and every retired one.

Layout under the data directory::

    keys/recorder.key              current ed25519 key (PEM, 0600)
    keys/retired/<key_id>.key      keys rotated away from (still listed in trust files)

Rotation never deletes a key's public half, so every earlier run stays
verifiable: trust files list current and retired keys.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bitexact.config import dangling
from bitexact.crypto.ed25519 import SigningKey
from bitexact.errors import KeyMaterialError, StateRefusedError
from bitexact.private_files import fsync_directory, write_private_file


class RecorderKeyError(KeyMaterialError, StateRefusedError):
    """The data directory's recorder key is missing or unusable (a link to nowhere, others may read it, not
    a PEM key): a state of the data directory that `bitexact keys init` (or a chmod, or `keys rotate`)
    changes, not an input of the command that needed the key. Its message says which."""


@dataclass(frozen=True)
class PublicKeyInfo:
    key_id: str
    public_key: str
    status: str  # "current" | "retired" | "missing" (bitexact.recording.recorder_keys: the store's, its file gone)


class KeyStore:
    """The recorder key files under ``<home>/keys``."""

    def __init__(self, home: Path) -> None:
        self.dir = home / "keys"
        self.current_path = self.dir / "recorder.key"
        self.retired_dir = self.dir / "retired"

    def exists(self) -> bool:
        return self.current_path.exists()

    def _ensure_dir(self, directory: Path | None = None) -> None:
        directory = directory or self.dir
        try:
            self._ensure_home()
            directory.mkdir(parents=True, exist_ok=True)
            os.chmod(directory, 0o700)
        except OSError as exc:
            raise KeyMaterialError(
                f"cannot create {directory}: {exc.strerror or exc} (is a file in the way?)"
            ) from None

    def _ensure_home(self) -> None:
        """Create a missing data directory 0700, as the store does (docs/store.md): `keys init` is often
        the first command, and every later one keeps the mode of the directory it finds."""
        home = self.dir.parent
        if home.exists():
            return  # an existing one keeps its mode: it may be shared on purpose
        try:
            home.mkdir(mode=0o700, parents=True)
        except FileExistsError:
            return  # another process created it first
        os.chmod(home, 0o700)  # mkdir's mode passes through the umask

    @contextmanager
    def _rotating(self) -> Iterator[None]:
        """One rotation at a time, across processes: the move and the new key are one step for the others."""
        self._ensure_dir()
        fd = os.open(self.dir / ".rotate.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def init(self) -> SigningKey:
        """Create the recorder key; refuses when one exists (or a link to one that does not)."""
        if dangling(self.current_path):
            self.current()  # raises, naming the link and what it points to
        if self.current_path.exists():
            raise KeyMaterialError(
                f"a recorder key already exists at {self.current_path}: refusing to overwrite it"
                " (use `bitexact keys rotate` to replace it and keep old runs verifiable)"
            )
        self._ensure_dir()
        key = SigningKey.generate()
        key.save(self.current_path)
        return key

    def current(self) -> SigningKey:
        """The key that signs new checkpoints and bundles; refused (:class:`RecorderKeyError`) when it is
        missing or does not load, or when others may read or write its file."""
        try:
            return SigningKey.load(self.current_path, owner_only=True,
                                   advice="; if others may have read it, `bitexact keys rotate` replaces it")
        except KeyMaterialError as exc:  # the same words, typed as the state it is
            raise RecorderKeyError(str(exc)) from None

    def current_or_init(self) -> SigningKey:
        """The current key, creating it on first use (another process creating it first: that one)."""
        if self.exists() or os.path.islink(self.current_path):  # a link to nowhere: refused, naming it
            return self.current()
        try:
            return self.init()
        except KeyMaterialError:
            if self.exists():
                return self.current()  # the other process won the race: its key is the key
            raise

    def rotate(self) -> tuple[SigningKey, SigningKey]:
        """Retire the current key and make a new one; returns ``(old, new)``.

        Serialized with other rotations (a lock file in ``keys/``), and the
        retired copy is made with ``link``, which never replaces a file: a
        retired key is never overwritten, so every run it signed stays
        verifiable.
        """
        try:
            return self._rotate()
        except OSError as exc:  # a full disk mid-way: the current key is still current (see below)
            raise KeyMaterialError(f"cannot rotate the recorder key in {self.dir}: {exc.strerror or exc}") from None

    def _rotate(self) -> tuple[SigningKey, SigningKey]:
        self._ensure_dir(self.retired_dir)
        with self._rotating():
            old = SigningKey.load(self.current_path)  # a key others could read is retired all the same: the remedy
            target = self.retired_dir / f"{old.key_id}.key"
            try:
                os.link(self.current_path, target)
            except FileExistsError:
                # A rotation killed after this link left the same key retired: it goes on from here.
                # Anything else under that name is not ours to guess about.
                if target.read_bytes() != self.current_path.read_bytes():
                    raise KeyMaterialError(
                        f"{target} already exists and is not the current key: inspect {self.dir}"
                    ) from None
            fsync_directory(self.retired_dir)
            new = SigningKey.generate()
            # The new key replaces the current one in one rename: at no moment is there no current key.
            write_private_file(self.current_path, new.pem(), replace=True)
        return old, new

    def public_keys(self) -> list[PublicKeyInfo]:
        """Current key first, then retired keys by id."""
        keys: list[PublicKeyInfo] = []
        if self.exists() or os.path.islink(self.current_path):  # a link to nowhere: refused, naming it
            current = SigningKey.load(self.current_path)  # only its public half: a loose file's still lists
            keys.append(PublicKeyInfo(current.key_id, current.public_hex, "current"))
        if self.retired_dir.is_dir():
            for path in sorted(self.retired_dir.glob("*.key")):
                retired = SigningKey.load(path)
                if keys and retired.key_id == keys[0].key_id:
                    continue  # a rotation cut short after retiring the key it did not replace: still current
                keys.append(PublicKeyInfo(retired.key_id, retired.public_hex, "retired"))
        return keys
