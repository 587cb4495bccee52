"""Layer 4: persistent runs behind one interface, with atomic appends at the run head.

``open_store()`` gives the embedded SQLite store; a PostgreSQL store will sit
behind the same :class:`Store` interface.
"""

from bitexact.errors import RunNotFoundError, StaleHeadError, StoreBusyError, StoreError
from bitexact.store.base import (
    COMPROMISED_KEY_ROLE,
    AppendResult,
    ConflictError,
    EntryNotFoundError,
    PendingAppend,
    RecordError,
    RunInfo,
    StaleCheckpointError,
    Store,
    WalKeptError,
)
from bitexact.store.home import DB_NAME, open_store, store_home
from bitexact.store.sqlite import SQLiteStore

__all__ = [
    "COMPROMISED_KEY_ROLE",
    "DB_NAME",
    "AppendResult",
    "ConflictError",
    "EntryNotFoundError",
    "PendingAppend",
    "RecordError",
    "RunInfo",
    "RunNotFoundError",
    "SQLiteStore",
    "StaleCheckpointError",
    "StaleHeadError",
    "Store",
    "StoreBusyError",
    "StoreError",
    "WalKeptError",
    "open_store",
    "store_home",
]
