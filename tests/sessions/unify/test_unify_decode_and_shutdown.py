"""Fast source decoding stays exact; Copilot shutdown compaction (T-UAS-054, T-UAS-059, T-UAS-061)."""

from __future__ import annotations

import json

import pytest

from bitexact.canon import loads as strict_loads
from bitexact.sessions.unify import unify
from bitexact.sessions.unify.decode import has_long_digit_run
from bitexact.sessions.unify.write import write_records_atomic

from uas_unify_helpers import of_type, run, warnings, write_tree

TS = "2026-10-01T12:00:00.000Z"


def _agent(*events: dict) -> dict:
    return {"agent-session.jsonl": list(events)}


@pytest.mark.uas("T-UAS-054", "T-UAS-061")
def test_copilot_shutdown_is_compacted_to_lifecycle_and_request_counters(tmp_path) -> None:
    shutdown = {"type": "session.shutdown", "id": "e9", "timestamp": TS, "data": {
        "shutdownType": "routine", "sessionStartTime": 1790899200000, "totalPremiumRequests": 3,
        "totalApiDurationMs": 1200, "currentModel": "claude-sonnet-4",
        "codeChanges": {"linesAdded": 4, "linesRemoved": 1, "filesModified": ["a.py"]},
        "modelMetrics": {"claude-sonnet-4": {"requests": {"count": 3, "cost": 3}, "usage": {"inputTokens": 10}}},
        "agentMetrics": {"main": {"requests": 3, "nanoAiu": 7}}}}
    records, _, _ = run(write_tree(tmp_path / "root", _agent(shutdown)), tmp_path)
    (event,) = of_type(records, "session.shutdown")
    assert event["data"] == {"shutdownType": "routine", "sessionStartTime": 1790899200000,
                             "totalPremiumRequests": 3, "totalApiDurationMs": 1200,
                             "currentModel": "claude-sonnet-4"}
    assert event["id"] == "e9" and event["timestamp"] == TS


@pytest.mark.uas("T-UAS-054")
def test_shutdown_false_and_zero_counters_survive(tmp_path) -> None:
    shutdown = {"type": "session.shutdown", "data": {"shutdownType": "error", "errorReason": None,
                                                     "totalPremiumRequests": 0}}
    records, _, _ = run(write_tree(tmp_path / "root", _agent(shutdown)), tmp_path)
    assert of_type(records, "session.shutdown")[0]["data"] == {
        "shutdownType": "error", "errorReason": None, "totalPremiumRequests": 0}


@pytest.mark.uas("T-UAS-059", "T-UAS-054")
def test_integers_past_64_bits_are_kept_exactly(tmp_path) -> None:
    big = 123456789012345678901234567890
    text = json.dumps({"type": "vendor.tick", "data": {"n": big, "m": -(2**70)}}) + "\n"
    records, _, data = run(write_tree(tmp_path / "root", {"agent-session.jsonl": text}), tmp_path)
    (tick,) = of_type(records, "vendor.tick")
    assert tick["data"] == {"n": big, "m": -(2**70)}
    assert b"123456789012345678901234567890" in data


@pytest.mark.uas("T-UAS-059")
def test_nesting_past_the_strict_limit_is_refused_with_a_warning(tmp_path) -> None:
    deep = "[" * 130 + "]" * 130
    text = '{"type":"vendor.deep","data":{"v":' + deep + '}}\n' + json.dumps(
        {"type": "vendor.ok", "data": {}}) + "\n"
    records, _, _ = run(write_tree(tmp_path / "root", {"agent-session.jsonl": text}), tmp_path)
    assert not of_type(records, "vendor.deep") and of_type(records, "vendor.ok")
    assert any(w["code"] == "malformed_jsonl" and w.get("line") == 1 for w in warnings(records))


