"""The capture policy runs in the write path, before anything reaches the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bitexact.canon import canonicalize
from bitexact.capture import load_policy
from bitexact.crypto import SigningKey
from bitexact.recording import Recorder
from bitexact.store import Store

CARD = "4111 1111 1111 1111"
IBAN = "DE89370400440532013000"


def test_card_numbers_and_ibans_never_reach_the_store(recorder: Recorder, store: Store, home: Path) -> None:
    writer = recorder.start()
    writer.append("tool_call", {"tool": "pay", "args": [CARD], "result": {"iban": IBAN, "ok": True}})
    entry = store.entry(writer.run_id, 1)
    text = canonicalize(entry).decode()
    assert CARD not in text and IBAN not in text
    assert entry["capture"]["fields"]  # declared, inside the hash
    raw = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert CARD.encode() not in raw and IBAN.encode() not in raw
    assert CARD.replace(" ", "").encode() not in raw


def test_run_meta_names_off_when_the_policy_is_off(store: Store, recorder_key: SigningKey,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")
    writer = Recorder(store, recorder_key).start()
    writer.append("tool_call", {"tool": "pay", "args": [CARD]})
    assert store.entry(writer.run_id, 0)["data"]["capture_policy"] == "off"
    assert store.entry(writer.run_id, 1)["data"]["args"] == [CARD]  # kept, as the policy says


def test_an_invalid_hint_withholds_the_entry_and_declares_a_gap(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    result = writer.append("tool_call", {"tool": "kyc", "result": "Jane Roe"}, hints={"result": "shred"})
    entry = store.entry(writer.run_id, result.step)
    assert entry["kind"] == "marker"
    assert entry["data"]["gap"]["cause"] == "invalid_argument"
    assert "Jane Roe" not in canonicalize(list(store.entries(writer.run_id))).decode()


def test_a_hash_only_hint_keeps_the_value_out_and_declares_it(recorder: Recorder, store: Store) -> None:
    writer = recorder.start()
    result = writer.append("tool_call", {"tool": "kyc", "result": "Jane Roe"}, hints={"result": "hash-only"})
    entry = store.entry(writer.run_id, result.step)
    assert entry["data"]["result"] != "Jane Roe"
    assert entry["capture"]["fields"]["result"]["mode"] == "hash-only"
    assert "Jane Roe" not in canonicalize(list(store.entries(writer.run_id))).decode()


def test_the_recorder_uses_the_policy_in_force(recorder: Recorder) -> None:
    assert recorder.policy.run_meta_value == load_policy().run_meta_value


def test_nothing_sensitive_in_the_sqlite_file_pages(recorder: Recorder, home: Path) -> None:
    writer = recorder.start()
    writer.append("http_call", {"request": {"method": "POST", "path": "/pay", "query": {}, "headers": {},
                                            "text": f'{{"card": "{CARD}"}}'},
                                "response": {"status": 200, "text": "ok"}})
    dbs = list(home.glob("*.db*"))
    assert dbs
    for db in dbs:
        assert CARD.encode() not in db.read_bytes()
    con = sqlite3.connect(home / "bitexact.db")
    try:
        rows = con.execute("select count(*) from sqlite_master").fetchone()
    finally:
        con.close()
    assert rows[0] > 0
