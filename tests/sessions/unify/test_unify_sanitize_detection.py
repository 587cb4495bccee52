"""Pre-upload runtime-mask pass (T-UAS-060) and threat-detection traffic (T-UAS-058)."""

from __future__ import annotations

import json
import os

import pytest

from bitexact.sessions.unify.sanitize import sanitize_tree

from uas_unify_helpers import coverage, of_type, run, write_tree

SECRET = "s3cr3t-runtime-value-42"
TS = "2026-10-01T12:00:00.000Z"


def _root(tmp_path):
    return write_tree(tmp_path / "root", {
        "agent-stdio.log": f"start\n::add-mask::{SECRET}\nusing {SECRET} now\n",
        "copilot-session-state/s1/events.jsonl": [
            {"type": "user.message", "id": f"id-{SECRET}", "data": {"content": "hi", "nested": {"v": [SECRET]}}},
            {"type": "assistant.message", "data": {"content": "clean"}},
        ],
        "mcp-logs/rpc-messages.jsonl": [{"type": "REQUEST", "params": {"q": "x\u00e9" + SECRET}}],
        "sandbox/firewall/logs/audit.jsonl": [{"url": f"https://h/{SECRET}", "status": 200}],
        "safeoutputs/outputs.jsonl": '{"type":"add_comment","body":"' + SECRET.replace("s", "\\u0073") + '"}\n',
        "agent/aw_info.json": {"engine_id": "copilot", "note": SECRET},
        "notes.bin": b"\xff\xfe" + SECRET.encode() + b"\x00",
    })


@pytest.mark.uas("T-UAS-060")
def test_masks_are_collected_first_and_applied_to_every_source(tmp_path) -> None:
    root = _root(tmp_path)
    report = sanitize_tree(root)
    assert report.masks == 1 and report.removed == ()
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data, path
            assert b"\\u0073" not in data or b"add_comment" not in data, path
    # Decoded strings were redacted (including the \\u-escaped and nested ones).
    events = [json.loads(l) for l in (root / "copilot-session-state/s1/events.jsonl").read_text().splitlines()]
    assert events[0]["id"] == "id-***" and events[0]["data"]["nested"]["v"] == ["***"]
    assert json.loads((root / "safeoutputs/outputs.jsonl").read_text())["body"] == "***"
    # Untouched lines stay byte-identical; non-UTF-8 bytes survive around the mask.
    assert (root / "copilot-session-state/s1/events.jsonl").read_text().splitlines()[1] == json.dumps(
        {"type": "assistant.message", "data": {"content": "clean"}})
    assert (root / "notes.bin").read_bytes() == b"\xff\xfe***\x00"
    assert "::add-mask::***" in (root / "agent-stdio.log").read_text()


@pytest.mark.uas("T-UAS-060")
def test_no_handoff_file_persists_mask_values(tmp_path) -> None:
    root = _root(tmp_path)
    before = {p.relative_to(root) for p in root.rglob("*")}
    sanitize_tree(root, masks=["caller-only-mask-value"])
    assert {p.relative_to(root) for p in root.rglob("*")} == before
    assert all(b"caller-only-mask-value" not in p.read_bytes() for p in root.rglob("*") if p.is_file())


@pytest.mark.uas("T-UAS-060")
def test_unredactable_sources_are_removed_not_left_for_upload(tmp_path) -> None:
    root = _root(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    os.symlink(outside, root / "linked.log")
    report = sanitize_tree(root)
    assert ("linked.log", "symbolic link") in report.removed or ("linked.log", "not a regular file") in report.removed
    assert not (root / "linked.log").exists() and outside.read_text() == SECRET
    assert all(SECRET not in path for path, _ in report.removed)


@pytest.mark.uas("T-UAS-060")
def test_sanitized_tree_then_unify_has_no_secret(tmp_path) -> None:
    root = _root(tmp_path)
    sanitize_tree(root)
    (root / "agent-stdio.log").write_text("start\n")  # stdio scan no longer sees the mask
    _, _, data = run(root, tmp_path)
    assert SECRET.encode() not in data


@pytest.mark.uas("T-UAS-058", "T-UAS-055")
def test_threat_detection_traffic_is_collected_as_separate_detection_observations(tmp_path) -> None:
    usage = {"ts": 1790899200000, "provider": "anthropic", "model": "claude-x", "purpose": "agent",
             "request_id": "r1", "input_tokens": 10, "output_tokens": 1}
    root = write_tree(tmp_path / "root", {
        "sandbox/firewall/logs/token-usage.jsonl": [usage],
        "threat-detection/sandbox/firewall/logs/token-usage.jsonl": [{**usage, "request_id": "d1"}],
        "threat-detection/sandbox/firewall/audit/token-usage.jsonl": [{**usage, "request_id": "stale"}],
        "threat-detection/mcp-logs/rpc-messages.jsonl": [
            {"timestamp": TS, "type": "REQUEST", "server_id": "gh", "id": 1, "method": "tools/call"}],
        "threat-detection/sandbox/firewall/logs/audit.jsonl": [{"ts": 1790899200.5, "host": "api.x", "status": 200}],
    })
    records, _, _ = run(root, tmp_path)
    usage_events = of_type(records, "firewall.token_usage")
    by_phase = {e["provenance"]["phase"]: e for e in usage_events}
    assert len(usage_events) == 2 and set(by_phase) == {"agent", "detection"}
    assert by_phase["detection"]["data"]["requestId"] == "d1"
    assert by_phase["detection"]["provenance"]["path"] == "threat-detection/sandbox/firewall/logs/token-usage.jsonl"
    rpc = [e for e in records if e["type"].startswith("mcp.") and e["provenance"]["phase"] == "detection"]
    assert len(rpc) == 1
    access = [e for e in of_type(records, "firewall.http_access") if e["provenance"]["phase"] == "detection"]
    assert len(access) == 1
    sources = {s["path"] for s in coverage(records)["sources"]}
    assert "threat-detection/sandbox/firewall/audit/token-usage.jsonl" not in sources


@pytest.mark.uas("T-UAS-058", "T-UAS-081")
def test_detection_requests_never_enter_the_baseline_estimate(tmp_path) -> None:
    usage = {"ts": 1790899200000, "provider": "anthropic", "model": "claude-x", "purpose": "agent",
             "request_id": "r1", "input_tokens": 10, "output_tokens": 1}
    root = write_tree(tmp_path / "root", {
        "agent/aw_info.json": {"engine_id": "claude", "model_config": {"routing": {"enabled": True},
                                                                       "baseline_model": "claude-x"}},
        "sandbox/firewall/logs/token-usage.jsonl": [usage],
        "threat-detection/sandbox/firewall/logs/token-usage.jsonl": [{**usage, "request_id": "d1"}],
    })
    records, _, _ = run(root, tmp_path)
    (estimate,) = of_type(records, "model.baseline_estimate")
    # r1 has no routing record: one unattributed agent-phase request; the
    # detection copy d1 would make it two if it were counted.
    assert estimate["data"]["unattributedRequests"] == 1
    assert estimate["data"]["mainRequests"] == 0


@pytest.mark.uas("T-UAS-060")
def test_a_source_that_cannot_be_read_as_a_file_is_removed(tmp_path) -> None:
    root = _root(tmp_path)
    os.mkfifo(root / "mcp-logs" / "stream.jsonl")
    report = sanitize_tree(root)
    assert ("mcp-logs/stream.jsonl", "not a regular file") in report.removed
    assert not (root / "mcp-logs" / "stream.jsonl").exists()
    assert "mcp-logs/rpc-messages.jsonl" in report.rewritten
