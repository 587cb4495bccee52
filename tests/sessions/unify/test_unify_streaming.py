"""The streaming writer: same bytes as the in-memory merger, bounded memory (T-UAS-054, 056, 057, 059, 081).

The golden files in ``tests/data/sessions_unify`` were written by the
in-memory merger (every source's serialized output held until a packed-
position sort, before the streaming writer) for the same inputs; the
streaming writer must reproduce them byte for byte.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest
from uas_unify_helpers import ALL, run, write_tree

from bitexact.sessions.unify import unify
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.files import SymlinkRefusedError
from bitexact.sessions.unify.interleave import merge_positions, merge_runs, split_position
from bitexact.sessions.unify.merge import collect
from bitexact.sessions.unify.spill import READ_WINDOW, SPILL_THRESHOLD, SpillStore
from bitexact.sessions.unify.write import event_line

DATA = Path(__file__).resolve().parents[2] / "data" / "sessions_unify"
STREAMING = DATA / "streaming_merge"
STREAMING_ENV = {"GH_AW_JOB_RESULTS": '{"agent":{"result":"success"},"detection":{"result":"skipped"}}',
                 "GH_AW_JOB_DURATIONS": '{"agent":61000}'}
"""The environment the golden ``streaming_merge.expected.jsonl`` was produced with."""
TS = "2026-10-01T12:00:00.000Z"


@pytest.mark.uas("T-UAS-054", "T-UAS-056", "T-UAS-057", "T-UAS-060")
def test_streaming_output_is_byte_identical_to_the_in_memory_merger_and_repeatable(tmp_path) -> None:
    expected = (DATA / "streaming_merge.expected.jsonl").read_bytes()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = run(STREAMING, tmp_path / "a", env=STREAMING_ENV)[2]
    second = run(STREAMING, tmp_path / "b", env=STREAMING_ENV)[2]
    assert first == second
    assert first == expected
    assert b"s3cr3t-MASK-value" not in first and b"second-mask-42" not in first


@pytest.mark.uas("T-UAS-054", "T-UAS-056", "T-UAS-057")
def test_all_components_output_is_byte_identical_to_the_in_memory_merger(tmp_path) -> None:
    assert run(ALL, tmp_path)[2] == (DATA / "interleaved_all_components.expected.jsonl").read_bytes()


@pytest.mark.uas("T-UAS-054")
def test_large_sources_spill_and_the_collection_can_be_read_twice(tmp_path) -> None:
    with collect(STREAMING, env=STREAMING_ENV, spill_dir=tmp_path) as collection:
        spilled = {b.path: b.store.spilled for b in collection.sources}
        assert spilled["agent-session.jsonl"] > 0 and spilled["mcp-logs/rpc-messages.jsonl"] > 0
        assert spilled["agent/aw_info.json"] == 0  # small sources stay in memory
        once = collection.records
        assert collection.records == once
    expected = (DATA / "streaming_merge.expected.jsonl").read_bytes()
    assert once == [json.loads(line) for line in expected.splitlines()]
    assert list(tmp_path.iterdir()) == []  # anonymous temporary files: nothing left behind


def _random_key(rng: random.Random) -> int | None:
    return rng.choice([None, rng.randint(-10, 10), rng.randint(0, 3) * 10**9, 2**70 + rng.randint(0, 3),
                       -(2**65), rng.randint(0, 50)])


@pytest.mark.uas("T-UAS-056", "T-UAS-057")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_streaming_merge_equals_the_packed_position_sort(tmp_path, seed: int) -> None:
    rng = random.Random(seed)
    builders: list[SourceBuilder] = []
    lines: list[list[bytes]] = []
    keys: list[list[int | None]] = []
    for order in range(6):
        sequential = order != 2
        builder = SourceBuilder(f"s{order}", "agent", "agent", f"s{order}.jsonl", sequential, spill_dir=tmp_path)
        own_lines, own_keys = [], []
        wholly_untimed = order == 4
        for index in range(rng.randint(0, 900)):
            key = None if wholly_untimed else _random_key(rng)
            event = builder.add("vendor.x", {"pad": "p" * rng.randint(0, 200), "n": index}, index=index, key=key)
            own_lines.append(event_line(event))
            own_keys.append(key)
        builder.seal()
        builders.append(builder)
        lines.append(own_lines)
        keys.append(own_keys)
    assert any(b.store.spilled for b in builders)  # the file-backed path is part of the comparison
    positions = merge_positions([(order, b.sequential, keys[order]) for order, b in enumerate(builders)])
    reference = [lines[o][i] for o, i in map(split_position, positions)]
    assert list(merge_runs(builders)) == reference
    for builder in builders:
        builder.close()


@pytest.mark.uas("T-UAS-054")
def test_spill_store_round_trips_keys_of_any_size_and_records_longer_than_the_window(tmp_path) -> None:
    store = SpillStore(tmp_path)
    records = [(None, b'{"a":1}\n'), (-(2**70), b'{"b":"\\t\\n"}\n'), (2**80, b'{"c":"' + b"x" * (3 * READ_WINDOW) + b'"}\n')]
    records += [(i, b'{"i":%d}\n' % i) for i in range(SPILL_THRESHOLD // 8)]
    middle = None
    for position, (key, line) in enumerate(records):
        if position == 3:
            middle = store.mark()
        store.append(key, line)
    assert store.spilled > 0
    assert list(store.records()) == records
    assert list(store.records(middle)) == records[3:]
    store.close()


@pytest.mark.uas("T-UAS-054")
def test_a_record_longer_than_the_read_window_survives_the_spill(tmp_path) -> None:
    big = "y" * (2 * READ_WINDOW + 17)
    events = [{"type": "assistant.message", "timestamp": TS, "data": {"content": f"m{i}" * 300}} for i in range(300)]
    events.insert(150, {"type": "assistant.message", "timestamp": TS, "data": {"content": big}})
    root = write_tree(tmp_path / "root", {"agent-session.jsonl": events})
    records, _report, _data = run(root, tmp_path)
    contents = [r["data"]["content"] for r in records if r["type"] == "assistant.message"]
    assert contents == [e["data"]["content"] for e in events]


def _bulky_root(root: Path, per_source: int) -> Path:
    """Five sources of about ``per_source`` records (~1 MB each), interleaved in time."""
    base = 1_790_899_200_000

    def iso(ms: int) -> str:
        return f"2026-10-02T00:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}Z"

    files = {
        "agent-session.jsonl": [{"type": "assistant.message", "timestamp": iso(i * 10),
                                 "data": {"content": "m" * 250}} for i in range(per_source)],
        "mcp-logs/rpc-messages.jsonl": [{"timestamp": iso(i * 10 + 3), "type": "REQUEST", "server_id": "s", "id": i,
                                         "method": "tools/call", "params": {"name": "n" * 200}}
                                        for i in range(per_source)],
        "mcp-logs/gateway.jsonl": [{"timestamp": iso(i * 10 + 4), "event": "tool_call", "server_id": "s",
                                    "tool": "t" * 200} for i in range(per_source)],
        "sandbox/firewall/logs/audit.jsonl": [{"ts": (base + i * 10 + 5) / 1000, "host": "h" * 200, "method": "GET",
                                               "status": 200, "decision": "allowed"} for i in range(per_source)],
        "sandbox/firewall/logs/token-usage.jsonl": [{"ts": base + i * 10 + 6, "provider": "p", "model": "m" * 200,
                                                     "request_id": f"r{i}", "status": 200}
                                                    for i in range(per_source)],
    }
    return write_tree(root, files)


@pytest.mark.uas("T-UAS-054")
def test_collection_memory_is_bounded_by_the_largest_source_not_the_output(tmp_path) -> None:
    root = _bulky_root(tmp_path / "root", 4000)
    largest = max(p.stat().st_size for p in root.rglob("*") if p.is_file())
    # The source being read, plus constants: decode scan windows (2 x 1 MiB),
    # the 256 KiB write buffer, per-source spill buffers and read windows.
    bound = largest + 4 * 1024 * 1024
    tracemalloc.start()
    try:
        report = unify(root, tmp_path / "aw_session.jsonl", env={})
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The serialized output alone exceeds the bound: holding it (as the
    # in-memory merger did, ~18 MB peak here) cannot pass.
    assert report.bytes > bound
    assert peak < bound, f"peak {peak} bytes for a largest source of {largest} bytes"


@pytest.mark.uas("T-UAS-059")
def test_a_failed_write_leaves_no_temporary_collection_data(tmp_path) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "aw_session.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(SymlinkRefusedError):
        unify(STREAMING, out_dir / "aw_session.jsonl", env=STREAMING_ENV)
    assert [p.name for p in out_dir.iterdir()] == ["aw_session.jsonl"]
    assert not (tmp_path / "elsewhere.jsonl").exists()


@pytest.mark.uas("T-UAS-081")
def test_baseline_estimate_reads_requests_back_from_the_stores(tmp_path) -> None:
    usage = [json.loads(line) for line in
             (STREAMING / "sandbox/firewall/logs/token-usage.jsonl").read_text().splitlines()]
    expected = 0.0
    for i, request in enumerate(usage):
        if i % 3:  # as_selected routing records (see generate_streaming_merge.py)
            expected += request["input_tokens"] * 1e-6
    records, _report, _data = run(STREAMING, tmp_path, env=STREAMING_ENV,
                                  pricing=lambda model, u: u["inputTokens"] * 1e-6 if model == "claude-x" else None)
    (estimate,) = [r["data"] for r in records if r["type"] == "model.baseline_estimate"]
    assert estimate["mainRequests"] == 100 and estimate["pricedRequests"] == 100
    assert estimate["aic"] == expected
