"""§10.1: a JSONL verifier keeps only the hashes checkpoints and anchors reference (constant memory)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_path

from .producer import stream_jsonl


def entries(count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    for i in range(count):
        yield "tool_call", {"tool": "t", "args": [i], "result": {"text": "x" * 300, "n": i}}


def peak_while_verifying(path: Path, pins: Pins) -> tuple[int, str]:
    tracemalloc.start()
    try:
        verdict = verify_path(path, pins)
        return tracemalloc.get_traced_memory()[1], verdict.line
    finally:
        tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_number_of_entries(
    tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey
) -> None:
    pins = Pins(bundle_keys=frozenset({bundle_key.public_hex}), recorder_keys=frozenset({recorder_key.public_hex}))
    peaks = []
    for count in (1000, 8000):
        path = tmp_path / f"{count}.jsonl"
        # One checkpoint per 4000 entries keeps the header (which is held) the same size in both.
        stream_jsonl(path, "big", entries(count), key=bundle_key, recorder=recorder_key, checkpoint_every=4000)
        peak, line = peak_while_verifying(path, pins)
        assert line.startswith(f"OK: big - {count + 1} steps"), line
        peaks.append(peak)
    # 8x the entries (about 3 MiB more file) must not cost more than a small constant.
    assert peaks[1] < peaks[0] + 256 * 1024, peaks
