"""The write path: chaining, checkpoint cadence, the seal, and writers racing on one run."""

from __future__ import annotations

import threading

import pytest

from bitexact.capture import load_policy
from bitexact.crypto import GENESIS
from bitexact.errors import EvidenceError
from bitexact.evidence.checkpoint import checkpoint_link
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import Store


def test_a_run_opens_with_run_meta_and_chains_every_entry(recorder: Recorder, store: Store) -> None:
    writer = recorder.start(name="triage")
    writer.append("tool_call", {"tool": "a"})
    writer.append("context", {"name": "doc", "content": {"text": "x"}})
    writer.seal()
    entries = list(store.entries(writer.run_id))
    assert [e["kind"] for e in entries] == ["run_meta", "tool_call", "context", "run_end"]
    assert entries[0]["data"]["name"] == "triage"
    assert entries[0]["data"]["capture_policy"] == load_policy().run_meta_value  # the shipped default's digest
    assert len(entries[0]["data"]["capture_policy"]) == 64
    assert entries[0]["prev"] == GENESIS
    for before, after in zip(entries, entries[1:]):
        assert after["prev"] == before["hash"]
    assert entries[-1]["data"] == {"steps": 4}
    assert [e["prov"] for e in entries] == ["observed", "observed", "asserted", "observed"]


def test_checkpoints_every_n_entries_and_always_at_the_seal(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    for i in range(9):
        writer.append("tool_call", {"tool": "t", "args": [i]})
    writer.seal()  # 11 entries: checkpoints at 4, 8 and the seal at 11
    checkpoints = store.checkpoints(writer.run_id)
    assert [c["steps"] for c in checkpoints] == [4, 8, 11]
    assert checkpoints[0]["prev_checkpoint"] == GENESIS
    assert checkpoints[1]["prev_checkpoint"] == checkpoint_link(checkpoints[0])
    entries = list(store.entries(writer.run_id))
    assert all(c["head_hash"] == entries[c["steps"] - 1]["hash"] for c in checkpoints)


def test_time_based_checkpoints(store: Store, recorder_key) -> None:  # type: ignore[no-untyped-def]
    policy = CheckpointPolicy(every=1000, seconds=0.0)  # every append is "T seconds later"
    writer = Recorder(store, recorder_key, checkpoints=policy).start()
    writer.append("marker", {"note": "a"})
    assert [c["steps"] for c in store.checkpoints(writer.run_id)] == [1, 2]


def test_nothing_but_audit_entries_may_follow_the_seal(recorder: Recorder) -> None:
    writer = recorder.start()
    writer.seal()
    with pytest.raises(EvidenceError, match="is sealed"):
        writer.append("tool_call", {"tool": "late"})
    with pytest.raises(EvidenceError, match="is sealed"):
        writer.seal()
    writer.append("hold", {"reason": "litigation", "by": "legal", "placed_at": "2026-11-29"})


def test_two_writers_on_one_run_never_fork_the_chain(recorder: Recorder, store: Store) -> None:
    first = recorder.start()
    second = recorder.attach(first.run_id)  # as another process would: its own head
    first.append("marker", {"note": "from first"})
    second.append("marker", {"note": "from second, after a stale head"})
    first.append("marker", {"note": "first again"})
    entries = list(store.entries(first.run_id))
    assert [e["step"] for e in entries] == [0, 1, 2, 3]
    assert all(b["prev"] == a["hash"] for a, b in zip(entries, entries[1:]))


def test_thirty_two_threads_append_without_loss_or_fork(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    barrier = threading.Barrier(32)

    def work(n: int) -> None:
        barrier.wait()
        for i in range(10):
            writer.append("tool_call", {"tool": f"t{n}", "args": [i]})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = list(store.entries(writer.run_id))
    assert len(entries) == 1 + 320
    assert all(b["prev"] == a["hash"] for a, b in zip(entries, entries[1:]))
    seen = {(e["data"]["tool"], e["data"]["args"][0]) for e in entries[1:]}
    assert len(seen) == 320


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
def test_the_hash_algorithm_comes_from_the_environment(store: Store, recorder_key, monkeypatch, alg) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("BITEXACT_HASH_ALG", alg)
    writer = Recorder(store, recorder_key).start()
    assert store.entry(writer.run_id, 0)["alg"] == alg


def test_a_batch_is_one_commit_and_chains_like_single_appends(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    results = writer.append_batch([("tool_call", {"tool": f"t{i}"}, None) for i in range(10)])
    assert [r.step for r in results] == list(range(1, 11))
    entries = list(store.entries(writer.run_id))
    assert all(b["prev"] == a["hash"] for a, b in zip(entries, entries[1:]))
    assert [c["steps"] for c in store.checkpoints(writer.run_id)] == [4, 8]  # every 4, as configured
    writer.append("marker", {"note": "after the batch"})
    assert store.head(writer.run_id)[0] == 12


def test_a_batch_declares_gaps_beside_their_entries(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    results = writer.append_batch([("tool_call", {"tool": "t", "capture": {"forged": True}}, None),
                                   ("tool_call", {"tool": "ok"}, None)])
    kinds = [store.entry(writer.run_id, r.step)["kind"] for r in results]
    assert kinds == ["marker", "tool_call"]
    gap = store.entry(writer.run_id, results[0].step)["data"]["gap"]
    assert gap["cause"] == "invalid_argument" and gap["step"] is None


def test_a_batch_that_crosses_the_seal_writes_nothing(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    with pytest.raises(EvidenceError, match="is sealed"):
        writer.append_batch([("run_end", {"steps": 2}, None), ("tool_call", {"tool": "late"}, None)])
    assert store.head(writer.run_id)[0] == 1
    assert not writer.sealed


def test_the_store_knows_every_key_that_signed_for_it(recorder: Recorder, store: Store) -> None:
    recorder.start()
    assert [k["key_id"] for k in store.keys()] == [recorder.key.key_id]
    Recorder(store, recorder.key)  # a second write path with the same key adds nothing
    assert len(store.keys()) == 1
