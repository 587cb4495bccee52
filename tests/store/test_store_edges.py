"""Edges of the store and its write path, found in review: each test pins one behaviour that used to break.

Nothing here depends on machine speed: a wait that must end is given tens of
seconds for what takes milliseconds when the code is right, and a lock that
must stay held is held by a real process until the test lets it go.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lock_holder import free_for_others, held_by_another_process
from store_chain import make_chain, make_entry, tool_data

import bitexact.store.sqlite as sqlite_module
from bitexact.crypto import GENESIS, SigningKey
from bitexact.errors import StoreError
from bitexact.evidence.redaction import redact_entry
from bitexact.evidence.verify.chain import ChainState
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.recording.audit import apply_pending, record_claim
from bitexact.store import RecordError, SQLiteStore, flock

SECRET_A = "SECRET-A-7f3e9c1d"
SECRET_B = "SECRET-B-2b8a4e6f"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "s.db")
    yield s
    s.close()


def _wait_for(condition: Any, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


# -- 1. strings the shape checks pass but SQLite cannot bind ----------------


def test_an_entry_string_sqlite_cannot_store_is_refused_naming_its_field(store: SQLiteStore) -> None:
    """A lone surrogate canonicalizes (as an escape), but Python's sqlite3 cannot bind it as TEXT."""
    store.create_run("r")
    bad = make_entry("r", 0, GENESIS, tool_data(0), kind="tool\ud800call")
    with pytest.raises(RecordError) as refused:
        store.append("r", bad)
    assert refused.value.field == "kind"
    key = SigningKey.generate()
    with pytest.raises(RecordError) as refused_key:
        store.put_key(key.key_id, key.public_hex, "recorder\udc00", "2026-11-30T00:00:00Z")
    assert refused_key.value.field == "role"


def test_an_append_sqlite_cannot_bind_does_not_fail_the_others_in_its_batch(store: SQLiteStore) -> None:
    store.create_run("good")
    store.create_run("bad")
    good = make_chain("good", 1)[0]
    bad = make_entry("bad", 0, GENESIS, tool_data(0), prov="observed\ud800")
    with store._write_lock:  # the background leader waits here, so both appends queue into one batch
        pending_good = store.submit("good", [good])
        try:
            store.submit("bad", [bad])
        except RecordError:
            pass  # refused before queueing: right
    assert pending_good.result(30)[0].hash == good["hash"]  # fails: "the batch holding this append failed"
    assert store.head("good") == (1, good["hash"])


# -- 2. a forked child blocks on a lock the parent held, instead of being refused ----


def test_a_forked_child_is_refused_even_while_a_parent_thread_was_writing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", lock_timeout=60)
    store.create_run("r")
    entry = make_chain("r", 1)[0]
    try:
        with held_by_another_process(tmp_path / "s.db.lock") as (_, release):
            writing = threading.Thread(target=store.append, args=("r", entry))
            writing.start()  # holds the store's write lock while it waits for the other process's flock
            _wait_for(store._write_lock.locked, "the parent's writer to hold the store's write lock")
            pid = os.fork()
            if pid == 0:  # the child: must be refused (or close quietly), never block
                code = 3
                try:
                    store.create_run("x")
                except StoreError as exc:
                    code = 0 if "open the store again" in str(exc) else 2
                if code == 0:
                    store.close()  # a forked child leaves the parent's connections alone
                os._exit(code)
            deadline, status = time.monotonic() + 30, None
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.05)
            else:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                release.set()
                writing.join(60)
                pytest.fail("the forked child blocked on the store's write lock instead of being refused")
            assert os.waitstatus_to_exitcode(status) == 0
            release.set()
            writing.join(60)
        assert store.head("r") == (1, entry["hash"])
    finally:
        store.close()


# -- 3. an interrupted wait for the cross-process lock keeps it afterwards ------


