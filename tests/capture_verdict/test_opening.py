"""Opening a hash-only field or a gap's withheld digest: recorded on the custody chain first, then tested."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bitexact.canon import canonicalize
from bitexact.capture import FieldNotOpenableError
from bitexact.capture.opening import (
    CustodyUnrecordedError,
    OpeningRefusedError,
    open_hash_only,
    open_withheld_gap,
    parse_candidate,
)
from bitexact.crypto import SigningKey
from bitexact.store import DB_NAME, Store
from capture_verdict.support import CONTRACT_POLICY, policy_with, recorder, write_key


@pytest.fixture
def keyed(tmp_path: Path) -> dict:
    return {**CONTRACT_POLICY, "hash_only_key": {"file": str(write_key(tmp_path / "k.key"))}}


def _identity_run(store: Store, recorder_key: SigningKey, policy_doc: dict, value: str = "user:7f3a9c") -> str:
    writer = recorder(store, recorder_key, policy_with(policy_doc)).start()
    writer.append("identity", {"principal": "svc:claims", "on_behalf_of": value})
    return writer.run_id


def test_a_matching_candidate_opens_and_the_test_is_on_the_custody_chain(
    store: Store, recorder_key: SigningKey, keyed: dict
) -> None:
    policy = policy_with(keyed)
    run_id = _identity_run(store, recorder_key, keyed)
    result = open_hash_only(store, run_id, 1, "on_behalf_of", "user:7f3a9c", by="alice", policy=policy)
    assert result.matched and result.key_id == policy.key_id
    [record] = store.custody(run_id)
    assert record["event"] == "open-hash-only" and record["role"] == "verify"
    assert (record["principal"], record["step"], record["path"], record["key_id"]) == (
        "alice", 1, "on_behalf_of", policy.key_id)
    assert "at" in record and "user:7f3a9c" not in repr(record)


def test_a_wrong_candidate_does_not_open_and_is_recorded_all_the_same(
    store: Store, recorder_key: SigningKey, keyed: dict
) -> None:
    policy = policy_with(keyed)
    run_id = _identity_run(store, recorder_key, keyed)
    guesses = ["user:7f3a9d", "USER:7F3A9C", ["user:7f3a9c"], None]
    results = [open_hash_only(store, run_id, 1, "on_behalf_of", g, by="mallory", policy=policy) for g in guesses]
    assert [r.matched for r in results] == [False] * len(guesses)
    assert [r["principal"] for r in store.custody(run_id)] == ["mallory"] * len(guesses)
    assert [r.custody_seq for r in results] == list(range(len(guesses)))


def test_the_candidate_file_holds_json() -> None:
    assert parse_candidate(b'"user:7f3a9c"\n', "c.json") == "user:7f3a9c"
    with pytest.raises(OpeningRefusedError, match="c.json: not a JSON value"):
        parse_candidate(b"user:7f3a9c\n", "c.json")


def test_a_field_committed_with_no_key_can_never_be_opened(store: Store, recorder_key: SigningKey, keyed: dict) -> None:
    run_id = _identity_run(store, recorder_key, CONTRACT_POLICY)
    with pytest.raises(FieldNotOpenableError, match="never be opened"):
        open_hash_only(store, run_id, 1, "on_behalf_of", "user:7f3a9c", by="alice", policy=policy_with(keyed))
    assert store.custody(run_id) == []


def test_a_field_that_is_not_hash_only_is_refused(store: Store, recorder_key: SigningKey, keyed: dict) -> None:
    writer = recorder(store, recorder_key, policy_with(keyed)).start()
    writer.append("tool_call", {"tool": "pay", "args": ["4111111111111111"]})
    with pytest.raises(FieldNotOpenableError, match="args is scrub, not hash-only"):
        open_hash_only(store, writer.run_id, 1, "args", ["x"], by="alice", policy=policy_with(keyed))
    with pytest.raises(OpeningRefusedError, match="no field 'result' is declared"):
        open_hash_only(store, writer.run_id, 1, "result", "x", by="alice", policy=policy_with(keyed))
    with pytest.raises(OpeningRefusedError, match="has no step 9"):
        open_hash_only(store, writer.run_id, 9, "args", "x", by="alice", policy=policy_with(keyed))
    with pytest.raises(OpeningRefusedError, match="--by"):
        open_hash_only(store, writer.run_id, 1, "args", "x", by=" ", policy=policy_with(keyed))
    assert store.custody(writer.run_id) == []


def test_a_key_the_policy_no_longer_holds_is_named_by_its_id(
    store: Store, recorder_key: SigningKey, keyed: dict, tmp_path: Path
) -> None:
    run_id = _identity_run(store, recorder_key, keyed)
    old_id = policy_with(keyed).key_id
    other = policy_with({**CONTRACT_POLICY, "hash_only_key": {"file": str(write_key(tmp_path / "new.key"))}})
    with pytest.raises(OpeningRefusedError, match=f"capture key {old_id}, which the policy in force does not hold"):
        open_hash_only(store, run_id, 1, "on_behalf_of", "user:7f3a9c", by="alice", policy=other)
    assert store.custody(run_id) == []


def test_after_a_rotation_the_retired_key_opens_and_is_named(
    store: Store, recorder_key: SigningKey, keyed: dict, tmp_path: Path
) -> None:
    run_id = _identity_run(store, recorder_key, keyed)
    old_id = policy_with(keyed).key_id
    rotated = policy_with({**CONTRACT_POLICY, "hash_only_key": {"file": str(write_key(tmp_path / "new.key"))},
                           "retired_keys": [keyed["hash_only_key"]]})
    result = open_hash_only(store, run_id, 1, "on_behalf_of", "user:7f3a9c", by="alice", policy=rotated)
    assert result.matched and result.key_id == old_id != rotated.key_id
    assert store.custody(run_id)[0]["key_id"] == old_id


def test_a_test_that_cannot_be_recorded_is_not_made(
    store: Store, recorder_key: SigningKey, keyed: dict, home: Path
) -> None:
    run_id = _identity_run(store, recorder_key, keyed)
    # A real failure of the real store: the custody table refuses inserts.
    conn = sqlite3.connect(home / DB_NAME)
    conn.execute("CREATE TRIGGER no_custody BEFORE INSERT ON custody BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    conn.commit()
    conn.close()

    # A candidate the test itself would refuse (it is no JSON value): reaching the test would raise
    # "the test could not be made", so "nothing was tested" shows the record came first and stopped it.
    with pytest.raises(CustodyUnrecordedError, match="nothing was tested"):
        open_hash_only(store, run_id, 1, "on_behalf_of", object(), by="alice", policy=policy_with(keyed))
    conn = sqlite3.connect(home / DB_NAME)
    conn.execute("DROP TRIGGER no_custody")
    conn.commit()
    conn.close()
    with pytest.raises(OpeningRefusedError, match="the test could not be made"):
        open_hash_only(store, run_id, 1, "on_behalf_of", object(), by="alice", policy=policy_with(keyed))
    assert [r["event"] for r in store.custody(run_id)] == ["open-hash-only"]


def _identity_gap_run(tmp_path: Path, home: Path, keyed: dict, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    """An SDK identity whose on_behalf_of_type is refused: the gap withholds it under a keyed digest."""
    import bitexact
    from bitexact.sdk import close_stores

    policy_path = tmp_path / "policy.json"
    import json

    policy_path.write_text(json.dumps(keyed), encoding="utf-8")
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", str(policy_path))
    with bitexact.run(name="gap", home=home) as r:
        r.identity(principal="svc:x", on_behalf_of_type="human")
        run_id = r.run_id
    close_stores()
    return run_id, 2


def test_open_withheld_tests_exact_bytes(
    tmp_path: Path, home: Path, keyed: dict, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    run_id, step = _identity_gap_run(tmp_path, home, keyed, monkeypatch)
    policy = policy_with(keyed)
    withheld = canonicalize({"on_behalf_of_type": "human"})
    assert open_withheld_gap(store, run_id, step, withheld, by="alice", policy=policy).matched
    assert not open_withheld_gap(store, run_id, step, withheld + b"\n", by="alice", policy=policy).matched
    records = store.custody(run_id)
    assert [(r["event"], r["step"], r["key_id"]) for r in records] == [("open-withheld", step, policy.key_id)] * 2
    with pytest.raises(OpeningRefusedError, match="step 1 is not a gap"):
        open_withheld_gap(store, run_id, 1, withheld, by="alice", policy=policy)


def test_a_withheld_digest_dropped_for_want_of_a_key_never_opens(
    tmp_path: Path, home: Path, keyed: dict, monkeypatch: pytest.MonkeyPatch, store: Store
) -> None:
    run_id, step = _identity_gap_run(tmp_path, home, CONTRACT_POLICY, monkeypatch)
    with pytest.raises(FieldNotOpenableError, match="dropped: no capture key"):
        open_withheld_gap(store, run_id, step, b"{}", by="alice", policy=policy_with(keyed))
    assert store.custody(run_id) == []
