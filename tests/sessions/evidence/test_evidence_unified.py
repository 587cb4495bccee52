"""Unified aw_session.jsonl files: the header is read first, provenance and lines are kept."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bitexact.canon import canonicalize
from bitexact.crypto import SigningKey
from bitexact.recording import Recorder
from bitexact.sessions.evidence import SessionInputError, import_session, load_session, read_session
from bitexact.store import Store
from tests.sessions.evidence.conftest import DATA, entries, verify_run

UNIFIED = DATA / "aw_session.jsonl"


def records() -> list[tuple[int, dict]]:
    """(line, record) of every well-formed line of the hand-made unified file."""
    out = []
    for number, line in enumerate(UNIFIED.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError:
            continue
    return out


@pytest.mark.uas("T-UAS-055", "T-UAS-064", "T-UAS-007")
def test_every_record_is_an_entry_with_its_provenance_line_and_index(
    plain_recorder: Recorder, store: Store, recorder_key: SigningKey
) -> None:
    source = read_session(UNIFIED)
    assert (source.format, source.engine, source.format_version) == ("unified", "unified", 1)
    result = import_session(plain_recorder, source)
    recorded = entries(store, result.run_id)
    expected = records()
    # run_meta, the skipped-line marker, one entry per record, run_end
    assert len(recorded) == 1 + 1 + len(expected) + 1
    digest = hashlib.sha256(UNIFIED.read_bytes()).hexdigest()
    for index, (entry, (line, record)) in enumerate(zip(recorded[2:-1], expected)):
        data = entry["data"]
        assert entry["prov"] == "asserted"
        assert {"type": data["type"], "data": data["data"], **data["meta"]} == record
        assert data["meta"]["provenance"] == record["provenance"]
        assert data["index"] == index
        assert data["source"] == {"sha256": digest, "name": UNIFIED.name, "engine": "unified", "format": "unified",
                                  "line": line}
    verdict = verify_run(store, recorder_key, result.run_id)
    assert verdict.ok, verdict.line


@pytest.mark.uas("T-UAS-064")
def test_the_header_is_told_apart_from_a_source_native_session_format(plain_recorder: Recorder, store: Store) -> None:
    result = import_session(plain_recorder, read_session(UNIFIED))
    formats = [e["data"] for e in entries(store, result.run_id) if e["data"].get("type") == "session.format"]
    assert [f["data"]["version"] for f in formats] == [1, 99]
    assert formats[0]["meta"]["provenance"]["component"] == "collector"
    assert formats[1]["meta"]["id"] == "native-format"
    assert store.entry(result.run_id, 0)["data"]["import"]["format_version"] == 1


def test_a_malformed_line_is_declared_by_position_never_by_content(plain_recorder: Recorder, store: Store) -> None:
    result = import_session(plain_recorder, read_session(UNIFIED))
    marker = store.entry(result.run_id, 1)
    assert (marker["kind"], marker["prov"]) == ("marker", "asserted")
    assert marker["data"]["count"] == 1 and marker["data"]["positions"] == [9]
    assert "line 9" in marker["data"]["note"]
    assert b"api.example.com" not in canonicalize(marker)
    assert result.diagnostics == ("line 9: invalid JSON; record skipped",)


@pytest.mark.uas("T-UAS-064")
@pytest.mark.parametrize("version", [2, 0, "1", True])
def test_a_missing_invalid_or_unsupported_version_is_reported_not_assumed(version: object) -> None:
    header = {"type": "session.format", "data": {"version": version},
              "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl",
                             "index": 0}}
    event = {"type": "user.message", "data": {"content": "hi"},
             "provenance": {"component": "agent", "phase": "agent", "path": "a.jsonl", "index": 0}}
    data = (json.dumps(header) + "\n" + json.dumps(event) + "\n").encode()
    with pytest.raises(SessionInputError, match="version"):
        load_session(data, "aw_session.jsonl")


def test_a_header_alone_has_no_events_to_import() -> None:
    header = UNIFIED.read_text(encoding="utf-8").splitlines()[0]
    with pytest.raises(SessionInputError, match="no recognizable session events"):
        load_session((header + "\n").encode(), "aw_session.jsonl")


def test_engine_flags_that_contradict_the_framing_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SessionInputError, match="drop --engine"):
        read_session(UNIFIED, engine="claude")
    log = tmp_path / "plain.jsonl"
    log.write_text('{"type":"user.message","data":{"content":"hi"}}\n', encoding="utf-8")
    with pytest.raises(SessionInputError, match="not a session.format header"):
        read_session(log, engine="unified")
    assert read_session(UNIFIED, engine="unified").format == "unified"
