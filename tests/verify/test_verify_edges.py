"""Edges of export and verify against the bundle spec, found in review: each test pins one behaviour that
used to break (its section comment says how)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bitexact.capture.clause import capture_clause
from bitexact.cli import cli
from bitexact.crypto import GENESIS
from bitexact.crypto.keystore import KeyStore
from bitexact.errors import EvidenceError
from bitexact.evidence.export import RunSource, export_run
from bitexact.evidence.verify import Pins, verify_path
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.recording.audit import record_claim
from bitexact.store import Store

from .conftest import sample_run
from .producer import FORMAT_JSONL, dumps, make_entry, rehash

_TS = "2031-04-02T10:15:30.123456+00:00"


def _recorder(store: Store, home: Path) -> Recorder:
    return Recorder(store, KeyStore(home).current_or_init(), checkpoints=CheckpointPolicy(every=1, seconds=3600))


# --- 1. dispatch: a one-line bundle followed by non-JSON whitespace --------------------------


@pytest.mark.parametrize("trailer", [b"\n\x0c\n", b"\n\x0b\n"])
def test_one_line_bundle_followed_by_a_non_json_whitespace_line_is_not_valid_json(
    tmp_path: Path, trailer: bytes
) -> None:
    # §12.3: "Otherwise the whole file is parsed. A parse or UTF-8 failure gives
    # bundle is not valid JSON: {diag}". Form feed / vertical tab are not JSON whitespace.
    path = tmp_path / "b.json"
    path.write_bytes(dumps(sample_run(None).bundle()) + trailer)
    verdict = verify_path(path, Pins())
    assert verdict.line.startswith("FAIL: bundle is not valid JSON: Extra data"), verdict.line


# --- 2. redacting the field the verifier interprets (run_end.steps) ------------------------


def _sealed(store: Store, home: Path) -> tuple[Recorder, str, int]:
    recorder = _recorder(store, home)
    writer = recorder.start(name="t")
    writer.append("tool_call", {"tool": "t"})
    return recorder, writer.run_id, writer.seal().step


def test_export_redaction_of_the_seal_count_is_refused(store: Store, home: Path, tmp_path: Path) -> None:
    """§5: verifiers read run_end.steps. An export without it could never verify (it used to be written)."""
    recorder, run_id, seal_step = _sealed(store, home)
    with pytest.raises(EvidenceError, match="run_end.steps cannot be redacted"):
        export_run(RunSource.from_store(store, run_id), tmp_path / "b.json", recorder.key,
                   redact=[f"{seal_step}:steps"])
    assert not (tmp_path / "b.json").exists()


def test_store_redaction_of_the_seal_count_is_refused(store: Store, home: Path) -> None:
    """The same for store redaction, where the value would be destroyed and the run never verify again."""
    recorder, run_id, seal_step = _sealed(store, home)
    with pytest.raises(EvidenceError, match="run_end.steps cannot be redacted"):
        record_claim(recorder.attach(run_id), [f"{seal_step}:steps"], by="dpo", reason="test")
    assert not any(e["kind"] == "redaction" for e in store.entries(run_id))


# --- 3. jsonl export reads the run twice with no snapshot ----------------------------------


def test_jsonl_export_of_a_run_appended_to_between_its_two_passes_verifies(
    store: Store, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSONL export reads the run twice (summary, then lines): a run still being recorded used to be
    exported with a header whose head was one entry short of the lines after it."""
    recorder = _recorder(store, home)
    writer = recorder.start(name="live")
    writer.append("tool_call", {"tool": "t"})
    source = RunSource.from_store(store, writer.run_id)
    real = store.entries
    passes = 0

    def entries(run_id: str, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        nonlocal passes
        passes += 1
        if passes == 2:  # the agent is still running: another process appends meanwhile
            recorder.attach(writer.run_id).append("tool_call", {"tool": "u"})
        return real(run_id, start, stop)

    monkeypatch.setattr(store, "entries", entries)
    path = tmp_path / "live.jsonl"
    result = export_run(source, path, recorder.key, fmt="jsonl")
    assert passes == 2 and result.steps == 2
    verdict = verify_path(path, Pins())
    assert verdict.ok, verdict.line


# --- 4. `bitexact verify MISSING` touches the store ----------------------------------------


def test_cli_verify_of_a_missing_file_is_an_input_error_even_without_a_usable_home(tmp_path: Path) -> None:
    # README/docs: exit 2 "cannot read the input"; §12.3: "A missing BUNDLE gives no such file: {path}".
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    missing = tmp_path / "nope.json"
    result = CliRunner().invoke(cli, ["verify", str(missing)],
                                env={"BITEXACT_HOME": str(blocker / "home"), "COLUMNS": "200"})
    assert (result.exit_code, result.output.strip()) == (2, f"FAIL: no such file: {missing}")


# --- 5. verify RUN (a stored run) reads its inputs in another order and normalises paths ----


def _stored_run(home: Path) -> str:
    from bitexact.store import open_store

    store = open_store(home)
    try:
        writer = _recorder(store, home).start(name="t")
        return writer.run_id
    finally:
        store.close()


def test_cli_verify_of_a_stored_run_reads_the_tsa_pin_before_the_trust_file(home: Path, tmp_path: Path) -> None:
    # §12.3 step 1: read the --expect-tsa file first, then load the --trust-file.
    run_id = _stored_run(home)
    tsa, trust = tmp_path / "tsa.pem", tmp_path / "trust.json"
    result = CliRunner().invoke(cli, ["verify", run_id, "--trust-file", str(trust), "--expect-tsa", str(tsa)],
                                env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})
    assert result.output.strip() == f"FAIL: no such file: {tsa} (No such file or directory)"


def test_cli_verify_of_a_stored_run_quotes_the_trust_file_path_as_given(home: Path, tmp_path: Path) -> None:
    # docs/verifier.md: "Paths are quoted as passed (a str from argv is not normalised)".
    run_id = _stored_run(home)
    trust = f"{tmp_path}/./trust.json"
    result = CliRunner().invoke(cli, ["verify", run_id, "--trust-file", trust],
                                env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})
    assert result.output.strip() == f"FAIL: no such file: {trust} (No such file or directory)"


# --- 6. the CLI's streaming verify keeps a string per hash-only field ----------------------


def _hash_only_jsonl(path: Path, count: int) -> None:
    head, lines = GENESIS, []
    for i in range(count):
        entry = make_entry("r", i, head, "tool_call", {"tool": "t", "args": [i]}, ts=_TS)
        entry["capture"] = {"fields": {"args": {"mode": "hash-only", "key_id": "3a9f3a9f3a9f3a9f"}}}
        head = rehash(entry)["hash"]
        lines.append(dumps(entry) + b"\n")
    with path.open("wb") as out:
        out.write(dumps({"format": FORMAT_JSONL, "run_id": "r", "chain": {"head_hash": head}}) + b"\n")
        out.writelines(lines)


def test_streaming_verify_with_the_capture_clause_keeps_memory_constant(tmp_path: Path) -> None:
    # docs/verifier.md: the streamed form keeps memory constant in the number of entries;
    # `bitexact verify` always attaches the capture clause.
    peaks = []
    for count in (1000, 9000):
        path = tmp_path / f"{count}.jsonl"
        _hash_only_jsonl(path, count)
        tracemalloc.start()
        try:
            verdict = verify_path(path, Pins(), clauses=[capture_clause({})])
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert verdict.ok, verdict.line
    assert peaks[1] < peaks[0] + 256 * 1024, peaks
