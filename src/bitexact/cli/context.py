"""What every command opens: the data directory, the store, the recorder key."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import Store, open_store


@dataclass
class AppContext:
    home: Path
    _store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.home)
        return self._store

    @property
    def keys(self) -> KeyStore:
        return KeyStore(self.home)

    def recorder(self) -> Recorder:
        """The write path, creating the recorder key on first use."""
        return Recorder(self.store, self.keys.current_or_init())

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


pass_app = click.make_pass_decorator(AppContext)
