"""A JSONL export streams the checkpoints (docs/bundle-format.md "Export"): the header line is written
from the store one checkpoint at a time, and the only thing it holds in proportion to the run is the
signed message (ed25519 signs a message held whole). Memory is counted with tracemalloc, never timed."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from bitexact.canon import Streamed, canonical_chunks, canonicalize
from bitexact.crypto import SigningKey
from bitexact.evidence.export import RunSource, export_run
from bitexact.evidence.verify import Pins, verify_path
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import Store

_VALUES: list[dict[str, Any]] = [
    {"format": "f", "checkpoints": Streamed(lambda: [{"b": 1, "a": "x"}, {"z": [1, 2.5]}, {}]), "run_id": "r"},
    # A key sorting differently by UTF-16 code unit than by code point takes the reference encoder.
    {"\U0001f600": 1, "\uffff": 2, "checkpoints": Streamed(lambda: iter([{"\U0001f600": "\uffff"}]))},
    {"anchors": Streamed(lambda: []), "checkpoints": Streamed(lambda: ({"seq": i} for i in range(3))), "a": None},
    {"checkpoints": [{"seq": 0}], "chain": {"head_hash": "00"}},
]


@pytest.mark.parametrize("value", _VALUES)
def test_canonical_chunks_join_to_the_canonical_bytes(value: dict[str, Any]) -> None:
    whole = {key: list(item.items()) if isinstance(item, Streamed) else item for key, item in value.items()}
    assert b"".join(canonical_chunks(value)) == canonicalize(whole)
    assert b"".join(canonical_chunks(value)) == canonicalize(whole)  # each write reads the items afresh


def test_a_streamed_item_counts_its_depth_inside_the_document() -> None:
    """The whole document holds an item two levels down: what canonicalize refuses there is refused here."""
    deep: Any = 0
    for _ in range(126):  # 126 levels inside the item: 128 in the document, the most there may be
        deep = [deep]
    assert b"".join(canonical_chunks({"a": Streamed(lambda: [deep])})) == canonicalize({"a": [deep]})
    with pytest.raises(Exception) as whole:
        canonicalize({"a": [[deep]]})
    with pytest.raises(type(whole.value)):
        b"".join(canonical_chunks({"a": Streamed(lambda: [[deep]])}))


def _run_with_checkpoints(store: Store, key: SigningKey, entries: int) -> str:
    """A sealed run with a checkpoint after every entry: its header holds one per entry."""
    writer = Recorder(store, key, checkpoints=CheckpointPolicy(every=1, seconds=3600)).start(name=f"n{entries}")
    for start in range(0, entries, 100):
        writer.append_batch([("tool_call", {"tool": "t", "args": [start + i]}, None) for i in range(100)])
    writer.seal()
    return writer.run_id


def _export_peak(store: Store, run_id: str, key: SigningKey, path: Path) -> int:
    source = RunSource.from_store(store, run_id)
    tracemalloc.start()
    try:
        export_run(source, path, key, fmt="jsonl")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_jsonl_export_holds_only_the_signed_message_per_checkpoint(
    store: Store, recorder_key: SigningKey, tmp_path: Path
) -> None:
    """4x the checkpoints: the peak grows by at most 1.5 bytes per byte of checkpoints in the header (the
    signed message, in one buffer). Holding them as a list, as parsed objects and canonical text, cost 2.6."""
    sizes, peaks = [], []
    for entries in (300, 1200):  # both past the store's page of entries, so the pages read are alike
        run_id = _run_with_checkpoints(store, recorder_key, entries)
        path = tmp_path / f"{entries}.jsonl"
        peaks.append(_export_peak(store, run_id, recorder_key, path))
        sizes.append(sum(len(canonicalize(cp)) for cp in store.checkpoints(run_id)))
        verdict = verify_path(path, Pins(recorder_keys=frozenset({recorder_key.public_hex})))
        assert verdict.ok, verdict.line
        assert verdict.steps == entries + 2  # with its run_meta and run_end
    assert peaks[1] - peaks[0] < 1.5 * (sizes[1] - sizes[0]), (peaks, sizes)


def test_a_stored_source_reads_the_same_checkpoints_every_time(store: Store, recorder_key: SigningKey) -> None:
    """The count is fixed with the head: checkpoints stored after from_store are never read (a JSONL
    export reads them twice, and the second read must be the one it signed)."""
    writer = Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=1, seconds=3600)).start(name="fixed")
    writer.append("tool_call", {"tool": "t"})
    source = RunSource.from_store(store, writer.run_id)
    before = list(source.checkpoints())
    writer.append("tool_call", {"tool": "u"})
    assert len(store.checkpoints(writer.run_id)) == len(before) + 1
    assert list(source.checkpoints()) == before
    assert before == store.checkpoints(writer.run_id)[: len(before)]
