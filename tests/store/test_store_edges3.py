"""Store, checkpoint and health edges (the third review): each test is a bug it found, fixed.

No test depends on machine speed: faults are injected with monkeypatch, the
checkpoint clock is a fake one, and the CLI runs as a real subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from store_chain import make_chain

import bitexact.recording.writer as writer_module
from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import SQLiteStore, StoreError


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "s.db")
    yield s
    with contextlib.suppress(RuntimeError):  # a close that raises is asserted on by its own test
        s.close()


# -- 1. a commit that landed is reported as failed ---------------------------


def _no_checkpoint_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host is out of threads when the WAL checkpointer starts (RuntimeError: can't start new thread)."""
    start = threading.Thread.start

    def refusing_start(self: threading.Thread) -> None:
        if self.name == "bitexact-wal-checkpoint":
            raise RuntimeError("can't start new thread")
        start(self)

    monkeypatch.setattr(threading.Thread, "start", refusing_start)


def test_an_append_that_raised_left_nothing_written(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append either returns (durable) or raises with nothing written ("all or none", docs/store.md).

    The WAL checkpointer's thread is started from ``WalCheckpointer.committed``,
    which ``_commit_fast`` calls after the INSERT committed and before the
    tickets are settled: when the thread cannot start, the leader's exception
    fails every ticket of the batch ("the batch holding this append failed")
    although its entries are durable in the chain. The SDK then journals the
    entry as unwritten and `bitexact repair` writes it a second time.
    """
    _no_checkpoint_thread(monkeypatch)
    sqlite_store.create_run("r")
    refused: list[tuple[int, str]] = []
    for entry in make_chain("r", 64):
        steps_before = sqlite_store.head("r")[0]
        try:
            sqlite_store.append("r", entry)
        except StoreError as exc:
            refused.append((entry["step"], str(exc)))
            assert sqlite_store.head("r")[0] == steps_before, (
                f"append of step {entry['step']} raised {exc!r} but its entry was written"
            )


def test_close_after_the_checkpoint_thread_could_not_start_does_not_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``close()`` releases the store; here it raises ``RuntimeError: cannot join thread before it is started``.

    ``WalCheckpointer.committed`` assigns ``self._thread`` before ``start()``;
    when the start fails the unstarted thread stays, and ``stop()`` joins it.
    The store is then never closed (connections, lock descriptor leak).
    """
    _no_checkpoint_thread(monkeypatch)
    store = SQLiteStore(tmp_path / "s.db")
    store.create_run("r")
    for entry in make_chain("r", 64):
        try:
            store.append("r", entry)
        except StoreError:
            pass
    store.close()  # raises RuntimeError now
    with pytest.raises(StoreError):
        store.head("r")  # closed


# -- 2. the T-second checkpoint rule forgets its clock on a rebuild ----------


def test_a_checkpoint_due_by_time_is_still_minted_when_the_append_is_rebuilt_on_a_moved_head(
    store: Any, recorder_key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """"Checkpoints are minted every N entries or T seconds" (docs/architecture.md).

    Writer A started the run at t = 0 and no checkpoint has been minted since;
    at t = 10 (T = 5 s) its append is due one, and without the other writer it
    gets one. Another writer moved the head meanwhile, so A reloads
    and rebuilds: ``RunWriter._load_head`` restarts the clock at *now*
    (``checkpoint_at=time.monotonic()``), and the rebuilt append carries no
    checkpoint. Two writers alternating on one run therefore never get a
    time-based checkpoint at all.
    """
    clock = [0.0]
    monkeypatch.setattr(writer_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    recorder = Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=1000, seconds=5.0))
    a = recorder.start(name="two writers")  # t = 0: run_meta, no checkpoint yet
    b = recorder.attach(a.run_id)
    clock[0] = 1.0
    b.append("tool_call", {"tool": "b"})  # 1 s after the start: not due
    assert store.checkpoints(a.run_id) == []
    clock[0] = 10.0
    a.append("tool_call", {"tool": "a"})  # 10 s without a checkpoint: due, but A's head is stale
    steps = store.head(a.run_id)[0]
    covered = [cp["steps"] for cp in store.checkpoints(a.run_id)]
    assert covered == [steps], f"no checkpoint after 10 s with T = 5 s (checkpoints cover {covered})"


# -- 3. the checkpoint policy takes settings it should refuse ----------------


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"every": 0}, "every"),
        ({"every": -5}, "every"),
        ({"every": "64"}, "every"),
        ({"seconds": float("nan")}, "seconds"),
        ({"seconds": "2"}, "seconds"),
    ],
    ids=["every-0", "every-negative", "every-str", "seconds-nan", "seconds-str"],
)
def test_a_checkpoint_policy_refuses_an_unusable_setting_by_name(settings: dict[str, Any], field: str) -> None:
    """BITEXACT_CHECKPOINT_EVERY=0 and BITEXACT_CHECKPOINT_SECONDS=nan are refused by name (config.py:
    "nan would silently turn a time-based rule off"), but ``CheckpointPolicy(every=0)`` or
    ``CheckpointPolicy(seconds=nan)`` is taken as is: NaN silently turns the T-second rule off
    (``now - last >= nan`` is never true), 0 or a negative N checkpoints every append, and a
    string fails only later, with a TypeError from inside ``RunWriter._build`` on the first append.
    """
    with pytest.raises((ValueError, TypeError), match=field):
        CheckpointPolicy(**settings)


