"""A store's pages damaged as a failing disk or a stray write would, for the damage tests: SQLite then reads
the page as "database disk image is malformed"."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def page_size_and(database: Path, query: str, *params: str) -> tuple[int, list[tuple[int, ...]]]:
    """The store's page size, and the rows of ``query`` (read after the WAL is folded into the file, so the
    pages it names are the file's)."""
    connection = sqlite3.connect(database)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = connection.execute(query, params).fetchall()
        return int(connection.execute("PRAGMA page_size").fetchone()[0]), rows
    finally:
        connection.close()


def root_page(database: Path, name: str) -> tuple[int, int]:
    """The page size and the root page of the table or index ``name``."""
    size, [(page,)] = page_size_and(database, "SELECT rootpage FROM sqlite_master WHERE name = ?", name)
    return size, page


def overwrite_page(database: Path, page_size: int, page: int) -> None:
    """Overwrite page ``page`` (1-based) whole, its header too."""
    with database.open("r+b") as file:
        file.seek(page_size * (page - 1))
        file.write(b"\x07" * page_size)
