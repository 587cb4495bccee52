"""Runs imported through the library, for CLI tests that need a run id the command line would refuse."""

from __future__ import annotations

from pathlib import Path


def import_as(home: Path, log: Path, run_id: str) -> None:
    """Import ``log`` as ``run_id`` through the library: `import session --run-id` takes only the SDK's ids
    (letters, digits, ._:-), but a run recorded by a Recorder may hold any printable id, brackets included."""
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.sessions.evidence import import_session, read_session
    from bitexact.store import open_store

    store = open_store(home)
    try:
        keys = KeyStore(home)
        import_session(Recorder(store, keys.current_or_init(), keys=keys), read_session(log), run_id=run_id)
    finally:
        store.close()
