"""One store and one recorder per data directory, shared by every run of the process.

Runs of one process share a store (so its group commit batches their
appends) and the recorder key. The store stays open until the process ends
(or :func:`close_stores`), so a RecordHandle read after its run ended still
reads the written entry.
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path

from bitexact import config
from bitexact.capture import CaptureLogFilter
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import Store, open_store

_lock = threading.Lock()
_recorders: dict[Path, Recorder] = {}


def recorder_for(home: Path | str | None = None) -> tuple[Recorder, Path]:
    """The shared write path for the data directory ``home`` (default ``BITEXACT_HOME``)."""
    directory = config.home(home).expanduser().absolute()
    with _lock:
        recorder = _recorders.get(directory)
        if recorder is None:
            store = open_store(directory)
            try:
                key = KeyStore(directory).current_or_init()
            except BaseException:
                store.close()
                raise
            recorder = Recorder(store, key)  # the capture policy in force (BITEXACT_CAPTURE_POLICY)
            _recorders[directory] = recorder
            scrub_sdk_logs(recorder)
        return recorder, directory


def scrub_sdk_logs(recorder: Recorder) -> None:
    """Put the SDK's log lines through the policy's detectors (a log is scrubbed, never declared).

    One filter on the ``bitexact.sdk`` logger, following the policy of the
    most recently opened write path.
    """
    logger = logging.getLogger("bitexact.sdk")
    for existing in logger.filters:
        if isinstance(existing, CaptureLogFilter):
            existing.policy = recorder.policy
            return
    logger.addFilter(CaptureLogFilter(recorder.policy))


def store_home(store: Store) -> Path | None:
    """The data directory a store lives in, when the store says (SQLite: its file's directory)."""
    path = getattr(store, "path", None)
    return Path(path).parent if path is not None else None


def close_stores() -> None:
    """Close every shared store (at exit; tests that reopen a directory call it too)."""
    with _lock:
        for recorder in _recorders.values():
            try:
                recorder.store.close()
            except Exception:  # noqa: BLE001 - closing at exit must not raise
                pass
        _recorders.clear()


atexit.register(close_stores)