def test_an_interrupted_wait_for_the_lock_does_not_keep_it_from_other_processes(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db", lock_timeout=60)
    lock_path = tmp_path / "s.db.lock"
    store.create_run("r")
    first, second = make_chain("r", 2)
    store.append("r", first)
    waiting_code = flock.ProcessLock.acquire.__code__

    def interrupt(signum: int, frame: Any) -> None:
        # Only once the main thread is blocked in the bounded wait (its waiter thread queued in flock), in
        # ProcessLock.acquire or in the interruptible wait it calls.
        callers = []
        while frame is not None and len(callers) < 3:  # ProcessLock.acquire, or the interruptible wait under it
            callers.append(frame.f_code)
            frame = frame.f_back
        waiting = waiting_code in callers
        if waiting and store._process_lock._pending is not None:
            raise KeyboardInterrupt
        signal.setitimer(signal.ITIMER_REAL, 0.05)

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with held_by_another_process(lock_path) as (_, release):
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            with pytest.raises(KeyboardInterrupt):
                store.append("r", second)  # Ctrl-C while waiting for another process's lock
            signal.setitimer(signal.ITIMER_REAL, 0)
            release.set()
        # The other process let go, and nobody in this process wants the lock any more.
        assert free_for_others(lock_path, within=20), (
            "this process took the lock after the interrupted wait and kept it: every other process's"
            " write now times out naming this process"
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        store.close()


# -- 4. seal after a stale head -------------------------------------------------


def test_seal_after_another_writer_appended_attests_its_own_step_count(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        recorder = Recorder(store, SigningKey.generate(), checkpoints=CheckpointPolicy(every=4, seconds=3600))
        first = recorder.start()
        other = recorder.attach(first.run_id)  # as another process would: its own head
        other.append("marker", {"note": "from the other writer"})
        first.seal()  # stale head: reloads and rebuilds run_end at step 2
        entries = list(store.entries(first.run_id))
        run_end = entries[-1]
        assert run_end["kind"] == "run_end"
        assert run_end["data"]["steps"] == run_end["step"] + 1, run_end["data"]
        state = ChainState(first.run_id, set())
        for entry in entries:
            state.add(entry)  # the verifier's rule: "run_end seal attests N steps but was sealed at M"


# -- 5. the redaction's WAL flush while a reader holds a snapshot -----------------


def _secret_run(store: SQLiteStore) -> dict[str, Any]:
    store.create_run("r")
    entry = make_entry("r", 0, GENESIS, {"a": SECRET_A, "b": SECRET_B, "x": 1})
    store.append("r", entry)
    return entry


def _redacted(entry: dict[str, Any], *paths: str) -> dict[str, Any]:
    return redact_entry(entry, list(paths))


def test_a_redaction_does_not_hold_the_write_lock_for_a_busy_timeout_per_attempt(store: SQLiteStore) -> None:
    """Each of the 400 truncation tries waits the whole busy timeout for the reader (30 s shipped: 3 h 20 min).

    The writer's busy timeout is lowered to 0.1 s so the test is short: the
    flush then holds the write lock about 400 x 0.1 s = 40 s; its design is a
    ~2 s best effort (5 ms apart, while a checkpoint pass holds the lock).
    """
    entry = _secret_run(store)
    reader = sqlite3.connect(store.path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM entries").fetchone()  # a snapshot: the WAL cannot be emptied under it
    store._writer.execute("PRAGMA busy_timeout = 100")
    done = threading.Event()

    def redact() -> None:
        try:
            store.rewrite_entry("r", 0, _redacted(entry, "a"))
        except StoreError:
            pass  # a flush that gives up and says so is fine; holding the lock for minutes is not
        finally:
            done.set()

    redacting = threading.Thread(target=redact, daemon=True)
    try:
        redacting.start()
        assert done.wait(20), "rewrite_entry still holds the store's write lock after 20 s"
    finally:
        reader.execute("COMMIT")
        reader.close()
        redacting.join(120)


def test_a_redaction_flush_a_reader_blocks_is_reported_and_finished_by_resume(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader's snapshot keeps the WAL from being emptied: the rewrite says so (it used to return as
    if done, and nothing ever emptied the WAL), and `bitexact redact --resume` finishes it."""
    entry = _secret_run(store)
    wal = Path(f"{store.path}-wal")
    monkeypatch.setattr(sqlite_module, "_FLUSH_ATTEMPTS", 3)  # give up quickly (the shipped 400 only takes longer)
    reader = sqlite3.connect(store.path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM entries").fetchone()
    try:
        with pytest.raises(StoreError, match="redact --resume"):
            store.rewrite_entry("r", 0, _redacted(entry, "a"))
    finally:
        reader.execute("COMMIT")
        reader.close()
    assert SECRET_A not in str(store.entry("r", 0)), "gone from the database all the same"
    assert apply_pending(store, "r") == []  # --resume: nothing pending, and the WAL is emptied now
    assert SECRET_A.encode() not in wal.read_bytes()


# -- 6. kind counts for a kind holding U+0000 -----------------------------------------


def test_kind_counts_are_right_for_a_kind_holding_nul(store: SQLiteStore) -> None:
    """docs/store.md: the kind count uses json_patch with json_object, "so any kind string is safe"."""
    store.create_run("r")
    prev = GENESIS
    kinds = ["a\x00b", "a\x00b", "a"]
    for step, kind in enumerate(kinds):
        entry = make_entry("r", step, prev, tool_data(step), kind=kind)
        try:
            store.append("r", entry)
        except RecordError as exc:
            assert exc.field == "kind" and step == 0  # refused by name before anything is counted: fine too
            return
        prev = entry["hash"]
    assert store.run("r").kinds == {"a\x00b": 2, "a": 1}


# -- 7. two redactions of one entry: the later write brings a destroyed value back -----


def test_a_concurrent_redaction_does_not_bring_back_a_destroyed_value(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        recorder = Recorder(store, SigningKey.generate(), checkpoints=CheckpointPolicy(every=100, seconds=3600))
        writer = recorder.start()
        writer.append_own("tool_call", {"a": SECRET_A, "b": SECRET_B})  # step 1, as the agent recorded it
        run_id = writer.run_id
        record_claim(writer, ["1:a"], by="first operator", reason="pii")
        rewrite = store.rewrite_entry

        def second_operator_between_read_and_write(run: str, step: int, new: dict[str, Any]) -> None:
            # `bitexact redact` in another process, between the first one's read of step 1 and its write.
            store.rewrite_entry = rewrite  # type: ignore[method-assign]
            record_claim(recorder.attach(run_id), ["1:b"], by="second operator", reason="pii")
            apply_pending(store, run_id)  # applies both pending claims: a and b are gone
            assert SECRET_B not in str(store.entry(run_id, 1))
            rewrite(run, step, new)  # the first one's write, built from what it read before

        store.rewrite_entry = second_operator_between_read_and_write  # type: ignore[method-assign]
        try:
            apply_pending(store, run_id)
        except StoreError:
            pass  # the first operator's stale write refused: fine (a is redacted by the second one anyway)
        stored = store.entry(run_id, 1)
        assert SECRET_B not in str(stored), f"a destroyed value is back in the store: {stored['data']}"
        assert "b" in stored.get("redacted", [])


# -- 8. a store that failed to open under a held lock leaks its lock waiter ---------


def test_a_store_that_failed_to_open_leaves_no_lock_waiter_behind(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    with held_by_another_process(tmp_path / "new.db.lock"), pytest.raises(StoreError):
        SQLiteStore(tmp_path / "new.db", lock_timeout=0.2)  # a new store must make its tables
    # The holder let go: the waiter gets the lock, gives it back, and should then end (and close its fd).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        left = [t for t in set(threading.enumerate()) - before if t.name == "bitexact-store-lock-wait"]
        if not left:
            return
        time.sleep(0.05)
    pytest.fail("the lock's waiter thread (and its duplicate of the lock descriptor) outlived the failed open")
