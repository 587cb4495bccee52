"""Determinism, idempotence, purity and round trips (UAS 5.5, T-UAS-025/026/029, T-UAS-052)."""

from __future__ import annotations

import copy
import json

import pytest

from bitexact.sessions import canonical_json, convert_events_to_legacy, convert_legacy_entries_to_events, parse
from uas_parser_helpers import deep_freeze, fixture_text, parser_fixtures

FIXTURES = parser_fixtures()


@pytest.mark.uas("T-UAS-025", "T-UAS-052")
@pytest.mark.parametrize("engine,name", FIXTURES)
def test_equal_input_gives_byte_identical_output(engine: str, name: str) -> None:
    text = fixture_text(engine, name)
    first, second = parse(text, engine), parse(text, engine)
    assert first.events == second.events
    assert canonical_json(first.events) == canonical_json(second.events)
    assert first.diagnostics == second.diagnostics


@pytest.mark.uas("T-UAS-025", "T-UAS-052")
@pytest.mark.parametrize("engine,name", FIXTURES)
def test_normalizing_the_canonical_trace_again_is_idempotent(engine: str, name: str) -> None:
    once = parse(fixture_text(engine, name), engine).events
    again = parse(canonical_json(once), engine).events
    assert again == once
    detected = parse(canonical_json(once)).events  # also through detection
    assert detected == once
    as_jsonl = "".join(json.dumps(e) + "\n" for e in once)
    assert parse(as_jsonl, engine).events == once


@pytest.mark.uas("T-UAS-029", "T-UAS-052")
@pytest.mark.parametrize("engine,name", FIXTURES)
def test_json_round_trip_preserves_every_field(engine: str, name: str) -> None:
    events = parse(fixture_text(engine, name), engine).events
    assert json.loads(canonical_json(events)) == events
    assert json.loads(json.dumps(events)) == events


@pytest.mark.uas("T-UAS-026", "T-UAS-052")
def test_converters_do_not_mutate_frozen_inputs() -> None:
    entries = json.loads(fixture_text("claude", "json_array_legacy_session.json"))
    frozen = deep_freeze(entries)
    before = copy.deepcopy(entries)
    events = convert_legacy_entries_to_events(frozen)
    assert entries == before and frozen == before
    frozen_events = deep_freeze(events)
    legacy = convert_events_to_legacy(frozen_events)
    assert frozen_events == events
    # Outputs are owned by the caller: mutating them cannot reach the inputs.
    legacy[1]["message"]["content"].append("x")
    events[0]["data"]["tools"].append("y")
    assert frozen == before


SUPPORTED = ("sourceEngine", "model", "sessionId", "cwd", "tools", "mcpServers", "slashCommands", "modelInfo",
             "content", "toolCallId", "toolName", "input", "mcpServerName", "success", "output", "durationMs",
             "numTurns", "totalCostUsd", "usage", "errors", "permissionDenials", "status")


def _supported(events: list[dict]) -> list[tuple]:
    out = []
    for e in events:
        meta = {k: v for k, v in e.items() if k not in ("type", "data")}
        out.append((e["type"], {k: v for k, v in e["data"].items() if k in SUPPORTED}, meta))
    return out


@pytest.mark.uas("T-UAS-029")
def test_reversible_legacy_interchange_preserves_supported_fields() -> None:
    canonical = parse(fixture_text("claude", "json_array_legacy_session.json"), "claude").events
    canonical += [
        {"type": "tool.execution_start", "data": {"toolCallId": "c", "toolName": "bash", "input": [1, None], "command": "x"}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c", "toolName": "bash", "success": False, "output": {"k": False}, "durationMs": 0}},
        {"type": "vendor.progress", "id": "v", "data": {"n": 0}},
    ]
    back = convert_legacy_entries_to_events(convert_events_to_legacy(canonical))
    assert _supported(back) == _supported(canonical)