@pytest.mark.uas("T-UAS-059", "T-UAS-054")
def test_lone_surrogates_crlf_and_nonfinite_follow_the_strict_reader(tmp_path) -> None:
    text = ('{"type":"vendor.s","data":{"t":"\\ud800x"}}\r\n'
            '{"type":"vendor.nan","data":{"v":NaN}}\r\n'
            '{"type":"vendor.inf","data":{"v":1e400}}\n')
    records, _, data = run(write_tree(tmp_path / "root", {"agent-session.jsonl": text}), tmp_path)
    assert of_type(records, "vendor.s")[0]["data"] == {"t": "\ud800x"}
    assert not of_type(records, "vendor.nan") and not of_type(records, "vendor.inf")
    lines = {w.get("line") for w in warnings(records) if w["code"] == "malformed_jsonl"}
    assert lines == {2, 3}
    # Every written record is accepted by the project's strict reader.
    for line in data.splitlines():
        strict_loads(line)


@pytest.mark.uas("T-UAS-059")
def test_duplicate_keys_take_the_last_value_and_the_output_has_none(tmp_path) -> None:
    # UAS names no duplicate-key rule for runtime logs; like the reference
    # JavaScript/Go readers the last value wins, and the unified file's own
    # records stay strictly well-formed.
    text = '{"type":"vendor.d","data":{"k":1,"k":2}}\n'
    records, _, data = run(write_tree(tmp_path / "root", {"agent-session.jsonl": text}), tmp_path)
    assert of_type(records, "vendor.d")[0]["data"] == {"k": 2}
    for line in data.splitlines():
        strict_loads(line)


@pytest.mark.uas("T-UAS-059")
def test_long_digit_run_detection_spans_window_boundaries() -> None:
    window = 1 << 20
    assert not has_long_digit_run(b"1" * 18 + b"x" + b"2" * 18)
    assert has_long_digit_run(b"a" * (window - 5) + b"9" * 19)
    assert has_long_digit_run(b"9" * 19)
    assert not has_long_digit_run(b"")


@pytest.mark.uas("T-UAS-059", "T-UAS-054")
def test_failure_while_streaming_leaves_no_partial_file(tmp_path) -> None:
    out = tmp_path / "aw_session.jsonl"
    out.write_bytes(b"previous\n")

    class Unserializable:
        pass

    def records():
        yield {"type": "session.format", "data": {"version": 1}}
        yield {"type": "x", "data": {"bad": Unserializable()}}

    with pytest.raises(TypeError):
        write_records_atomic(out, records())
    assert out.read_bytes() == b"previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["aw_session.jsonl"]


@pytest.mark.uas("T-UAS-054")
def test_streamed_output_counts_match_the_file(tmp_path) -> None:
    events = [{"type": "assistant.message", "timestamp": TS, "data": {"content": "a\nb" * 50}}] * 300
    root = write_tree(tmp_path / "root", _agent(*events))
    out = tmp_path / "aw_session.jsonl"
    report = unify(root, out, env={})
    data = out.read_bytes()
    assert report.bytes == len(data) and report.records == data.count(b"\n")
    assert data.endswith(b"\n") and b"\n\n" not in data


@pytest.mark.uas("T-UAS-056", "T-UAS-057")
def test_packed_merge_positions_keep_anchor_source_and_local_order() -> None:
    from bitexact.sessions.unify.interleave import merge_positions, split_position

    sources = [
        (0, True, [None, -5_000, 10, 7, None]),   # pre-epoch anchor, regression, untimed
        (1, True, [10, -5_000]),
        (2, False, [None, 3]),                   # unordered batch: own keys, untimed last
        (3, True, [None, None]),                 # wholly untimed source
    ]
    order = [split_position(p) for p in merge_positions(sources)]
    assert order == [
        (0, 0), (0, 1), (2, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 1),
        (2, 0), (3, 0), (3, 1),
    ]


@pytest.mark.uas("T-UAS-054")
def test_collection_records_match_the_written_file(tmp_path) -> None:
    from bitexact.sessions.unify.merge import collect

    from uas_unify_helpers import ALL

    collection = collect(ALL, env={})
    _, _, data = run(ALL, tmp_path)
    assert collection.records == [json.loads(line) for line in data.splitlines()]
    assert len(collection) == data.count(b"\n")
