"""Provenance, timestamp interleaving, untimed and tied observations (T-UAS-055, 056, 057)."""

from __future__ import annotations

import pytest
from uas_unify_helpers import ALL, of_type, run, tree_bytes, write_tree

from bitexact.sessions.unify.clock import iso_ns, ordering_key

BASE = 1790899200  # 2026-10-02T00:00:00Z


def T(s: str) -> str:
    return f"2026-10-02T00:00:{s}Z"


@pytest.mark.uas("T-UAS-055")
def test_every_record_has_relative_provenance_with_source_index(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    for record in records:
        prov = record["provenance"]
        assert {"component", "phase", "path", "index"} <= set(prov)
        assert not prov["path"].startswith("/") and ".." not in prov["path"].split("/")
    agent = [r for r in records if r["provenance"]["path"] == "agent-session.jsonl"]
    # Index is the position in the source's normalized array (its 9 events).
    assert sorted(r["provenance"]["index"] for r in agent) == list(range(9))


@pytest.mark.uas("T-UAS-055", "T-UAS-007")
def test_native_ids_kept_and_native_provenance_moved_under_native(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    complete = of_type(records, "tool.execution_complete")[0]
    assert complete["id"] == "a5" and complete["parentId"] == "a4"
    assert complete["data"]["toolCallId"] == "call-1"
    assert complete["provenance"]["native"] == {"native": "kept"}


@pytest.mark.uas("T-UAS-055", "T-UAS-026")
def test_sources_are_not_modified(tmp_path) -> None:
    before = tree_bytes(ALL)
    run(ALL, tmp_path)
    assert tree_bytes(ALL) == before


@pytest.mark.uas("T-UAS-055")
def test_coincident_native_ids_in_two_sources_are_not_rewritten(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {
        "agent-session.jsonl": [{"type": "tool.execution_start", "id": "x1", "data": {"toolCallId": "same"}}],
        "mcp-logs/rpc-messages.jsonl": [{"type": "REQUEST", "id": "same", "method": "tools/list"}],
    })
    records, _r, _d = run(root, tmp_path)
    assert of_type(records, "tool.execution_start")[0]["data"]["toolCallId"] == "same"
    assert of_type(records, "mcp.rpc.request")[0]["data"]["rpcId"] == "same"


@pytest.mark.uas("T-UAS-056")
def test_units_follow_the_source_schema_not_magnitude() -> None:
    assert ordering_key(1790899200.5, "seconds") == (BASE * 1000 + 500) * 1_000_000
    assert ordering_key(1790899200500, "ms") == (BASE * 1000 + 500) * 1_000_000
    assert ordering_key(5, "seconds") == 5_000_000_000 and ordering_key(5, "ms") == 5_000_000
    assert ordering_key("1790899200000000001", "unix_nano") == BASE * 10**9 + 1
    assert iso_ns("2026-10-02T02:00:00.123456789+02:00") == BASE * 10**9 + 123456789
    assert ordering_key("2026-10-02T00:00:00", "iso") is None  # no timezone: not a supported timestamp
    assert ordering_key(True, "ms") is None and ordering_key(-1, "seconds") is None


@pytest.mark.uas("T-UAS-056")
def test_interleaving_across_units_with_nanosecond_precision(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    order = [(r["type"], r["provenance"]["index"]) for r in records]
    # A firewall record at 00:00:01.25 (Squid seconds) precedes the agent start at 00:00:02.
    assert order.index(("firewall.http_access", 0)) < order.index(("tool.execution_start", 4))
    # The MCP request at 02.000000001 follows the agent start at exactly 02 (nanosecond comparison).
    assert order.index(("tool.execution_start", 4)) < order.index(("mcp.rpc.request", 0))
    # Token usage at ms 02.5 falls between the MCP response (02.1) and the 429 response (03).
    assert order.index(("mcp.rpc.response", 1)) < order.index(("firewall.token_usage", 0)) < order.index(("mcp.rpc.response", 2))


@pytest.mark.uas("T-UAS-056", "T-UAS-019")
def test_regressing_clock_never_reverses_source_order(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {"agent-session.jsonl": [
        {"type": "a.one", "timestamp": T("05"), "data": {}},
        {"type": "a.two", "timestamp": T("01"), "data": {}},
        {"type": "a.three", "timestamp": T("06"), "data": {}},
    ], "mcp-logs/rpc-messages.jsonl": [{"type": "REQUEST", "timestamp": T("03"), "id": 1}]})
    records, _r, _d = run(root, tmp_path)
    kinds = [r["type"] for r in records if r["type"].startswith(("a.", "mcp."))]
    # a.two (01) is anchored to the latest clock seen so far (05): it stays after a.one.
    assert kinds == ["mcp.rpc.request", "a.one", "a.two", "a.three"]
    # The regressed record keeps its native timestamp and its own millisecond projection.
    two = of_type(records, "a.two")[0]
    assert two["timestamp"] == T("01") and two["provenance"]["timestampMs"] == (BASE + 1) * 1000


@pytest.mark.uas("T-UAS-057")
def test_untimed_records_are_kept_anchored_and_never_given_timestamps(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {"agent-session.jsonl": [
        {"type": "a.untimed_first", "data": {}},
        {"type": "a.timed", "timestamp": T("04"), "data": {}},
        {"type": "a.untimed_after", "data": {}},
        {"type": "a.bad_clock", "timestamp": "yesterday", "data": {}},
    ], "mcp-logs/rpc-messages.jsonl": [{"type": "REQUEST", "timestamp": T("02"), "id": 1},
                                       {"type": "REQUEST", "timestamp": T("05"), "id": 2}],
        "github_rate_limits.jsonl": [{"resource": "core"}]})
    records, _r, _d = run(root, tmp_path)
    kinds = [r["type"] for r in records]
    # The untimed prefix is anchored to the source's first timestamp (04), after the MCP record at 02.
    assert kinds.index("mcp.rpc.request") < kinds.index("a.untimed_first") < kinds.index("a.timed")
    assert kinds.index("a.bad_clock") < len(kinds) and of_type(records, "a.bad_clock")[0]["timestamp"] == "yesterday"
    for kind in ("a.untimed_first", "a.untimed_after", "a.bad_clock"):
        record = of_type(records, kind)[0]
        assert "timestampMs" not in record["provenance"]
    assert "timestamp" not in of_type(records, "a.untimed_first")[0]
    # A completely untimed source follows every anchored observation.
    assert kinds.index("github_api.rate_limit") > kinds.index("a.bad_clock")


@pytest.mark.uas("T-UAS-057")
def test_equal_keys_keep_source_enumeration_and_local_order(tmp_path) -> None:
    root = write_tree(tmp_path / "r", {
        "agent-session.jsonl": [{"type": "a.first", "timestamp": T("01"), "data": {}},
                                {"type": "a.second", "timestamp": T("01"), "data": {}}],
        "mcp-logs/rpc-messages.jsonl": [{"type": "REQUEST", "timestamp": T("01"), "id": 1}],
    })
    records, _r, _d = run(root, tmp_path)
    kinds = [r["type"] for r in records][1:4]
    assert kinds == ["a.first", "a.second", "mcp.rpc.request"]  # agent is enumerated before MCP


@pytest.mark.uas("T-UAS-056", "T-UAS-057")
def test_otlp_sorted_by_own_clock_span_events_never_borrow_span_time(tmp_path) -> None:
    records, _r, _d = run(ALL, tmp_path)
    otel = [r for r in records if r["provenance"]["component"] == "otel"]
    names = [r["data"].get("name", r["data"].get("severityText")) for r in otel]
    assert names == ["ev-early", "early span", "INFO", "late span", "ev-untimed", "WARN"]
    untimed_event = of_type(records, "otel.span_event")[1]
    assert "timeUnixNano" not in untimed_event["data"] and "timestampMs" not in untimed_event["provenance"]
    # Spans do not duplicate their events.
    assert all("events" not in r["data"] for r in of_type(records, "otel.span"))
    log = of_type(records, "otel.log")[0]
    assert log["provenance"]["timestampMs"] == (BASE + 1) * 1000  # observedTime fallback when timeUnixNano absent
