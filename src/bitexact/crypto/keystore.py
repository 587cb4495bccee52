"""The recorder's signing keys on disk: the current key and every retired one.

Layout under the data directory::

    keys/recorder.key              current ed25519 key (PEM, 0600)
    keys/retired/<key_id>.key      keys rotated away from (PEM, 0600; still listed in trust files)
    keys/compromised.json          keys retired as compromised: public half and date only (0600)

Rotation never deletes a key's public half, so every earlier run stays
verifiable: trust files list current and retired keys. A key retired as
compromised (``keys rotate --compromised``, ``keys mark-compromised``) is
different: its private half is unlinked, so nothing signs with it again, and
only its public half and the date are kept, listed by ``keys show`` and left
out of trust files (a trust file has no validity window, so trusting it for
the runs before the date would trust a forgery dated before it too).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bitexact.canon import read_limited
from bitexact.config import dangling
from bitexact.crypto.ed25519 import SigningKey
from bitexact.errors import KeyMaterialError, StateRefusedError
from bitexact.private_files import file_kind, fsync_directory, write_private_file


class RecorderKeyError(KeyMaterialError, StateRefusedError):
    """The data directory's recorder key is missing or unusable (a link to nowhere, others may read it, not
    a PEM key): a state of the data directory that `bitexact keys init` (or a chmod, or `keys rotate`)
    changes, not an input of the command that needed the key. Its message says which."""


class CompromisedCurrentKeyError(RecorderKeyError):
    """The current key is recorded as compromised (a `keys rotate --compromised` cut short): it loads, but
    nothing may sign with it. What needs no signature (verifying a stored run's chain) goes on without it."""


COMPROMISED = "compromised"
"""The status of a key retired as compromised: its private half destroyed, its public half kept."""

_MAX_COMPROMISED_BYTES: Final[int] = 16 * 1024 * 1024
"""More than any list of compromised keys holds (some 200 bytes each): a device in its place is not read on."""


KEY_ID: Final = re.compile(r"[0-9a-f]{16}")
"""A recorder key id as `bitexact keys show` prints it (:func:`bitexact.crypto.ed25519.key_id`)."""


class UnknownKeyError(KeyMaterialError, ValueError):
    """A key id that names no recorder key of the data directory: input to change, not a state."""


LOOSE_KEY_ADVICE = ("; if others may have read it, `bitexact keys rotate --compromised` replaces it and leaves it"
                    " out of trust files (a plain `keys rotate` keeps trusting it)")
"""What the refusal of a recorder key others may read ends with."""


FileState = tuple[int, int, int, int]
"""A file's inode, size, mtime and ctime (ns): what :meth:`KeyStore.state` compares."""


def _file_state(path: Path) -> FileState | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    # The ctime too: keys/ restored from a backup with its mtimes kept (cp -a, rsync -a, copytree) can reuse the
    # freed inode of the file it replaced, so inode, size and mtime all match the key read before a rotation;
    # no program sets a ctime, and making the file sets it anew.
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@dataclass(frozen=True)
class PublicKeyInfo:
    key_id: str
    public_key: str
    status: str  # "current" | "retired" | "compromised" | "missing" (recorder_keys: the store's, its file gone)
    compromised_at: str | None = None
    """For a compromised key: when it was retired as such."""


class KeyStore:
    """The recorder key files under ``<home>/keys``."""

    def __init__(self, home: Path) -> None:
        self.dir = home / "keys"
        self.current_path = self.dir / "recorder.key"
        self.retired_dir = self.dir / "retired"
        self.compromised_path = self.dir / "compromised.json"

    def exists(self) -> bool:
        return self.current_path.exists()

    def state(self) -> tuple[FileState | None, FileState | None]:
        """What the current key's file and the record of compromised keys are now (inode, size, mtime, ctime),
        for a long-lived writer to see cheaply that a ``keys rotate`` in another process (or keys/ restored
        from a backup) changed either."""
        return _file_state(self.current_path), _file_state(self.compromised_path)

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
        if self.current_path.exists() and not self.current_path.is_file():
            # Said "a recorder key already exists" of a directory in the key's place.
            path = self.current_path
            raise KeyMaterialError(
                f"{path} is {file_kind(os.stat(path).st_mode)}, not a recorder key: move it aside (`mv {path}"
                f" {path}.aside`) and run `bitexact keys init` again (or put the key file back from a backup of"
                " keys/)"
            )
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
            key = SigningKey.load(self.current_path, owner_only=True, advice=LOOSE_KEY_ADVICE)
        except KeyMaterialError as exc:  # the same words, typed as the state it is
            raise RecorderKeyError(str(exc)) from None
        try:
            marked = self.compromised_ids()
        except KeyMaterialError as exc:  # a damaged record of compromised keys: this one may be in it
            raise RecorderKeyError(str(exc)) from None
        if key.key_id in marked:
            # A `keys rotate --compromised` cut short after recording the key as compromised: it must never
            # sign again, and the same command finishes the rotation.
            raise CompromisedCurrentKeyError(
                f"recorder key {key.key_id} ({self.current_path}) is recorded as compromised in"
                f" {self.compromised_path} but is still the current key (a `bitexact keys rotate --compromised`"
                " was cut short): nothing signs with it; run `bitexact keys rotate --compromised` to finish"
            )
        return key

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

    def rotate(
        self, *, compromised_at: str | None = None, expect_current: str | None = None,
        first_marked: Mapping[str, str] | None = None,
    ) -> tuple[SigningKey, SigningKey]:
        """Retire the current key and make a new one; returns ``(old, new)``.

        Serialized with other rotations (a lock file in ``keys/``), and the
        retired copy is made with ``link``, which never replaces a file: a
        retired key is never overwritten, so every run it signed stays
        verifiable. The retired file is made owner-only (0600), whatever
        mode the current one had.

        With ``compromised_at`` (an instant), the old key is retired as
        compromised instead: its public half and that instant are recorded in
        ``keys/compromised.json`` first, then the new key replaces it and no
        retired copy is kept, so its private half is gone.

        With ``expect_current`` (a key id), the rotation is refused
        (:class:`KeyMaterialError`, nothing changed) unless that key is the
        current one when the lock is held: a ``--compromised`` rotation that
        lost the race to a plain one would otherwise mark the new key, and
        leave the exposed one retired and trusted.

        ``first_marked`` (key id: date) holds the dates of marks made before,
        that ``keys/compromised.json`` may have lost (the store's): the key
        retired as compromised keeps its first date, not ``compromised_at``.
        """
        try:
            if compromised_at is not None:
                return self._rotate_compromised(compromised_at, expect_current, first_marked or {})
            return self._rotate(expect_current)
        except OSError as exc:  # a full disk mid-way: the current key is still current (see below)
            raise KeyMaterialError(f"cannot rotate the recorder key in {self.dir}: {exc.strerror or exc}") from None

    def _rotate(self, expect: str | None) -> tuple[SigningKey, SigningKey]:
        self._ensure_dir(self.retired_dir)
        with self._rotating():
            old = SigningKey.load(self.current_path)  # a key others could read is retired all the same: the remedy
            self._check_expected(old, expect)
            if old.key_id in self.compromised_ids():
                raise KeyMaterialError(
                    f"recorder key {old.key_id} is recorded as compromised in {self.compromised_path}: it is not"
                    " retired to be trusted again; run `bitexact keys rotate --compromised` to finish replacing it"
                )
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
            # The link shares the current file's inode and mode: a key that was loose (the reason to rotate)
            # would stay loose in retired/. Tightened before the new key replaces the current one, so a
            # rotation killed here leaves at worst the same loose key, which the next rotation retires again.
            os.chmod(target, 0o600)
            fsync_directory(self.retired_dir)
            new = SigningKey.generate()
            # The new key replaces the current one in one rename: at no moment is there no current key.
            write_private_file(self.current_path, new.pem(), replace=True)
        return old, new

    def _rotate_compromised(self, at: str, expect: str | None,
                            first_marked: Mapping[str, str]) -> tuple[SigningKey, SigningKey]:
        self._ensure_dir()
        with self._rotating():
            old = SigningKey.load(self.current_path)
            self._check_expected(old, expect)
            # Recorded first: a rotation killed after this leaves a current key that current() refuses to sign
            # with, and running the command again finishes it (the date of the first try is kept).
            self._record_compromised(old.key_id, old.public_hex, first_marked.get(old.key_id, at))
            new = SigningKey.generate()
            # One rename: the new key replaces the compromised one, whose file (its private half) is unlinked.
            write_private_file(self.current_path, new.pem(), replace=True)
            self._unlink_retired(old.key_id)  # a plain rotation cut short may have left a copy there
        return old, new

    def _check_expected(self, current: SigningKey, expect: str | None) -> None:
        """Refuse a rotation pinned to ``expect`` when another key is current (under the rotation lock)."""
        if expect is None or current.key_id == expect:
            return
        raise KeyMaterialError(
            f"the current recorder key is {current.key_id}, not {expect} (--expect-current), so nothing was"
            f" rotated: another rotation may have replaced {expect} first. `bitexact keys show` lists the keys;"
            f" if {expect} is retired and was exposed, `bitexact keys mark-compromised {expect}` retires it as"
            " compromised"
        )

    def mark_compromised(self, key_id: str, at: str, public_hex: str | None = None) -> PublicKeyInfo:
        """Retire a retired key (or one only the store remembers, whose ``public_hex`` is given) as compromised:
        its public half and ``at`` are recorded, then its retired file is unlinked. Marking one already marked
        finishes what a mark cut short left (its file) and keeps the first date. The current key is refused:
        :meth:`rotate` with ``compromised_at`` replaces it."""
        if not KEY_ID.fullmatch(key_id):
            # An id is joined into a path below: "../recorder" or an absolute path would reach another file.
            raise UnknownKeyError(f"{key_id!r} is not a recorder key id (16 lowercase hex characters; `bitexact keys"
                                  " show` lists them)")
        with self._rotating():
            marked = {info.key_id: info for info in self.compromised()}
            if key_id not in marked:
                if os.path.lexists(self.current_path) and SigningKey.load(self.current_path).key_id == key_id:
                    raise KeyMaterialError(
                        f"recorder key {key_id} is the current key: `bitexact keys rotate --compromised` replaces"
                        " it with a new one and retires it as compromised"
                    )
                path = self.retired_dir / f"{key_id}.key"
                if os.path.lexists(path):
                    retired = SigningKey.load(path)
                    if retired.key_id != key_id:  # a file renamed by hand: its name is not what it holds
                        raise KeyMaterialError(f"{path} holds recorder key {retired.key_id}, not {key_id}: rename it"
                                               f" to {retired.key_id}.key, then mark that id")
                    public_hex = retired.public_hex
                if public_hex is None:
                    raise UnknownKeyError(f"no recorder key {key_id!r} in {self.dir} (`bitexact keys show` lists"
                                          " the key ids)")
                self._record_compromised(key_id, public_hex, at)
            try:
                self._unlink_retired(key_id)
            except OSError as exc:
                raise KeyMaterialError(f"cannot remove {self.retired_dir / f'{key_id}.key'}: {exc.strerror or exc};"
                                       " it is recorded as compromised and left out of trust files") from None
        return next(info for info in self.compromised() if info.key_id == key_id)

    def compromised(self) -> list[PublicKeyInfo]:
        """The keys retired as compromised, in the order they were, each with its date; a file that does not
        read is refused (:class:`KeyMaterialError`), never taken for none: a trust file must not list a key
        it names."""
        try:
            # Never waiting on a named pipe in its place (it reads as empty, and is refused below as damaged):
            # a plain read hung `keys show`, `export` and `health`.
            raw = read_limited(self.compromised_path, _MAX_COMPROMISED_BYTES)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise KeyMaterialError(f"cannot read {self.compromised_path}: {exc.strerror or exc}") from None
        try:
            doc = json.loads(raw)
            return [PublicKeyInfo(str(item["key_id"]), str(item["public_key"]), COMPROMISED,
                                  str(item["compromised_at"])) for item in doc["compromised"]]
        except (ValueError, KeyError, TypeError):
            raise KeyMaterialError(
                f"{self.compromised_path} is not a list of compromised keys (damaged?): restore it from a backup;"
                " until then no trust file is written, since it might list a compromised key"
            ) from None

    def compromised_ids(self) -> set[str]:
        """The ids of the keys retired as compromised (:class:`KeyMaterialError` when the record is damaged)."""
        if not os.path.lexists(self.compromised_path):
            return set()  # the common case: one stat, no read
        return {info.key_id for info in self.compromised()}

    def _record_compromised(self, key_id: str, public_hex: str, at: str) -> None:
        """Add the key to ``keys/compromised.json`` (owner-only, replaced whole); kept as it is when listed."""
        listed = self.compromised()
        if any(info.key_id == key_id for info in listed):
            return
        items = [{"key_id": i.key_id, "public_key": i.public_key, "compromised_at": i.compromised_at}
                 for i in listed] + [{"key_id": key_id, "public_key": public_hex, "compromised_at": at}]
        write_private_file(self.compromised_path, (json.dumps({"compromised": items}, indent=2) + "\n").encode(),
                           replace=True)

    def _unlink_retired(self, key_id: str) -> None:
        try:
            os.unlink(self.retired_dir / f"{key_id}.key")
        except FileNotFoundError:
            return
        fsync_directory(self.retired_dir)

    def loose_retired(self) -> list[tuple[Path, int]]:
        """Retired key files others may read or write, with their mode (a rotation before 0600 was made)."""
        loose: list[tuple[Path, int]] = []
        if not self.retired_dir.is_dir():
            return loose
        for path in sorted(self.retired_dir.glob("*.key")):
            try:
                mode = path.stat().st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode):
                continue  # no key in it (a directory's 0755 is no loose key): health's retired-key-unusable names it
            if stat.S_IMODE(mode) & (stat.S_IRWXG | stat.S_IRWXO):
                loose.append((path, stat.S_IMODE(mode)))
        return loose

    def public_keys(self) -> list[PublicKeyInfo]:
        """Current key first, then retired keys by id, then the compromised ones in the order they were.

        A key recorded as compromised is listed as such wherever its file still is (a rotation or a mark
        cut short): only the trust-worthy ones are ``current`` or ``retired``.
        """
        marked = {info.key_id: info for info in self.compromised()}
        keys: list[PublicKeyInfo] = []
        if self.exists() or os.path.islink(self.current_path):  # a link to nowhere: refused, naming it
            current = SigningKey.load(self.current_path)  # only its public half: a loose file's still lists
            if current.key_id not in marked:
                keys.append(PublicKeyInfo(current.key_id, current.public_hex, "current"))
        if self.retired_dir.is_dir():
            for path in sorted(self.retired_dir.glob("*.key")):
                retired = SigningKey.load(path)
                if (keys and retired.key_id == keys[0].key_id) or retired.key_id in marked:
                    continue  # a rotation cut short after retiring the key it did not replace: still current
                keys.append(PublicKeyInfo(retired.key_id, retired.public_hex, "retired"))
        return keys + list(marked.values())
