"""Compact unified session profile 1 (T-UAS-076, T-UAS-077, T-UAS-078)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest

from bitexact.sessions import compact as compact_module
from bitexact.sessions.compact import MAX_BYTES, MAX_RECORDS, CompactSourceError, compact, compact_events

ALL = Path(__file__).resolve().parent.parent / "fixtures" / "unify" / "interleaved_all_components"


def _lines(result):
    return [json.loads(x) for x in result["session"].splitlines()]


HEADER = {"type": "session.format", "data": {"version": 1},
          "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl", "index": 0}}
HEADER_LINE = json.dumps(HEADER)
"""The file producer reads a unified session: its first record is this header (T-UAS-064), itself retained."""


def _usage_event(i=0, **extra):
    return {"type": "usage.report", "data": {"model": "m", "aic": 1.5, "stepIndex": i, **extra},
            "provenance": {"component": "usage", "phase": "agent", "path": "usage/x.jsonl", "index": i}}


@pytest.mark.uas("T-UAS-076")
def test_only_allowlisted_kinds_and_scalar_fields_survive_in_order() -> None:
    events = [
        {"type": "session.format", "data": {"version": 1}, "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl", "index": 0}},
        {"type": "user.message", "data": {"content": "prompt"}},
        {"type": "assistant.message", "data": {"content": "answer"}},
        {"type": "tool.execution_start", "data": {"toolName": "bash", "input": {"command": "ls"}}},
        {"type": "vendor.ext", "data": {"x": 1}},
        {"type": "workflow.info", "data": {"engineId": "copilot", "runId": 5, "awContext": {"a": 1}, "episode": {"x": 1},
                                           "modelRouting": {"status": "ok"}, "dryRun": False}},
        {"type": "session.result", "timestamp": "2026-10-02T00:00:00Z",
         "data": {"numTurns": 2, "errors": ["boom"], "permissionDenials": [], "agentMetrics": {"a": 1},
                  "usage": {"inputTokens": 3, "outputTokens": 1, "extra": 9, "nested": {"x": 1}}},
         "provenance": {"component": "agent", "phase": "agent", "path": "agent-session.jsonl", "index": 7, "native": {"x": 1}, "timestampMs": 1}},
        {"type": "grader.result", "data": {"id": "g1", "value": 3, "metrics": [{"id": "m"}], "messages": ["x"],
                                           "run": {"id": 1, "attempt": 2, "passed": 1, "secret": "s", "graders": []}}},
    ]
    result = compact_events(events)
    lines = _lines(result)
    assert [line["type"] for line in lines] == ["session.format", "workflow.info", "session.result", "grader.result"]
    assert lines[1]["data"] == {"engineId": "copilot", "dryRun": False, "runId": 5}
    assert lines[2] == {"type": "session.result", "data": {"numTurns": 2, "usage": {"inputTokens": 3, "outputTokens": 1}},
                        "timestamp": "2026-10-02T00:00:00Z",
                        "provenance": {"component": "agent", "phase": "agent", "path": "agent-session.jsonl", "index": 7}}
    assert lines[3]["data"] == {"id": "g1", "value": 3, "run": {"id": 1, "attempt": 2, "passed": 1}}
    assert result["includedEvents"] == 4 and result["omittedEvents"] == 4
    assert result["truncated"] is False  # vocabulary filtering is not truncation
    assert result["version"] == 1 and result["oversizedLines"] == 0 and result["scanTruncated"] is False


@pytest.mark.uas("T-UAS-076")
def test_non_scalar_nonfinite_oversized_and_surrogate_values_are_omitted_not_coerced() -> None:
    data = {"model": "x" * 256, "provider": "y" * 257, "purpose": None, "status": [1], "aic": float("inf"),
            "totalAic": float("nan"), "premiumRequests": 2, "durationMs": 0.5, "sessionId": "\ud800", "agentId": True}
    (line,) = _lines(compact_events([{"type": "usage.report", "data": data}]))
    assert line["data"] == {"model": "x" * 256, "premiumRequests": 2, "durationMs": 0.5, "agentId": True}
    (line,) = _lines(compact_events([{"type": "workflow.job_result", "data": {}}]))
    assert line == {"type": "workflow.job_result", "data": {}}  # missing values do not become defaults


@pytest.mark.uas("T-UAS-077")
def test_exactly_128_records_fit_and_the_129th_is_omitted() -> None:
    events = [{"type": "workflow.job_result", "data": {"jobId": f"j{i}"}} for i in range(129)]
    result = compact_events(events)
    assert result["includedEvents"] == MAX_RECORDS and result["omittedEvents"] == 1 and result["truncated"]
    assert len(result["session"].encode("utf-8")) <= MAX_BYTES


@pytest.mark.uas("T-UAS-077")
def test_byte_cap_is_exact_and_a_later_smaller_record_still_fits() -> None:
    def job(text: str):
        return {"type": "workflow.job_result", "data": {"jobId": text}}

    def cost(event) -> int:  # serialized UTF-8 bytes, JSON escaping included, plus one LF
        return len(json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1

    filler = job('é"' * 40)  # 2-byte characters and escaped quotes both count
    count = (MAX_BYTES - cost(job(""))) // cost(filler)
    remaining = MAX_BYTES - count * cost(filler)
    exact = job("a" * (remaining - cost(job(""))))  # shorter than the 256-byte string limit
    assert cost(exact) == remaining
    too_big = {"type": "workflow.info", "data": {"engineId": "z" * 250, "model": "z" * 250}}
    assert cost(too_big) > remaining
    result = compact_events([filler] * count + [too_big, exact])
    assert len(result["session"].encode("utf-8")) == MAX_BYTES
    assert _lines(result)[-1] == exact and result["includedEvents"] == count + 1
    assert result["omittedEvents"] == 1 and result["truncated"] is True


@pytest.mark.uas("T-UAS-077")
def test_input_not_mutated_deterministic_and_empty_is_valid() -> None:
    events = [_usage_event(i, usage={"inputTokens": i}) for i in range(200)]
    before = copy.deepcopy(events)
    first, second = compact_events(events), compact_events(events)
    assert first == second and events == before
    empty = compact_events([])
    assert empty == {"version": 1, "session": "", "includedEvents": 0, "omittedEvents": 0, "oversizedLines": 0,
                     "scanTruncated": False, "truncated": False}


@pytest.mark.uas("T-UAS-076", "T-UAS-077", "T-UAS-078")
def test_file_producer_on_a_real_unified_file_leaves_it_unchanged(tmp_path) -> None:
    from bitexact.sessions.unify import unify

    out = tmp_path / "aw_session.jsonl"
    unify(ALL, out, env={})
    before = out.read_bytes()
    result = compact(out)
    assert out.read_bytes() == before
    kinds = [line["type"] for line in _lines(result)]
    assert kinds[0] == "session.format" and "workflow.info" in kinds and "grader.result" in kinds
    assert "user.message" not in kinds and "prompt.system" not in kinds
    in_memory = compact_events(json.loads(x) for x in before.decode().splitlines())
    assert result == in_memory


@pytest.mark.uas("T-UAS-078")
def test_oversized_line_skipped_without_decoding_and_later_records_kept(tmp_path) -> None:
    path = tmp_path / "s.jsonl"
    good = json.dumps(_usage_event(1))
    giant = '{"type":"usage.report","data":{"model":"' + "x" * 20000 + '"}} not json'
    path.write_text(HEADER_LINE + "\n" + good + "\n" + giant + "\n" + good + "\n", encoding="utf-8")
    result = compact(path)
    assert result["includedEvents"] == 3 and result["oversizedLines"] == 1
    assert result["omittedEvents"] == 1 and result["truncated"] is True


@pytest.mark.uas("T-UAS-078")
def test_line_of_exactly_16_kib_is_retained(tmp_path) -> None:
    record = {"type": "workflow.job_result", "data": {"jobId": "j"}, "pad": ""}
    short = len(json.dumps(record, separators=(",", ":")))
    record["pad"] = "p" * (16384 - short)
    line = json.dumps(record, separators=(",", ":"))
    assert len(line) == 16384
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER_LINE + "\n" + line + "\n" + line + "x\n", encoding="utf-8")
    result = compact(path)
    assert result["includedEvents"] == 2 and result["oversizedLines"] == 1


@pytest.mark.uas("T-UAS-078")
def test_final_unterminated_record_decoded_only_at_snapshot_end(tmp_path, monkeypatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(HEADER_LINE + "\n" + json.dumps(_usage_event(0)) + "\n" + json.dumps(_usage_event(1)),
                    encoding="utf-8")
    assert compact(path)["includedEvents"] == 3
    size = path.stat().st_size
    monkeypatch.setattr(compact_module, "MAX_SCAN_BYTES", size - 5)
    result = compact(path)
    assert result["includedEvents"] == 2 and result["scanTruncated"] is True and result["truncated"] is True


@pytest.mark.uas("T-UAS-078")
def test_real_scan_limit_of_64_mib(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:
        handle.write((HEADER_LINE + "\n" + json.dumps(_usage_event(0)) + "\n").encode())
        handle.write(b"x" * (64 * 1024 * 1024))  # one unterminated giant line past the scan limit
    result = compact(path)
    assert result["includedEvents"] == 2 and result["scanTruncated"] is True
    assert result["oversizedLines"] == 0  # the cut-off line never completed


@pytest.mark.uas("T-UAS-078")
@pytest.mark.parametrize("case", ["missing", "empty", "directory", "symlink", "bad_json", "bad_utf8"])
def test_invalid_sources_fail_explicitly(tmp_path, case) -> None:
    path = tmp_path / "s.jsonl"
    if case == "empty":
        path.write_bytes(b"")
    elif case == "directory":
        path.mkdir()
    elif case == "symlink":
        target = tmp_path / "t.jsonl"
        target.write_text(json.dumps(_usage_event()) + "\n")
        os.symlink(target, path)
    elif case == "bad_json":
        path.write_text(HEADER_LINE + "\n" + json.dumps(_usage_event()) + "\n{not json}\n")
    elif case == "bad_utf8":
        path.write_bytes(b'{"type":"usage.report","data":{"model":"\xff"}}\n')
    with pytest.raises(CompactSourceError) as refused:
        compact(path)
    if case == "bad_json":  # refused for the record that is not JSON, past a good header
        assert str(refused.value).startswith("line 3: invalid record"), refused.value