# -- 4. the writer drops entries when its slot lists are short ---------------


def test_append_batch_with_fewer_own_slots_than_items_is_refused_not_truncated(
    store: Any, recorder_key: SigningKey
) -> None:
    """``append_batch(items, own)``: "All land or none do". With ``own`` shorter than ``items``,
    ``zip`` truncates: the extra items are silently dropped, one result per written entry comes
    back, and nothing says so. The store refuses the same mistake (``append_many`` with fewer
    checkpoint slots than entries: RecordError naming ``checkpoints``)."""
    recorder = Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=1000, seconds=3600))
    writer = recorder.start(name="batch")
    items = [("tool_call", {"tool": f"t{i}"}, None) for i in range(3)]
    before = store.head(writer.run_id)[0]
    try:
        results = writer.append_batch(items, own=[None])
    except ValueError:
        results = None  # refused: right, as long as nothing was written
    after = store.head(writer.run_id)[0]
    if results is None:
        assert after == before
    else:
        assert after - before == len(items), f"{len(items)} items handed over, {after - before} written"


def test_append_each_with_fewer_own_flags_than_items_is_refused_not_truncated(
    store: Any, recorder_key: SigningKey
) -> None:
    """The same for ``append_each(items, own)`` (the SDK's queued writes): items past ``own`` vanish."""
    recorder = Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=1000, seconds=3600))
    writer = recorder.start(name="each")
    items = [("tool_call", {"tool": f"t{i}"}, None, None, None) for i in range(3)]
    before = store.head(writer.run_id)[0]
    try:
        results = writer.append_each(items, own=[False])
    except ValueError:
        results = None
    after = store.head(writer.run_id)[0]
    if results is None:
        assert after == before
    else:
        assert len(results) == len(items) and after - before == len(items), (
            f"{len(items)} items handed over, {len(results)} results, {after - before} written"
        )


# -- 5. `bitexact health --json` prints no JSON -------------------------------


def _health(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    env["BITEXACT_HOME"] = str(home)
    return subprocess.run(
        [str(Path(sys.executable).parent / "bitexact"), "health", *args],
        check=False, env=env, capture_output=True, text=True, timeout=120,
    )


def test_health_json_reports_a_data_directory_that_is_a_file_as_json(tmp_path: Path) -> None:
    """`bitexact health --json` must print one JSON document whatever is wrong ("--json output is
    valid JSON"; health: "what is wrong is what health is for: a finding, never a bare error").

    With BITEXACT_HOME naming a regular file (nothing can record: every open fails), health
    prints nothing on stdout, only "error: BITEXACT_HOME=... is a file" on stderr, from the
    group's check in ``cli/__init__.py:cli`` that runs before the command.
    """
    home = tmp_path / "home-is-a-file"
    home.write_text("not a directory\n", encoding="utf-8")
    result = _health(home, "--json")
    assert result.returncode == 2, (result.returncode, result.stderr)
    report = json.loads(result.stdout)  # JSONDecodeError: stdout is empty
    assert report["status"] == "critical"
