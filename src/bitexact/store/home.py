"""Where the embedded store lives: ``<BITEXACT_HOME>/bitexact.db``, owner-only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from bitexact import config
from bitexact.errors import StoreError
from bitexact.store.sqlite import SQLiteStore

DB_NAME: Final[str] = "bitexact.db"


def open_store(home: Path | None = None) -> SQLiteStore:
    """Open (creating if needed) the SQLite store in ``home``.

    ``home`` defaults to ``BITEXACT_HOME``, else ``~/.bitexact``. A directory
    this creates is mode 0700, and the database file is 0600 (its ``-wal``,
    ``-shm`` and ``.lock`` companions too): entries hold agent inputs and
    outputs. An existing directory keeps its mode; it may be shared on purpose.
    """
    directory = config.home(home)
    if directory.exists() and not directory.is_dir():
        named = f"BITEXACT_HOME={directory}" if home is None and os.environ.get("BITEXACT_HOME") else str(directory)
        raise StoreError(f"{named} is a file, not a directory: the data directory holds the store, keys and journals")
    if not directory.exists():
        try:
            directory.mkdir(mode=0o700, parents=True)
            os.chmod(directory, 0o700)  # mkdir's mode passes through the umask; say it exactly
        except FileExistsError:
            pass  # another process created it first
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {directory}: {exc.strerror or exc}") from exc
    return SQLiteStore(directory / DB_NAME)
