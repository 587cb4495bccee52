"""§10.1: a JSONL verifier keeps only the hashes checkpoints and anchors reference (constant memory)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_path
from bitexact.evidence.verify.jsonl import share_repeated_values

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


def _header_size(path: Path) -> int:
    with path.open("rb") as handle:
        return len(handle.readline())


def test_peak_memory_per_checkpoint_is_the_parsed_header_only(
    tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey
) -> None:
    """The header holds every checkpoint (a product run has one per 64 entries): its line is parsed and
    dropped, never held while the entries stream. 4x the checkpoints cost under 3.5 bytes per header byte
    (the text while it is parsed, the objects, then the signed message); holding the line too cost 4.3."""
    pins = Pins(bundle_keys=frozenset({bundle_key.public_hex}), recorder_keys=frozenset({recorder_key.public_hex}))
    sizes, peaks = [], []
    for count in (500, 2000):
        path = tmp_path / f"{count}.jsonl"
        small = (("tool_call", {"args": [i]}) for i in range(count))
        stream_jsonl(path, "cps", small, key=bundle_key, recorder=recorder_key, checkpoint_every=1)
        peak, line = peak_while_verifying(path, pins)
        assert line.startswith(f"OK: cps - {count + 1} steps"), line
        sizes.append(_header_size(path))
        peaks.append(peak)
    assert peaks[1] - peaks[0] < 3.5 * (sizes[1] - sizes[0]), (peaks, sizes)


def test_the_checkpoints_share_their_repeated_values() -> None:
    header: dict[str, Any] = {"checkpoints": [
        {"run_id": "r" * 40, "alg": "blake2b-256", "key_id": "ab" * 8, "public_key": "cd" * 32, "seq": i}
        for i in range(3)
    ] + [7]}
    before = [dict(cp) if isinstance(cp, dict) else cp for cp in header["checkpoints"]]
    share_repeated_values(header)
    assert header["checkpoints"] == before  # equal values: nothing a check reads differs
    first, second = header["checkpoints"][0], header["checkpoints"][1]
    for key in ("run_id", "alg", "key_id", "public_key"):
        assert first[key] is second[key]
