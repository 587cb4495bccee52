"""Edges of tool wrappers, record handles, large entries and concurrency, found in the sixth review."""

from __future__ import annotations

import asyncio
import fcntl
import math
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.sdk.errors import RecordingError, SdkArgumentError
from bitexact.sdk.failures import read_failures
from bitexact.store import DB_NAME, SQLiteStore
from sdk.conftest import entries, journaled


def _tool_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "tool_call"]


def test_record_tool_wraps_static_and_class_methods_and_callables_that_take_no_weak_reference() -> None:
    """record_tool raised TypeError (no weak reference to a staticmethod, a classmethod or a __slots__
    callable) where the tool was wrapped; an async staticmethod would have been taken for a sync one."""

    class Tools:
        @bitexact.record_tool
        @staticmethod
        def double(x: int) -> int:
            return x * 2

        @bitexact.record_tool(name="triple")
        @classmethod
        def triple(cls, x: int) -> int:
            return x * 3

        @bitexact.record_tool
        @staticmethod
        async def negate(x: int) -> int:
            await asyncio.sleep(0)
            return -x

    class Slotted:
        __slots__ = ()

        def __call__(self, x: int) -> int:
            return x + 1

    slotted = bitexact.record_tool(Slotted())
    with bitexact.run() as r:
        assert Tools.double(2) == 4 and Tools().double(3) == 6
        assert Tools.triple(2) == 6 and Tools().triple(1) == 3
        assert asyncio.run(Tools().negate(5)) == -5
        assert slotted(1) == 2
    calls = [(c["data"]["tool"], c["data"]["result"]) for c in _tool_calls(r.run_id)]
    assert calls == [("double", 4), ("double", 6), ("triple", 6), ("triple", 3), ("negate", -5), ("Slotted", 2)]


def test_record_refuses_a_provenance_its_kind_cannot_carry_naming_prov() -> None:
    """A prov the kind cannot carry was a gap named only 'EvidenceError' (small entry), or a journal
    kept for a repair that could never fold it and a run left unsealed (large entry), not a refusal."""
    with bitexact.run() as r:
        for prov in ("observed", "bogus", "", 5):
            with pytest.raises(SdkArgumentError, match="prov") as raised:
                r.record("marker", {"note": "x" * ((1 << 20) + 1)}, prov=prov)  # type: ignore[arg-type]
            assert raised.value.field == "prov"
            with pytest.raises(SdkArgumentError, match="prov"):
                r.record("marker", {"note": "small"}, prov=prov)  # type: ignore[arg-type]
        assert r.record("tool_call", {"tool": "t"}, prov="observed").written
        assert r.record("marker", {"note": "n"}, prov="asserted").written
    assert r.sealed and r.failures.gaps == []
    assert [e["prov"] for e in entries(r.run_id)] == ["observed", "observed", "asserted", "observed"]


