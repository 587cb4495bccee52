"""No unified record nests past the strict readers' 128 levels; a deeper value becomes the documented placeholder.

Sources may be deeper than the file may be: the engine parsers accept 400
levels, and a native ``provenance`` moves one level down (under
``provenance.native``). Each too-deep value is replaced by
``DEPTH_PLACEHOLDER`` with a ``nesting_too_deep`` warning naming the source and
the line (the event's position for a parsed engine log), deterministically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from uas_unify_helpers import of_type, run, warnings, write_tree

from bitexact.canon import MAX_DEPTH
from bitexact.canon import loads as strict_loads
from bitexact.sessions.evidence import read_session
from bitexact.sessions.render import render_path
from bitexact.sessions.unify.builder import DEPTH_PLACEHOLDER
from bitexact.sessions.validate import validate


def _chain(levels: int) -> dict[str, Any]:
    """``levels`` nested objects: ``{"k": {"k": ... {}}}``."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _claude_log(deep: dict[str, Any]) -> str:
    records = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": ["Bash"], "uuid": "u0"},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls", "deep": deep}}]},
         "session_id": "s", "uuid": "u1"},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok", "is_error": False}]},
         "session_id": "s", "uuid": "u2"},
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "session_id": "s", "uuid": "u3"},
    ]
    return "".join(json.dumps(r) + "\n" for r in records)


def _strictly_readable(data: bytes) -> list[dict[str, Any]]:
    return [strict_loads(line) for line in data.splitlines()]


def _readers_accept(path: Path) -> None:
    assert validate("unified", path).exit_code == 0
    render_path(path, "text")
    assert read_session(path).diagnostics == ()


@pytest.mark.uas("T-UAS-059", "T-UAS-063")
def test_a_parsed_tool_input_200_levels_deep_is_cut_at_the_limit(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "art", {"agent-stdio.log": _claude_log(_chain(200)),
                                         "aw_info.json": {"engine_id": "claude"}})
    records, _report, data = run(root, tmp_path)
    assert max(_depth(r) for r in _strictly_readable(data)) == MAX_DEPTH
    (start,) = of_type(records, "tool.execution_start")
    value, level = start["data"]["input"]["deep"], 4  # envelope, data, input, deep
    while value != DEPTH_PLACEHOLDER:
        value, level = value["k"], level + 1
    assert level == MAX_DEPTH + 1 and start["data"]["input"]["command"] == "ls"
    (warning,) = [w for w in warnings(records) if w["code"] == "nesting_too_deep"]
    assert warning["source"] == "agent" and warning["path"] == "agent-stdio.log" and "line" not in warning
    assert warning["message"].startswith(f"event {start['provenance']['index']}: 1 value(s) nested deeper")
    _readers_accept(tmp_path / "aw_session.jsonl")
    (tmp_path / "again").mkdir()
    assert run(root, tmp_path / "again")[2] == data  # deterministic


@pytest.mark.uas("T-UAS-059", "T-UAS-055")
def test_a_native_provenance_moved_one_level_down_is_cut_with_its_line(tmp_path: Path) -> None:
    native = {"type": "vendor.thing", "data": {"a": 1}, "id": "a1", "timestamp": "2026-10-02T00:00:01Z",
              "provenance": _chain(MAX_DEPTH - 1)}
    assert _depth(native) == MAX_DEPTH  # the source line is one the strict reader accepts
    ok = {"type": "assistant.message", "data": {"content": "hi"}, "id": "a2", "timestamp": "2026-10-02T00:00:02Z"}
    root = write_tree(tmp_path / "art", {"agent-session.jsonl": "\n" + json.dumps(native) + "\n" + json.dumps(ok) + "\n"})
    records, _report, data = run(root, tmp_path)
    assert max(_depth(r) for r in _strictly_readable(data)) == MAX_DEPTH
    (thing,) = of_type(records, "vendor.thing")
    assert thing["data"] == {"a": 1} and _depth(thing["provenance"]["native"]) == MAX_DEPTH - 2
    assert of_type(records, "assistant.message")[0]["data"] == {"content": "hi"}
    (warning,) = [w for w in warnings(records) if w["code"] == "nesting_too_deep"]
    assert warning["path"] == "agent-session.jsonl" and warning["line"] == 2  # the blank first line counts
    assert warning["message"].startswith("line 2: 1 value(s)")
    _readers_accept(tmp_path / "aw_session.jsonl")


@pytest.mark.uas("T-UAS-059")
def test_a_record_exactly_at_the_limit_is_kept_whole_without_a_warning(tmp_path: Path) -> None:
    record = {"type": "vendor.deep", "data": _chain(MAX_DEPTH - 1), "id": "a1"}
    assert _depth(record) == MAX_DEPTH
    root = write_tree(tmp_path / "art", {"agent-session.jsonl": [record]})
    records, _report, _data = run(root, tmp_path)
    (kept,) = of_type(records, "vendor.deep")
    assert kept["data"] == record["data"] and _depth(kept) == MAX_DEPTH
    assert not [w for w in warnings(records) if w["code"] == "nesting_too_deep"]


@pytest.mark.uas("T-UAS-059")
def test_many_shallow_brackets_are_not_mistaken_for_depth(tmp_path: Path) -> None:
    wide = {"type": "vendor.wide", "data": {"items": [{"i": [n]} for n in range(500)]}, "id": "w"}
    root = write_tree(tmp_path / "art", {"agent-session.jsonl": [wide]})
    records, _report, _data = run(root, tmp_path)
    assert of_type(records, "vendor.wide")[0]["data"] == wide["data"]
    assert not [w for w in warnings(records) if w["code"] == "nesting_too_deep"]
