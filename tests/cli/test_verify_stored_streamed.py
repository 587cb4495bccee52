"""`bitexact verify RUN` streams the stored run's entries into the verifier: memory flat in its size,
the verdict the whole JSON bundle got.

It built the run's whole JSON bundle in memory first (345 MB for 100,000 small steps; several GB for a
million, even for runs `export --format json` refuses as too large). The verdicts on tampered stores are
compared here with the in-memory path the library still has (``bundle_document`` + ``verify_bundle``).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import sqlite3
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli.real_command import run_bitexact
from evidence.test_tamper import (  # the bundle tampers, applied to the store's rows
    changed_salt,
    changed_value,
    redacted_value_still_present,
    relabelled_prov,
    relabelled_prov_rehashed,
    reordered,
    uncommitted_path,
)

from bitexact.canon import canonicalize
from bitexact.capture.clause import capture_clause
from bitexact.cli import cli
from bitexact.cli.bundles import _verdict_json
from bitexact.crypto import SigningKey
from bitexact.crypto.keystore import KeyStore
from bitexact.demo.scenario import record_demo_run
from bitexact.evidence.export import RunSource, bundle_document
from bitexact.evidence.verify import Pins, verify_bundle
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import open_store

Tamper = Callable[[dict[str, Any]], str]

# The tampers that keep every step in place (the store's rows are rewritten; none added or removed).
IN_PLACE: list[Tamper] = [changed_value, changed_salt, reordered, relabelled_prov, relabelled_prov_rehashed,
                          uncommitted_path, redacted_value_still_present]


def _demo(home: Path) -> tuple[str, SigningKey]:
    store = open_store(home)
    try:
        key = KeyStore(home).current_or_init()
        return record_demo_run(Recorder(store, key)), key
    finally:
        store.close()


def _in_memory_verdict(home: Path, run_id: str, key: SigningKey, pins: Pins) -> dict[str, object]:
    """The verdict of the path verify RUN took before: the whole JSON bundle, built then verified."""
    store = open_store(home)
    try:
        document = bundle_document(RunSource.from_store(store, run_id), key)
    finally:
        store.close()
    return _verdict_json(verify_bundle(document, pins, clauses=[capture_clause(lambda: {})]))


def _tamper_store(home: Path, run_id: str, tamper: Tamper) -> str:
    """Apply ``tamper`` to the run's entries and write the changed ones back in place; its message."""
    store = open_store(home)
    try:
        entries = list(store.entries(run_id))
    finally:
        store.close()
    doc: dict[str, Any] = {"entries": copy.deepcopy(entries), "chain": {"head_hash": entries[-1]["hash"]}}
    message = tamper(doc)
    assert len(doc["entries"]) == len(entries)
    with contextlib.closing(sqlite3.connect(home / "bitexact.db")) as conn, conn:
        for step, (before, after) in enumerate(zip(entries, doc["entries"])):
            if after != before:
                conn.execute("UPDATE entries SET body = ? WHERE run_id = ? AND step = ?",
                             (canonicalize(after), run_id, step))
    return message


@pytest.mark.parametrize("pinned", [False, True], ids=["unpinned", "pinned"])
@pytest.mark.parametrize("tamper", [None, *IN_PLACE], ids=lambda t: t.__name__ if t else "untouched")
def test_a_tampered_store_gets_the_verdict_the_whole_bundle_got(tmp_path: Path, tamper: Tamper | None,
                                                                pinned: bool) -> None:
    home = tmp_path / "home"
    run_id, key = _demo(home)
    message = _tamper_store(home, run_id, tamper) if tamper is not None else None
    pins = Pins(bundle_keys=frozenset({key.public_hex}), recorder_keys=frozenset({key.public_hex})) if pinned \
        else Pins()
    options = ["--expect-key", key.public_hex, "--expect-recorder-key", key.public_hex] if pinned else []
    shown = run_bitexact(home, "verify", run_id, "--json", *options)
    verdict = json.loads(shown.stdout)
    assert verdict == _in_memory_verdict(home, run_id, key, pins)
    if message is None:
        assert verdict["ok"] and shown.returncode == 0, verdict
        assert verdict["line"].startswith(f"OK: {run_id} - ") and "(jsonl, streamed)" not in verdict["line"]
    else:
        assert (verdict["line"], shown.returncode) == ("FAIL: " + message, 1)
    line = run_bitexact(home, "verify", run_id, *options)
    assert line.stdout == verdict["line"] + "\n"
    assert line.stderr == "".join(f"{scope}\n" for scope in verdict["scope_lines"])


def test_an_unsealed_run_under_require_sealed_and_a_redacted_one_verify_as_before(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(home)
    try:
        key = KeyStore(home).current_or_init()
        writer = Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600)).start(name="open")
        for i in range(10):
            writer.append("tool_call", {"tool": "t", "args": [i], "result": {"account": f"ACCT-{i}"}})
        run_id = writer.run_id
    finally:
        store.close()
    redacted = run_bitexact(home, "redact", run_id, "--field", "3:result.account", "--by", "dpo:alice",
                            "--reason", "erasure")
    assert redacted.returncode == 0, redacted.stderr
    for options, pins in ((["--require-sealed"], Pins(require_sealed=True)),
                          (["--expect-recorder-key", key.public_hex],
                           Pins(recorder_keys=frozenset({key.public_hex}))), ([], Pins())):
        shown = run_bitexact(home, "verify", run_id, "--json", *options)
        assert json.loads(shown.stdout) == _in_memory_verdict(home, run_id, key, pins), options
    sealed_refused = json.loads(run_bitexact(home, "verify", run_id, "--json", "--require-sealed").stdout)
    assert sealed_refused["line"] == \
        "FAIL: bundle is unsealed - its end is not attested and --require-sealed was given"
    assert json.loads(run_bitexact(home, "verify", run_id, "--json").stdout)["redacted"] == 1


def _peak_verifying(run_id: str) -> tuple[int, str]:
    """The peak memory Python allocated while ``bitexact verify RUN`` ran in this process, and its line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tracemalloc.start()
        try:
            cli.main(["verify", run_id], prog_name="bitexact", standalone_mode=False)
        except SystemExit as exc:
            assert exc.code == 0, out.getvalue()
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    return peak, out.getvalue()


def test_verify_run_holds_no_more_for_a_longer_run(home: Path) -> None:
    peaks = []
    for steps in (1000, 8000):
        store = open_store(home)
        try:
            # One checkpoint per 4000 entries keeps the checkpoints (which are held) alike in both runs.
            recorder = Recorder(store, KeyStore(home).current_or_init(),
                                checkpoints=CheckpointPolicy(every=4000, seconds=3600))
            writer = recorder.start(name="long")
            for start in range(1, steps - 1, 500):
                writer.append_batch([("marker", {"note": f"m{i}"}, None)
                                     for i in range(start, min(start + 500, steps - 1))])
            writer.seal()
            run_id = writer.run_id
        finally:
            store.close()
        peak, line = _peak_verifying(run_id)
        assert line.startswith(f"OK: {run_id} - {steps} steps"), line
        peaks.append(peak)
    # 8x the steps (the whole bundle held was about 10 MB more) cost no more than a small constant.
    assert peaks[1] < peaks[0] + 512 * 1024, peaks