def test_an_entry_the_write_path_withholds_whole_is_a_declared_gap_and_its_handle_reads_empty(
    home: Path, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    """An entry the capture policy withholds whole (a hint naming a sub-key of a non-object, data holding
    the collector's own `capture` key) read as written: its handle was the gap's marker entry, and the
    failures record and the log said nothing."""
    with bitexact.run() as r:
        small = r.record("tool_call", {"tool": "t", "result": "plain"}, custody={"result.holder": "hash-only"})
        large = r.record("marker", {"note": "x" * ((1 << 20) + 1), "capture": {"by": "me"}})
        assert large.result(10) == {} and dict(small) == {}
        assert not small.written and not large.written
        assert small.gap is not None and small.gap.cause == "invalid_argument" and small.gap.seq == small.seq
        assert large.gap is not None and large.gap.kind == "marker"
        decision = r.human_decision("ops:a", "approve", binds_step=small)
        assert decision["data"]["binds_step"] is None and decision["data"]["binds_record"] == "tool_call #1"
    assert [(g.kind, g.seq) for g in r.failures.gaps] == [("tool_call", 1), ("marker", 2)]
    assert [g["kind"] for g in read_failures(home, r.run_id)] == ["tool_call", "marker"]  # type: ignore[arg-type]
    assert len([m for m in sdk_warnings.messages if "recording gap invalid_argument" in m]) == 2
    written = entries(r.run_id)
    assert [e["kind"] for e in written] == ["run_meta", "marker", "marker", "human_decision", "run_end"]
    assert all("withheld whole" in e["data"]["note"] for e in written[1:3]), "one gap marker each, the policy's"
    assert r.sealed and journaled(home, r.run_id) == []


def test_a_strict_run_raises_for_an_entry_the_write_path_withholds_whole() -> None:
    """Strict mode answered as if an entry withheld whole by the capture policy had been written."""
    with bitexact.run(strict=True) as r:
        with pytest.raises(RecordingError) as raised:
            r.record("marker", {"note": "n", "capture": {}})
        assert raised.value.cause == "invalid_argument"
    assert [e["kind"] for e in entries(r.run_id)] == ["run_meta", "marker", "run_end"]


def test_drain_takes_an_unbounded_or_nan_timeout_as_a_handle_does(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """r.drain(math.inf) raised OverflowError while entries were queued, and r.drain(nan) waited as long
    as the queue took; handle.result() takes both (inf: as long as a wait can; nan: no wait)."""
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "5")  # bounds the writer's wait if the lock were never let go
    with bitexact.run() as r:
        r.marker("store opened")
        fd = os.open(home / "bitexact.db.lock", os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)  # as another process writing would: the queued entry waits
        try:
            handle = r.record("marker", {"note": "x" * ((1 << 20) + 1)})
            assert r.drain(float("nan")) is False and not handle.done
            threading.Timer(0.2, fcntl.flock, (fd, fcntl.LOCK_UN)).start()
            assert r.drain(math.inf) is True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        assert handle.written
    assert r.sealed


def test_the_unsealed_runs_warning_names_a_repair_command_that_runs(
    home: Path, monkeypatch: pytest.MonkeyPatch, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    """The exit's warning said `bitexact repair RUN`, which fails with a usage error (--by and --note
    are required): the command it names must be one that runs."""
    monkeypatch.setenv("BITEXACT_DRAIN_TIMEOUT", "0.2")
    scope = bitexact.run()
    r = scope.__enter__()
    r.marker("store opened")
    fd = os.open(home / "bitexact.db.lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        r.record("marker", {"note": "x" * ((1 << 20) + 1)})
        scope.__exit__(None, None, None)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert not r.sealed
    (line,) = [m for m in sdk_warnings.messages if "left unsealed" in m]
    assert f"`bitexact repair {r.run_id} --by " in line and " --note " in line
    r.drain(10)


def test_an_identity_and_its_gap_marker_are_never_split_by_another_threads_record() -> None:
    """r.identity submitted its entry and its gap marker in two separate holds of the record order, so
    another thread's record could land between them (the gap is "right after the identity entry")."""
    with bitexact.run() as r:
        other = threading.Thread(target=r.marker, args=("another thread",))

        def between(frame: Any, event: str, arg: Any) -> None:
            # As the identity's gap marker is about to be submitted, another thread records.
            if event == "call" and frame.f_code.co_name == "_submit" and frame.f_back.f_code.co_name == "identity" \
                    and frame.f_locals.get("kind") == "marker" and not other.is_alive():
                other.start()
                other.join(0.3)  # it lands now unless the identity still holds the record order
            return None

        sys.settrace(between)
        try:
            r.identity(principal="svc:claims", on_behalf_of=12345)  # a number is refused: a gap beside it
        finally:
            sys.settrace(None)
        other.join(10)
    kinds_notes = [(e["kind"], e["data"].get("note", "")) for e in entries(r.run_id)[1:-1]]
    assert kinds_notes == [("identity", ""), ("marker", "identity fields refused: on_behalf_of"),
                           ("marker", "another thread")]


def test_record_tool_call_refuses_a_mapping_or_bytes_as_args_instead_of_keeping_only_its_keys() -> None:
    """args={"policy": "HX-1"} was recorded as ["policy"] (its keys: the values silently lost), and
    bytearray args as a list of numbers; str and bytes were already refused, naming args."""
    with bitexact.run() as r:
        for args in ({"policy": "HX-1"}, bytearray(b"ab"), memoryview(b"ab")):
            with pytest.raises(SdkArgumentError, match="args") as raised:
                r.record_tool_call("lookup", args=args, result=1)
            assert raised.value.field == "args"
        assert r.record_tool_call("lookup", args=("HX-1",), kwargs={"policy": "HX-1"}, result=1).written
    (call,) = _tool_calls(r.run_id)
    assert call["data"]["args"] == ["HX-1"] and call["data"]["kwargs"] == {"policy": "HX-1"}


def test_record_tool_refuses_a_name_that_is_no_tool_name_where_the_tool_is_wrapped(
    sdk_warnings: pytest.LogCaptureFixture,
) -> None:
    """record_tool(name=7) or name="  " was taken where the tool was wrapped; then every call of the tool
    was a gap ("capture failed") instead of a tool_call, and nothing said why at the wrapping."""
    def lookup(policy: str) -> str:
        return policy

    for bad in (7, "  ", ""):
        with pytest.raises(SdkArgumentError, match="name") as raised:
            bitexact.record_tool(name=bad)(lookup)  # type: ignore[arg-type]
        assert raised.value.field == "name"
    named = bitexact.record_tool(name="lookup_v2")(lookup)
    with bitexact.run() as r:
        assert named("HX-1") == "HX-1"
    assert [c["data"]["tool"] for c in _tool_calls(r.run_id)] == ["lookup_v2"] and r.failures.gaps == []


def test_a_run_opened_inside_a_tool_records_none_of_the_enclosing_tools_ctx(tmp_path: Path) -> None:
    """A run opened inside a tool of another run stamped its own entries `ctx=<outer tool>`, a tool whose
    call is in the other run's chain; tools called inside the nested run still carry their own ctx."""
    @bitexact.record_tool
    def inner_tool() -> int:
        bitexact.current_run().marker("inside the inner tool")  # type: ignore[union-attr]
        return 1

    nested: list[str | None] = []

    @bitexact.record_tool
    def outer_tool() -> int:
        with bitexact.run(home=tmp_path / "nested", strict=True) as inner:
            inner.marker("in the nested run")
            inner_tool()
        nested.append(inner.run_id)
        return 2

    with bitexact.run(home=tmp_path / "outer", strict=True) as outer:
        outer_tool()
    store = SQLiteStore(tmp_path / "nested" / DB_NAME)
    try:
        rows = [(e["kind"], e.get("ctx")) for e in store.entries(nested[0]) if e["kind"] in ("marker", "tool_call")]
    finally:
        store.close()
    assert rows == [("marker", None), ("marker", "inner_tool"), ("tool_call", None)]
    assert outer.run_id is not None


def test_a_handle_survives_a_deep_copy_of_the_agents_state_and_refuses_pickling_clearly() -> None:
    """`copy.deepcopy` of agent state holding a RecordHandle raised `TypeError: cannot pickle '_thread.lock'`
    (frameworks deep-copy their state between steps); pickling said the same, naming no handle."""
    import copy
    import pickle

    with bitexact.run(strict=True) as r:
        handle = r.marker("checkpointed state")
        state = {"messages": ["hi"], "last": handle}
        copied = copy.deepcopy(state)
        assert copied["last"] is handle and copied["messages"] == ["hi"] and copied["messages"] is not state["messages"]
        assert copy.copy(handle) is handle
        with pytest.raises(TypeError, match=r"RecordHandle \(marker #\d+\).*cannot be pickled"):
            pickle.dumps(state)
        assert dict(copied["last"])["kind"] == "marker"


def test_an_entry_of_another_run_made_inside_a_tool_names_no_tool_of_this_one(tmp_path: Path) -> None:
    """`r.marker(...)` (or an exchange of a client wrapped for run r) made inside a `@record_tool` of another
    run s carried `ctx=<s's tool>`, a tool whose call is only in s's chain."""
    opened = threading.Event()
    done = threading.Event()
    other: list[Any] = []

    def hold_other_run() -> None:
        with bitexact.run(home=tmp_path / "other", strict=True) as r:
            other.append(r)
            opened.set()
            done.wait(30)

    holder = threading.Thread(target=hold_other_run)
    holder.start()
    assert opened.wait(30)
    (r,) = other

    @bitexact.record_tool
    def fetch() -> int:
        r.marker("made inside s's tool")
        bitexact.current_run().marker("s's own")  # type: ignore[union-attr]
        return 1

    try:
        with bitexact.run(home=tmp_path / "this", strict=True) as s:
            fetch()
    finally:
        done.set()
        holder.join(30)
    stored = {}
    for home, run in ((tmp_path / "other", r), (tmp_path / "this", s)):
        store = SQLiteStore(home / DB_NAME)
        try:
            stored[home.name] = [(e["kind"], e.get("ctx")) for e in store.entries(run.run_id) if e["kind"] == "marker"]
        finally:
            store.close()
    assert stored == {"other": [("marker", None)], "this": [("marker", "fetch")]}
