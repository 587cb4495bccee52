"""One store and one recorder per data directory, shared by every run of the process.

Runs of one process share a store (so its group commit batches their
appends) and the recorder key. The store stays open until the process ends
(or :func:`close_stores`), so a RecordHandle read after its run ended still
reads the written entry; except a store whose data directory was removed (or
its database replaced): no path names its file any more, and it is closed
once no run uses it (see :func:`_close_stale`: when its last run ends, or at
the next run's start or end when the directory went after that), so a process
that makes and removes data directories again and again (a test suite's
temporary homes) does not keep each one's connections and descriptors open.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from pathlib import Path
from typing import Any, Final, Protocol

from bitexact import config
from bitexact.capture import CaptureLogFilter
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import Store, open_store, store_home

logger: Final = logging.getLogger("bitexact.sdk")

_lock = threading.Lock()
_recorders: dict[Path, Recorder] = {}
_identities: dict[Path, tuple[int, int] | None] = {}  # each shared store's file (device, inode) when opened
# Recorders whose data directory no longer names their store's file, left open while a run uses them.
_stale: list[Recorder] = []
# Per store (by id), the run writers whose exit gave up on a batch they were still writing (a store locked by
# another process, a stalled disk): weakly held, each done with once its batch ends.
_given_up: dict[int, weakref.WeakSet[Any]] = {}
# Per store (by id), the runs starting on it: handed it by recorder_for(starting=True) and not yet live
# (active.live_runs) nor failed. Such a store is in use: another run's end or start must not close it.
_starting: dict[int, int] = {}


class _Busy(Protocol):
    @property
    def busy(self) -> bool: ...


def _after_fork_in_child() -> None:
    """A child forked from a process holding shared stores cannot write through them (SQLite connections must
    not cross a fork: the store refuses, "open the store again in this process"); its runs open their own.
    The parent's are dropped here, never closed (the child leaves the parent's connections alone)."""
    global _lock
    _lock = threading.Lock()  # a lock the parent held at the fork stays held in the child forever
    _recorders.clear()
    _identities.clear()
    _stale.clear()
    _given_up.clear()
    _starting.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def recorder_for(home: Path | str | None = None, *, starting: bool = False) -> tuple[Recorder, Path]:
    """The shared write path for the data directory ``home`` (default ``BITEXACT_HOME``).

    ``starting``: for a run about to start on it, which calls :func:`started` once it is registered live or
    has failed to start; meanwhile its store is never closed as stale (:func:`_close_stale`)."""
    directory = config.home(home).expanduser().absolute()
    with _lock:
        _close_stale()
        recorder = _recorders.get(directory)
        if recorder is None:
            store = open_store(directory)
            store.trust_intact()  # no whole-file check before an agent's first run (Store.trust_intact)
            try:
                key = KeyStore(directory).current_or_init()
                # The capture policy in force (BITEXACT_CAPTURE_POLICY); the key files, read again after a
                # rotation. Refused for a key the store marks compromised: the store is closed then too.
                recorder = Recorder(store, key, keys=KeyStore(directory))
            except BaseException:
                store.close()
                raise
            _recorders[directory] = recorder
            _identities[directory] = store_file(store)
            scrub_sdk_logs(recorder)
        if starting:
            _starting[id(recorder.store)] = _starting.get(id(recorder.store), 0) + 1
        return recorder, directory


def started(recorder: Recorder) -> None:
    """A run handed ``recorder`` by ``recorder_for(starting=True)`` is registered live, or failed to start:
    its store is held by live runs alone from now on."""
    with _lock:
        key = id(recorder.store)
        left = _starting.get(key, 0) - 1
        if left > 0:
            _starting[key] = left
        else:
            _starting.pop(key, None)


def run_ended() -> None:
    """A run has ended and is no longer live: a store whose data directory was removed while it recorded is
    closed now if no other run uses it, not left open until the next run starts."""
    with _lock:
        _close_stale()


def _close_stale() -> None:
    """Retire each shared store whose data directory was removed (or its database replaced) since it was
    opened, and close each retired one no run uses any more. Called with ``_lock`` held.

    Such a store writes into a file no path names any more, where every run of this process would vanish
    without a word: new runs open the store at the path again. A run still open on the old one (or one that
    ended whose writer is still writing, or whose exit gave up on a batch) keeps it open to its end, and its
    exit declares the loss; it is closed at a later call, once none does (a run starting on it, between
    taking it and being live, uses it too). Called at each run's start and at each run's end. Kept open,
    each removed directory left its SQLite connections and lock file open until the process ended (6
    descriptors a directory)."""
    for directory, recorder in list(_recorders.items()):
        if store_file(recorder.store) != _identities.get(directory):
            del _recorders[directory]
            _identities.pop(directory, None)
            _stale.append(recorder)
    if not _stale:
        return
    from bitexact.sdk import active

    used = {id(held.store) for run in active.live_runs() if (held := run.recorder) is not None} | set(_starting)
    for recorder in list(_stale):
        store = recorder.store
        if id(store) in used or _abandoned_batch(store):
            continue
        _stale.remove(recorder)
        _given_up.pop(id(store), None)
        try:
            store.close()
        except Exception:  # noqa: BLE001 - a store no path names: nothing left to tell the agent
            pass


def store_path(store: Store) -> Path | None:
    """The store's database file as an absolute path (made absolute now: the agent may change directory
    later), or None for a store with no file."""
    path = getattr(store, "path", None)
    return Path(path).absolute() if path is not None else None


def store_file(store: Store, path: Path | None = None) -> tuple[int, int] | None:
    """The (device, inode) of the file at the store's path (``path``: that path, made absolute before) now;
    None when no file is there (or the store has no path). A store whose answer changed since it was opened
    writes into a file nobody can read."""
    path = path if path is not None else getattr(store, "path", None)
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


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


def gave_up_on(store: Store | None, writer: _Busy) -> None:
    """A run's exit gave up on ``writer``'s batch still being written to ``store`` (its drain timed out)."""
    if store is None:
        return
    with _lock:
        _given_up.setdefault(id(store), weakref.WeakSet()).add(writer)


def _abandoned_batch(store: Store) -> bool:
    """Whether a batch a run's exit gave up on is still being written to ``store``."""
    writers = _given_up.get(id(store))
    return writers is not None and any(writer.busy for writer in list(writers))


def close_stores() -> None:
    """Close every shared store (at exit; tests that reopen a directory call it too).

    A store still writing a batch that a run's exit gave up on (its drain
    timed out: the store locked by another process, a stalled disk) is left
    to the process's end rather than closed: closing waits for what is in
    flight, and the exit would wait out the same lock or disk a second time,
    up to ``BITEXACT_LOCK_TIMEOUT`` past the drain timeout. Its entries are
    journaled and declared, so ``bitexact repair`` folds whatever did not land.
    """
    with _lock:
        for recorder in [*_recorders.values(), *_stale]:
            if _abandoned_batch(recorder.store):
                logger.warning("bitexact: the store at %s is left to the process's end, not closed: a run's exit"
                               " gave up on a write still waiting on it (its journals wait for `bitexact repair`)",
                               store_home(recorder.store) or "(its data directory)")
                continue
            try:
                recorder.store.close()
            except Exception:  # noqa: BLE001 - closing at exit must not raise
                pass
        _recorders.clear()
        _identities.clear()
        _stale.clear()
        _given_up.clear()


atexit.register(close_stores)
