"""What every command opens: the data directory, the store, the recorder key."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from bitexact import config
from bitexact.config import unusable_home
from bitexact.cli.output import EXIT_INPUT, fail
from bitexact.errors import RunNotFoundError, StoreError

if TYPE_CHECKING:
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.store import Store

# The store, the keys and the write path are imported when a command first uses them
# (`bitexact --help` and `bitexact verify FILE` use none of them).


_OWN_DIRECTORIES = ("keys", "journals", "failures")
"""The data directory's directories no ``-o`` may write into (or replace): what a recording keeps there it
cannot get back."""


@dataclass
class AppContext:
    home: Path
    _store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            from bitexact.store import open_store

            self._store = open_store(self.home)  # a data directory that cannot be is refused there, saying why
        return self._store

    @property
    def run_store(self) -> Store:
        """The store, for a command about runs already recorded: a data directory holding no store
        holds no run (:class:`RunNotFoundError`), and looking one up never makes an empty store."""
        from bitexact.store import DB_NAME

        if self._store is None and not os.path.lexists(self.home / DB_NAME):  # a dangling link: opening says why
            self.refuse_unusable_home()  # a data directory that cannot be is not one that holds no run
            raise RunNotFoundError(f"{self.home} holds no store")
        return self.store

    def refuse_unusable_home(self) -> None:
        """Raise :class:`StoreError` saying what is wrong when the data directory cannot hold a store."""
        why = unusable_home(self.home)
        if why is not None:
            raise StoreError(why)

    def no_run(self, run_id: str, code: int = EXIT_INPUT) -> NoReturn:
        """Exit ``code`` (2) saying the store holds no run ``run_id``: an unknown run id is input that is not
        valid, whichever command was given it (`capture backfill` exits 1, as the capture contract says)."""
        fail(f"no run {run_id!r} in {self.home}", code=code, hint="List runs with `bitexact runs`.")

    @property
    def keys(self) -> KeyStore:
        from bitexact.crypto.keystore import KeyStore

        return KeyStore(self.home)

    def recorder(self) -> Recorder:
        """The write path, creating the recorder key on first use."""
        from bitexact.recording import Recorder

        keys = self.keys
        return Recorder(self.store, keys.current_or_init(), keys=keys)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def refuse_own_file(self, output: Path, option: str = "-o") -> None:
        """Raise :class:`click.UsageError` when ``output`` would overwrite the data directory's own files.

        The store (and its WAL, shared-memory, rollback-journal and lock
        files), the keys (``keys/``, the compromised list included), the
        journals, the failures records (``failures/RUN.jsonl``, the gaps the
        SDK declared, some of which only they hold: the store was locked) and
        the host key hold what a recording cannot get back, as do the capture
        keys and policy file in force: an ``-o`` typo must never replace them,
        nor put a file where one of those directories goes. ``exports/`` and any other name are left to write.

        ``-`` is refused too: it reads as standard output, and the command would write a file named ``-``
        (exit 0, "exported ... to -"), with nothing on the pipe it was meant for.
        """
        if str(output) == "-":
            raise click.UsageError(f"{option} -: the output is written as a file, never to standard output (it"
                                   " would be a file named '-'); name a file (with a directory, such as out/-, for a file of that name)")
        from bitexact.store import DB_NAME
        from bitexact.store.sqlite import companions

        home = Path(os.path.realpath(self.home))
        target = Path(os.path.realpath(output))
        # The file a symlink in the store's place points to (``target`` is resolved too), and its companions
        # beside it, where SQLite keeps them.
        owned = set(companions(home / DB_NAME, "", "-wal", "-shm", "-journal", ".lock"))
        owned.update(Path(os.path.realpath(path)) for _, path in self._files_beside())
        if target in owned or any(config.inside(target, home / part) for part in _OWN_DIRECTORIES):
            raise click.UsageError(f"{option} {output}: that is one of BitExact's own files in {self.home}"
                                   " (the store, a key, a journal or a failures record), or a capture key or the"
                                   " capture policy file in force; write somewhere else")

    def own_tree_conflict(self, directory: Path) -> str | None:
        """Why a command that rewrites every file below ``directory`` must not run there, or None.

        The data directory (store, keys, journals, failures), the host key
        and the capture key files in force hold what a recording cannot get
        back, and the capture policy file in force decides what every later
        recording keeps: a tree that is the data directory, lies inside it,
        holds it, or holds one of those files is refused whole (symlinks followed on both
        sides, as :meth:`refuse_own_file` does).
        """
        home = os.path.realpath(self.home)
        if config.inside(directory, home):
            where = "is" if os.path.realpath(directory) == home else "is inside"
            return f"{directory} {where} BitExact's data directory {self.home} (its store and keys)"
        if config.inside(home, directory):
            return f"{directory} holds BitExact's data directory {self.home} (its store and keys)"
        for label, path in self._files_beside():
            if os.path.lexists(path) and config.inside(path, directory):
                return f"{directory} holds {label}, {path}"
        return None

    def _files_beside(self) -> list[tuple[str, str]]:
        """The files outside the data directory that BitExact must never overwrite, each with what it is: the
        host key, the capture key files in force, and the capture policy file in force (rewritten, it would
        change what every later recording keeps)."""
        from bitexact.capture.keyfiles import capture_key_files, policy_file
        from bitexact.crypto.hostkey import host_key_path

        try:
            files = [("the host key", str(host_key_path(self.home)))]
        except OSError:
            files = []
        files += [("a capture key file in force", key) for key in capture_key_files()]
        policy = policy_file()
        if policy is not None:
            files.append(("the capture policy file in force", policy))
        return files


pass_app = click.make_pass_decorator(AppContext)
