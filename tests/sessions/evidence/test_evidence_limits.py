"""Bundle limits and the capture policy: deep events, unsafe numbers, skipped records, scrubbed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.canon import canonicalize, loads
from bitexact.crypto import SigningKey
from bitexact.recording import Recorder
from bitexact.sessions.evidence import (
    SessionInputError,
    SessionSource,
    SourceEvent,
    import_session,
    load_session,
    read_session,
)
from bitexact.store import Store
from tests.sessions.evidence.conftest import FIXTURES, entries, verify_run

INIT = {"type": "session.init", "data": {"sourceEngine": "copilot"}}


def nested(levels: int) -> object:
    value: object = 0
    for _ in range(levels):
        value = [value]
    return value


def jsonl(*events: dict) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def event_entry(store: Store, run_id: str, event_type: str) -> dict:
    (entry,) = [e for e in entries(store, run_id) if e["data"].get("type") == event_type]
    return entry


def test_data_at_the_depth_limit_stays_structured_and_one_deeper_becomes_text(
    plain_recorder: Recorder, store: Store, recorder_key: SigningKey
) -> None:
    # The entry's data is level 1 and the event's data object level 2, so
    # 123 lists inside it reach level 125 (the limit) and 124 go one past it.
    at_limit = {"type": "vendor.at_limit", "data": {"x": nested(123)}, "id": "e1"}
    too_deep = {"type": "vendor.too_deep", "data": {"x": nested(124)}, "id": "e2"}
    source = load_session(jsonl(INIT, at_limit, too_deep), "deep.jsonl")
    result = import_session(plain_recorder, source)
    kept = event_entry(store, result.run_id, "vendor.at_limit")["data"]
    assert kept["data"] == at_limit["data"] and "as_text" not in kept
    text = event_entry(store, result.run_id, "vendor.too_deep")["data"]
    assert "data" not in text and text["as_text"] == {"data": "canonical-json"}
    assert loads(text["data_json"]) == too_deep["data"]
    assert text["meta"] == {"id": "e2"}
    verdict = verify_run(store, recorder_key, result.run_id)
    assert verdict.ok, verdict.line


def test_structures_canon_refuses_even_as_text_are_kept_as_sorted_json(plain_recorder: Recorder, store: Store,
                                                                       recorder_key: SigningKey) -> None:
    abyss = {"type": "vendor.abyss", "data": {"x": nested(200), "n": 2**64}}
    result = import_session(plain_recorder, load_session(jsonl(INIT, abyss), "abyss.jsonl"))
    data = event_entry(store, result.run_id, "vendor.abyss")["data"]
    assert data["as_text"] == {"data": "json"}
    assert json.loads(data["data_json"]) == abyss["data"]
    assert "coerced" not in data  # the number is exact in the text; nothing was rewritten
    assert verify_run(store, recorder_key, result.run_id).ok


def test_numbers_canonical_json_refuses_are_recorded_as_strings_and_named(
    plain_recorder: Recorder, store: Store, recorder_key: SigningKey
) -> None:
    big = {"type": "vendor.numbers", "data": {"n": 2**53 + 1, "z": -0.0, "ok": 2**53 - 1, "f": 1.5,
                                              "list": [-(2**60)]}, "seq": 2**63}
    result = import_session(plain_recorder, load_session(jsonl(INIT, big), "numbers.jsonl"))
    data = event_entry(store, result.run_id, "vendor.numbers")["data"]
    assert data["data"] == {"n": "9007199254740993", "z": "-0.0", "ok": 2**53 - 1, "f": 1.5,
                            "list": [str(-(2**60))]}
    assert data["meta"] == {"seq": str(2**63)}
    assert data["coerced"] == {"unsafe_integer": ["/data/n", "/data/list/0", "/seq"], "negative_zero": ["/data/z"]}
    assert verify_run(store, recorder_key, result.run_id).ok


def test_parser_diagnostics_become_one_marker_with_count_and_positions(plain_recorder: Recorder, store: Store) -> None:
    path = FIXTURES / "gemini/stream_json_session_with_deltas_and_stats.jsonl"
    source = read_session(path)
    result = import_session(plain_recorder, source)
    marker = store.entry(result.run_id, 1)
    assert (marker["kind"], marker["prov"]) == ("marker", "asserted")
    assert marker["data"]["count"] == len(source.diagnostics) == 2
    assert marker["data"]["positions"] == [5, 14]
    body = canonicalize(marker["data"]).decode()
    assert '"role"' not in body and "cached credentials" not in body  # the skipped lines' text


def test_quoted_literals_of_skipped_records_do_not_reach_the_chain(plain_recorder: Recorder, store: Store) -> None:
    path = FIXTURES / "opencode/run_format_json_session.jsonl"
    source = read_session(path)
    assert any("'text'" in d for d in source.diagnostics)
    result = import_session(plain_recorder, source)
    marker = store.entry(result.run_id, 1)
    assert "'text'" not in canonicalize(marker["data"]).decode()
    assert marker["data"]["positions"] == [15]


def test_the_capture_policy_in_force_applies_to_imported_events(recorder: Recorder, store: Store,
                                                                 tmp_path: Path) -> None:
    card = "4111 1111 1111 1111"
    log = tmp_path / "card.jsonl"
    log.write_bytes(jsonl(INIT, {"type": "user.message", "data": {"content": f"pay with {card}"}}))
    result = import_session(recorder, read_session(log))
    stored = canonicalize(entries(store, result.run_id)).decode()
    assert card not in stored
    message = event_entry(store, result.run_id, "user.message")
    assert message["capture"]["fields"]["data.content"]["mode"] == "scrub"


@pytest.mark.parametrize("data, message", [
    (b"", "no recognizable session events"),
    (b"just some prose\nand more\n", "no recognizable session events"),
    (b'{"type": "user.message", "data": {"content": "\xff"}}\n', "not UTF-8"),
])
def test_inputs_without_events_or_text_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(SessionInputError, match=message):
        load_session(data, "input.log")


def test_unreadable_paths_are_refused_with_the_path(tmp_path: Path) -> None:
    with pytest.raises(SessionInputError, match="cannot read"):
        read_session(tmp_path / "missing.jsonl")
    with pytest.raises(SessionInputError, match="is a directory"):
        read_session(tmp_path)


def test_keys_canon_cannot_write_make_the_event_text_instead_of_dropping_it(
    plain_recorder: Recorder, store: Store, recorder_key: SigningKey
) -> None:
    # "\ud83d\ude00" as two code points and the astral character it folds to
    # are one key to canonical JSON (bundle spec §1.2): such an event is kept
    # as JSON text.
    clash = {"type": "vendor.clash", "data": {"\ud83d\ude00": 1, "\U0001F600": 2}, "id": "k1"}
    source = SessionSource("clash.jsonl", "ab" * 32, 1, "custom", "log",
                           (SourceEvent(0, {"type": "session.init", "data": {}}), SourceEvent(1, clash)))
    result = import_session(plain_recorder, source)
    data = event_entry(store, result.run_id, "vendor.clash")["data"]
    assert data["as_text"] == {"data": "json", "meta": "canonical-json"}
    # Both members survive in the text (canonical storage folds the pair inside the string too).
    assert data["data_json"] == '{"\U0001F600":1,"\U0001F600":2}'
    assert loads(data["meta_json"]) == {"id": "k1"}
    assert verify_run(store, recorder_key, result.run_id).ok
