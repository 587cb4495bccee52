"""Engine logs imported as runs: one asserted entry per canonical event, sealed, verifying."""

from __future__ import annotations

import hashlib
from datetime import datetime

import pytest

from bitexact.crypto import SigningKey
from bitexact.recording import Recorder
from bitexact.sessions import parse
from bitexact.sessions.evidence import IMPORTER, import_session, kind_for, read_session
from bitexact.store import Store
from tests.sessions.evidence.conftest import FIXTURES, entries, verify_run

ENGINE_LOGS = [
    ("claude", "claude/jsonl_full_session_with_debug_and_trailing_extension.jsonl"),
    ("claude", "claude/json_array_legacy_session.json"),
    ("codex", "codex/jsonl_lifecycle_two_turns_and_snapshot.jsonl"),
    ("codex", "codex/legacy_text_layout.log"),
    ("gemini", "gemini/stream_json_session_with_deltas_and_stats.jsonl"),
    ("copilot", "copilot/native_events_with_extensions_and_task_complete.jsonl"),
    ("copilot", "copilot/pretty_print_tools_and_footer.log"),
    ("goose", "goose/stream_json_session.jsonl"),
    ("opencode", "opencode/run_format_json_session.jsonl"),
    ("pi", "pi/v3_stream_two_turns_partial_and_errors.jsonl"),
    ("cursor", "cursor/stream_json_session.jsonl"),
    ("copilot", "copilot/cli_layouts/copilot_1_0_102_tool_blocks_and_stderr_footer.log"),
    ("aider", "aider/success_no_stream_edit_and_commit.txt"),
    ("aider", "aider/rate_limit_nine_startup_error_blocks.txt"),
    ("pydantic-ai", "pydantic-ai/streamed_tool_call_wrapped_header.txt"),
    ("pydantic-ai", "pydantic-ai/rate_limit_429_chained_traceback.txt"),
]


@pytest.mark.uas("T-UAS-006", "T-UAS-007")
@pytest.mark.parametrize("engine, relative", ENGINE_LOGS, ids=[r for _, r in ENGINE_LOGS])
def test_each_canonical_event_becomes_one_asserted_entry_keeping_type_data_and_metadata(
    plain_recorder: Recorder, store: Store, recorder_key: SigningKey, engine: str, relative: str
) -> None:
    path = FIXTURES / relative
    raw = path.read_bytes()
    parsed = parse(raw.decode("utf-8"))
    assert parsed.engine == engine
    result = import_session(plain_recorder, read_session(path))
    recorded = entries(store, result.run_id)

    meta = recorded[0]
    assert (meta["kind"], meta["prov"]) == ("run_meta", "observed")
    block = meta["data"]["import"]
    assert block["source_sha256"] == hashlib.sha256(raw).hexdigest()
    assert (block["source_name"], block["engine"], block["format"]) == (path.name, engine, "log")
    assert (block["events"], block["skipped"], block["importer"]) == (len(parsed.events), len(parsed.diagnostics),
                                                                       IMPORTER)

    offset = 2 if parsed.diagnostics else 1
    events = recorded[offset:offset + len(parsed.events)]
    assert len(events) == len(parsed.events)
    for index, (entry, event) in enumerate(zip(events, parsed.events)):
        data = entry["data"]
        assert entry["prov"] == "asserted"
        assert entry["kind"] == kind_for(event["type"])
        assert {"type": data["type"], "data": data["data"], **data["meta"]} == event
        assert data["index"] == index
        assert data["source"] == {"sha256": hashlib.sha256(raw).hexdigest(), "name": path.name, "engine": engine,
                                  "format": "log"}

    end = recorded[-1]
    assert (end["kind"], end["prov"], end["data"]["steps"]) == ("run_end", "observed", len(recorded))
    assert len(recorded) == offset + len(parsed.events) + 1 == result.steps
    verdict = verify_run(store, recorder_key, result.run_id)
    assert verdict.ok, verdict.line
    assert verdict.sealed and "recorder-attested" in verdict.line


def test_engine_timestamps_stay_in_data_and_the_entry_ts_is_the_recording_instant(
    plain_recorder: Recorder, store: Store
) -> None:
    path = FIXTURES / "copilot/native_events_with_extensions_and_task_complete.jsonl"
    before = datetime.now().astimezone()
    result = import_session(plain_recorder, read_session(path))
    stamped = [e for e in entries(store, result.run_id) if "timestamp" in e["data"].get("meta", {})]
    assert stamped
    for entry in stamped:
        recorded_at = datetime.fromisoformat(entry["ts"])
        assert recorded_at >= before
        assert entry["data"]["meta"]["timestamp"] != entry["ts"]
    engine_times = {e["data"]["meta"]["timestamp"] for e in stamped}
    assert all(isinstance(t, str) and t.startswith("20") for t in engine_times)
    assert all(datetime.fromisoformat(t.replace("Z", "+00:00")) < before for t in engine_times)


def test_named_engine_is_used_and_recorded(plain_recorder: Recorder, store: Store) -> None:
    path = FIXTURES / "custom/codex_jsonl_delegate.jsonl"
    result = import_session(plain_recorder, read_session(path, engine="custom"))
    meta = store.entry(result.run_id, 0)["data"]["import"]
    assert meta["engine"] == parse(path.read_text(encoding="utf-8"), "custom").engine


def test_tool_entries_carry_the_tool_name_and_outcome_for_people(plain_recorder: Recorder, store: Store) -> None:
    path = FIXTURES / "codex/jsonl_lifecycle_two_turns_and_snapshot.jsonl"
    result = import_session(plain_recorder, read_session(path))
    recorded = [e["data"] for e in entries(store, result.run_id)]
    starts = [d for d in recorded if d.get("type") == "tool.execution_start"]
    assert starts and all(d["status"] == "started" for d in starts)
    completions = [d for d in recorded if d.get("type") == "tool.execution_complete"]
    assert {d["status"] for d in completions} >= {"ok", "failed"}
    for data in completions:
        success = data["data"].get("success")
        assert data["status"] == {True: "ok", False: "failed", None: "unknown"}[success]
        if isinstance(data["data"].get("toolName"), str):
            assert data["tool"] == data["data"]["toolName"]
