"""Unified-file publication views (T-UAS-065, T-UAS-066, 045, 049, 050, 064, 067)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bitexact.sessions.render import UnifiedFormatError, read_unified, render, render_path
from bitexact.sessions.render.budget import size
from bitexact.sessions.render.unified import agent_conversations, timeline_lines
from bitexact.sessions.render.privacy import Publisher
from bitexact.sessions.unify import unify

ALL = Path(__file__).resolve().parent.parent / "fixtures" / "unify" / "interleaved_all_components"


@pytest.fixture(scope="module")
def unified(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("u") / "aw_session.jsonl"
    unify(ALL, out, env={})
    return out


def _write(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    return path


def _header():
    return {"type": "session.format", "data": {"version": 1},
            "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl", "index": 0}}


def _agent(path, index, kind, data, ts=None, phase="agent"):
    prov = {"component": "agent", "phase": phase, "path": path, "index": index}
    if ts is not None:
        prov["timestampMs"] = ts
    return {"type": kind, "data": data, "provenance": prov}


@pytest.mark.uas("T-UAS-065", "T-UAS-064")
def test_markdown_view_structure_version_labels_and_runtime_types(unified: Path) -> None:
    out = render_path(unified, "markdown")
    assert out.startswith("<details>\n<summary>Unified session</summary>")
    assert "### " not in out.split("\n")[0]  # the disclosure does not repeat its title as a heading
    assert "file format version 1" in out and "Records by component:" in out
    assert "<summary>Statistics per source</summary>" in out and "<summary>Chronological trace" in out
    for kind in ("mcp.rpc.request", "firewall.http_access", "firewall.token_usage", "safe_output.request",
                 "grader.result", "eval.result", "detection.result", "agent.execution", "otel.span",
                 "session.collection", "model_endpoint.mismatch", "workflow.info"):
        assert kind in out, kind
    assert "[firewall/agent] firewall.http_access" in out and "[collector/conclusion] session.collection" in out
    assert "session.format" not in out.split("Chronological trace")[1].split("\n", 2)[2].split("[")[0]


@pytest.mark.uas("T-UAS-065")
def test_timeline_file_order_elapsed_clock_and_untimed_labels() -> None:
    records = [_header(),
               _agent("s.jsonl", 0, "assistant.message", {"content": "one"}, 1000),
               _agent("s.jsonl", 1, "assistant.message", {"content": "two"}, 3500),
               _agent("s.jsonl", 2, "assistant.message", {"content": "regressed"}, 2000),
               _agent("s.jsonl", 3, "assistant.message", {"content": "later"}, 4000),
               _agent("s.jsonl", 4, "vendor.x", {"secret": "opaque"})]
    lines = timeline_lines(records, Publisher())
    assert [line.rsplit(" ", 1)[1] for line in lines] == ["+0s", "+2.5s", "+0s", "+0.5s", "untimed"]
    assert lines[0].startswith("[agent/agent] assistant.message one")
    assert "opaque" not in lines[4]  # unknown extensions: type and provenance only


@pytest.mark.uas("T-UAS-066")
def test_statistics_scoped_by_source_and_coincident_ids_never_pair(tmp_path) -> None:
    records = [_header(),
               _agent("a.jsonl", 0, "tool.execution_start", {"toolCallId": "call-1", "toolName": "bash"}, 1),
               _agent("b.jsonl", 0, "tool.execution_complete", {"toolCallId": "call-1", "success": True}, 2),
               _agent("a.jsonl", 1, "session.result", {"numTurns": 3, "usage": {"inputTokens": 10}}, 3),
               _agent("b.jsonl", 1, "session.result", {"numTurns": 5, "usage": {"inputTokens": 99}}, 4),
               {"type": "firewall.token_usage", "data": {"usage": {"inputTokens": 1000}},
                "provenance": {"component": "firewall", "phase": "agent", "path": "t.jsonl", "index": 0, "timestampMs": 5}}]
    conversations = agent_conversations(records)
    assert [c.label for c in conversations] == ["agent · agent · a.jsonl — main conversation",
                                                "agent · agent · b.jsonl — main conversation"]
    first, second = (c.stats() for c in conversations)
    assert (first.pending, first.orphans, second.orphans, second.succeeded) == (1, 0, 1, 1)
    out = render_path(_write(tmp_path / "x.jsonl", records), "text")
    assert "Turns: 3" in out and "Turns: 5" in out and "input 10 " in out and "input 99 " in out
    assert "1000" not in out.split("Chronological trace")[0]  # firewall usage never joins agent accounting
    assert "Turns: 8" not in out and "input 109" not in out


@pytest.mark.uas("T-UAS-066")
def test_source_local_order_restored_and_nested_scopes_separate(tmp_path) -> None:
    records = [_header(),
               _agent("a.jsonl", 1, "tool.execution_complete", {"toolCallId": "t", "success": True}, 1),
               _agent("a.jsonl", 0, "tool.execution_start", {"toolCallId": "t", "toolName": "read"}, 2),
               _agent("a.jsonl", 2, "tool.execution_start", {"toolCallId": "t", "toolName": "read", "agentId": "child"}, 3),
               _agent("a.jsonl", 3, "session.result", {"numTurns": 9, "agentId": "child"}, 4)]
    main, child = agent_conversations(records)
    assert main.stats().succeeded == 1 and main.stats().orphans == 0  # paired after restoring index order
    assert "nested conversation (agent child)" in child.label and child.stats().pending == 1
    out = render(records, "text")
    assert "Turns: unavailable" in out and "Turns: 9" in out


@pytest.mark.uas("T-UAS-065", "T-UAS-045")
def test_prompts_omitted_by_default_in_unified_views(unified: Path) -> None:
    for fmt in ("markdown", "text"):
        out = render_path(unified, fmt)
        assert "PRIVATE-PROMPT-unify" not in out
        assert "prompt.system" not in out and "You are a helpful agent" not in out
    diagnostic = render_path(unified, "text", show_prompts=True)
    assert "PRIVATE-PROMPT-unify-1" in diagnostic and "STDIO-MASK-1" not in diagnostic


@pytest.mark.uas("T-UAS-065", "T-UAS-049")
def test_unified_views_escape_and_redact_hostile_runtime_text(tmp_path) -> None:
    records = [_header(),
               {"type": "firewall.event", "data": {"event": "x", "message": "::add-mask::evil\n</details>```` <b>MASK-9</b>"},
                "provenance": {"component": "firewall", "phase": "agent", "path": "e.jsonl", "index": 0}}]
    path = _write(tmp_path / "h.jsonl", records)
    text = render_path(path, "text", masks=["MASK-9"])
    assert "MASK-9" not in text and not re.search(r"^\s*::", text, re.M)
    markdown = render_path(path, "markdown", masks=["MASK-9"])
    outside = re.sub(r"^(`{3,})text\n.*?^\1$", "", markdown, flags=re.M | re.S)
    assert "<b>" not in outside and outside.count("<details>") == outside.count("</details>")


@pytest.mark.uas("T-UAS-065", "T-UAS-050")
@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_unified_views_bounded_with_notice_and_source_intact(unified: Path, fmt: str) -> None:
    before = unified.read_bytes()
    out = render_path(unified, fmt, budget_bytes=4096)
    assert size(out) <= 4096 and "display truncated" in out
    if fmt == "markdown":
        assert out.count("<details>") == out.count("</details>")
    assert unified.read_bytes() == before


@pytest.mark.uas("T-UAS-064", "T-UAS-065", "T-UAS-067")
def test_reader_rejects_missing_invalid_unsupported_headers_and_duplicate_execution(tmp_path, unified: Path) -> None:
    lines = unified.read_text(encoding="utf-8").splitlines()
    cases = {
        "missing": "\n".join(lines[1:]) + "\n",
        "v2": lines[0].replace('"version":1', '"version":2') + "\n" + "\n".join(lines[1:]) + "\n",
        "invalid": lines[0].replace('"version":1', '"version":"1"') + "\n",
        "malformed": lines[0] + "\n{broken\n",
    }
    execution = [x for x in lines if '"type":"agent.execution"' in x][0]
    cases["duplicate_execution"] = "\n".join(lines + [execution.replace('"index":0', '"index":1')]) + "\n"
    expected = {"missing": "missing file-format header", "v2": "unsupported file-format version 2",
                "invalid": "invalid file-format version", "malformed": "line 2", "duplicate_execution": "agent.execution"}
    for name, content in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(content, encoding="utf-8")
        with pytest.raises(UnifiedFormatError, match=expected[name]):
            read_unified(path)
    older = tmp_path / "older.jsonl"
    older.write_text("\n".join(x for x in lines if '"agent.execution"' not in x) + "\n", encoding="utf-8")
    assert "Unified session" in render_path(older, "text")  # files without the aggregate remain readable


@pytest.mark.uas("T-UAS-065", "T-UAS-050")
def test_step_summary_respects_remaining_budget_and_logs_still_get_the_view(tmp_path, unified: Path) -> None:
    from bitexact.sessions.render import publish_step_summary

    records = read_unified(unified)
    summary = tmp_path / "step_summary.md"
    summary.write_text("x" * 4000, encoding="utf-8")
    outcome = publish_step_summary(summary, records, limit=12_000)
    assert summary.stat().st_size <= 12_000 and outcome.appended_bytes > 0 and not outcome.warning
    assert "display truncated" in summary.read_text(encoding="utf-8")
    full = tmp_path / "full.md"
    full.write_text("y" * 11_900, encoding="utf-8")
    outcome = publish_step_summary(full, records, limit=12_000)
    assert outcome.appended_bytes == 0 and "not appended" in outcome.warning
    assert full.stat().st_size == 11_900
    assert "Unified session" in outcome.log_text and "display truncated" not in outcome.log_text


@pytest.mark.uas("T-UAS-065")
def test_adjacent_stream_fragments_form_one_timeline_entry_at_first_clock() -> None:
    records = [_header(),
               _agent("s.jsonl", 0, "assistant.message", {"content": "Hel", "messageId": "m1", "partial": True}, 1000),
               _agent("s.jsonl", 1, "assistant.message", {"content": "lo", "messageId": "m1", "partial": True}, 1500),
               _agent("s.jsonl", 2, "tool.execution_start", {"toolCallId": "t", "toolName": "x"}, 2000),
               _agent("s.jsonl", 3, "assistant.message", {"content": "next", "messageId": "m1"}, 2500)]
    lines = timeline_lines(records, Publisher())
    assert len(lines) == 3 and lines[0].endswith("+0s") and "Hel" in lines[0]
    assert lines[1].endswith("+1s")  # the clock runs from the first fragment's time
    assert len(records) == 5  # the records themselves are unchanged
