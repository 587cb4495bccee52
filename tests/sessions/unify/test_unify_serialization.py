"""Single-file compact JSONL and the file-format header (T-UAS-054, T-UAS-064, 025, 029)."""

from __future__ import annotations

import json
import re

import pytest
from uas_unify_helpers import ALL, of_type, run, write_tree

HEADER = ('{"type":"session.format","data":{"version":1},"provenance":{"component":"collector",'
          '"phase":"conclusion","path":"usage/aw_session.jsonl","index":0}}')


@pytest.mark.uas("T-UAS-054")
def test_compact_jsonl_one_object_per_line_with_trailing_newline(tmp_path) -> None:
    _records, _report, data = run(ALL, tmp_path)
    text = data.decode("utf-8")
    assert text.endswith("\n") and "\n\n" not in text
    for line in text[:-1].split("\n"):
        outside = re.sub(r'"(?:[^"\\]|\\.)*"', "", line)
        assert not re.search(r"\s", outside), "pretty-print whitespace outside strings"
        assert isinstance(json.loads(line), dict)


@pytest.mark.uas("T-UAS-054", "T-UAS-020")
def test_embedded_line_breaks_are_escaped_not_split(tmp_path) -> None:
    root = write_tree(tmp_path / "root", {"agent-session.jsonl": [
        {"type": "assistant.message", "data": {"content": "a\nb\r\nc  "}}]})
    records, _r, data = run(root, tmp_path)
    assert b"a\\nb\\r\\nc  " in data
    assert of_type(records, "assistant.message")[0]["data"]["content"] == "a\nb\r\nc  "


@pytest.mark.uas("T-UAS-054", "T-UAS-028", "T-UAS-008")
def test_no_session_wrapper_and_no_bare_legacy_result(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    assert all(set(r) <= {"type", "data", "provenance", "id", "parentId", "timestamp"} for r in records)
    assert not of_type(records, "result")


@pytest.mark.uas("T-UAS-064")
def test_header_is_first_even_for_an_empty_root(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    records, _r, data = run(tmp_path / "empty", tmp_path)
    assert data.decode("utf-8").split("\n")[0] == HEADER
    assert [r["type"] for r in records] == ["session.format", "session.collection_warning", "session.collection"]
    assert "timestamp" not in records[0]


@pytest.mark.uas("T-UAS-064")
def test_native_session_format_is_an_ordinary_observation(tmp_path) -> None:
    records, _r, data = run(ALL, tmp_path)
    assert data.decode("utf-8").split("\n")[0] == HEADER
    formats = of_type(records, "session.format")
    assert len(formats) == 2
    native = formats[1]
    assert native["data"] == {"version": 99, "note": "native, not the header"}
    assert native["provenance"]["component"] == "agent" and native["id"] == "native-format"


@pytest.mark.uas("T-UAS-054", "T-UAS-025")
def test_repeated_collection_is_byte_identical(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _r1, _rep1, first = run(ALL, tmp_path / "a")
    _r2, _rep2, second = run(ALL, tmp_path / "b")
    assert first == second


@pytest.mark.uas("T-UAS-029", "T-UAS-054")
def test_json_round_trip_preserves_every_record(tmp_path) -> None:
    records, _r, data = run(ALL, tmp_path)
    reencoded = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    assert [json.loads(x) for x in reencoded.splitlines()] == records
    assert reencoded.encode("utf-8") == data
