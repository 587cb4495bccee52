"""Where the embedded store lives: ``<BITEXACT_HOME>/bitexact.db``, owner-only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from bitexact import config
from bitexact.errors import StoreError
from bitexact.store.sqlite import SQLiteStore

DB_NAME: Final[str] = "bitexact.db"


def store_home(store: object) -> Path | None:
    """The data directory a store lives in, when the store says (SQLite: its file's directory); None for a
    store with no directory (its journals, live locks and keys then live under ``BITEXACT_HOME``)."""
    path = getattr(store, "path", None)
    return Path(path).parent if path is not None else None


def open_store(home: Path | None = None) -> SQLiteStore:
    """Open (creating if needed) the SQLite store in ``home``.

    ``home`` defaults to ``BITEXACT_HOME``, else ``~/.bitexact``. A directory
    this creates is mode 0700, and the database file is 0600 (its ``-wal``,
    ``-shm`` and ``.lock`` companions too): entries hold agent inputs and
    outputs. An existing directory keeps its mode; it may be shared on purpose.
    """
    directory = config.home(home)
    named = _named(directory, home)
    try:
        exists = directory.exists()
        a_file = exists and not directory.is_dir()
    except OSError as exc:  # a name the file system cannot hold (too long, ...): not only "no such file"
        raise StoreError(f"{named}: {exc.strerror or exc}") from exc
    if a_file:
        raise StoreError(f"{named} is a file, not a directory: the data directory holds the store, keys and journals")
    if not exists:
        blocked = config.unusable_home(directory)  # a symlink to nowhere (an unmounted volume), a file above it
        if blocked is not None:
            raise StoreError(blocked)
        try:
            directory.mkdir(mode=0o700, parents=True)
            os.chmod(directory, 0o700)  # mkdir's mode passes through the umask; say it exactly
        except FileExistsError:
            pass  # another process created it first
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {named}: {exc.strerror or exc}") from exc
    return SQLiteStore(directory / DB_NAME)


def _named(directory: Path, home: Path | None) -> str:
    """The data directory as an error names it: by ``BITEXACT_HOME`` when that is where it came from.

    The SDK resolves the default directory before it opens the store, so a ``home`` equal to the
    variable's directory counts as coming from it too.
    """
    from_env = os.environ.get("BITEXACT_HOME")
    if from_env and from_env.strip() and (home is None or directory.absolute() == config.home().absolute()):
        return f"BITEXACT_HOME={directory}"
    return str(directory)
