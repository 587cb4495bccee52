"""`bitexact import session` and `bitexact sessions unify`: regression tests, each for a bug a review found."""

from __future__ import annotations

import hashlib
import re
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bitexact.capture import load_policy
from bitexact.cli import cli
from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.sessions.evidence import import_session, load_session
from bitexact.sessions.unify import unify
from bitexact.store import Store

INIT = {"type": "session.init", "data": {"sourceEngine": "copilot"}}


def _jsonl(*events: dict[str, Any]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def _default_recorder(store: Store, key: SigningKey) -> Recorder:
    """The write path under the shipped default capture policy (what a user gets with no configuration)."""
    return Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600), policy=load_policy("default"))


def _cli(home: Path) -> Any:
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})

    return invoke


# --------------------------------------------------------------------------- the source digest in the entries


def _log_whose_digest_reads_as_a_card_number() -> bytes:
    """A small, valid session log whose SHA-256 hex holds a digit run the default PAN detector finds.

    About one file in a few hundred has such a digest, so a deterministic search finds one at once.
    """
    from bitexact.capture.detectors.pan import is_pan

    for n in range(200_000):
        data = _jsonl({"type": "session.init", "data": {"sourceEngine": "copilot", "n": n}},
                      {"type": "user.message", "data": {"content": "hello"}})
        # Digits of the digest that read as a card number (the detector now knows a hex digest for one).
        runs = re.findall(r"\d{12,}", hashlib.sha256(data).hexdigest())
        if any(is_pan(run[i:i + k]) for run in runs for k in range(12, 20) for i in range(len(run) - k + 1)):
            return data
    raise AssertionError("no such digest found")  # pragma: no cover


def test_source_sha256_in_every_event_entry_is_the_files_digest_under_the_default_policy(
    store: Store, recorder_key: SigningKey
) -> None:
    # docs/sessions-evidence.md, "Event entry data": `source` | `sha256` (of the file's bytes).
    # The digest is the recorder's own provenance of the entry; the default policy's PAN detector reads
    # the hex digest as text and rewrites a digit run of it to "[PAN ****NNNN]", so the entries no longer
    # name the file they came from (and the verdict counts a "scrubbed card number" that never existed).
    data = _log_whose_digest_reads_as_a_card_number()
    source = load_session(data, "session.jsonl")
    result = import_session(_default_recorder(store, recorder_key), source)
    events = [e for e in store.entries(result.run_id) if e["kind"] not in ("run_meta", "run_end")]
    assert len(events) == 2
    assert [e["data"]["source"]["sha256"] for e in events] == [source.sha256] * 2
    assert all("capture" not in e for e in events)  # nothing the engine wrote holds a card number


# --------------------------------------------------------------------------- malformed input in the CLI


def test_import_session_of_a_copilot_log_with_a_deeply_nested_line_is_no_traceback(tmp_path: Path) -> None:
    # A malformed (too deeply nested) record must be skipped and declared, as every other engine's reader
    # does, or refused with exit 2; the Copilot reader lets RecursionError escape the CLI as a traceback.
    deep = '{"type":"user.message","data":{"x":' + "[" * 5000 + "]" * 5000 + "}}"
    log = tmp_path / "copilot.jsonl"
    log.write_text(json.dumps(INIT) + "\n" + json.dumps({"type": "user.message", "data": {"content": "hi"}})
                   + "\n" + deep + "\n")
    result = _cli(tmp_path / "home")("import", "session", str(log), "--engine", "copilot")
    assert not isinstance(result.exception, RecursionError), "traceback: RecursionError"
    assert result.exit_code in (0, 2), result.output


# --------------------------------------------------------------------------- re-import detection


def test_reimport_is_refused_after_the_earlier_runs_name_was_redacted(tmp_path: Path) -> None:
    # docs/sessions-evidence.md: "Identity is the SHA-256 of the bytes: the same bytes under another name
    # [...] are refused" and find_earlier_import "confirms it in the candidate's
    # run_meta.import.source_sha256 (the chain, not a free-text name, decides)". Redacting run_meta's
    # `name` (the file name, an accountable `bitexact redact`) drops the store's copy of the name, the only
    # place the scan looks for the digest, so the same bytes import a second time although the earlier
    # run's run_meta still holds import.source_sha256.
    bx = _cli(tmp_path / "home")
    log = tmp_path / "session.jsonl"
    log.write_bytes(_jsonl(INIT, {"type": "user.message", "data": {"content": "hello"}}))
    first = bx("import", "session", str(log), "--run-id", "first", "--json")
    assert first.exit_code == 0, first.output
    sha = json.loads(first.stdout)["source"]["source_sha256"]
    redacted = bx("redact", "first", "--field", "0:name", "--by", "alice", "--reason", "private file name")
    assert redacted.exit_code == 0, redacted.output
    again = bx("import", "session", str(log), "--json")
    assert again.exit_code == 1, f"the same bytes (sha256 {sha}) were imported a second time: {again.stdout}"
    assert "first" in again.stderr


# --------------------------------------------------------------------------- unify: symlinks


_COPILOT_EVENTS = (
    '{"type":"session.start","data":{"sessionId":"abc","selectedModel":"gpt-5"},"id":"1",'
    '"timestamp":"2026-01-01T00:00:00.000Z","parentId":null}\n'
    '{"type":"user.message","data":{"content":"hello"},"id":"2","timestamp":"2026-01-01T00:00:01.000Z",'
    '"parentId":"1"}\n')


@pytest.mark.parametrize("linked", ["copilot-session-state", "agent-stdio.log", "agent/agent_execution_exit_code.txt"])
def test_unify_warns_symlink_refused_for_every_symlinked_artifact_path(tmp_path: Path, linked: str) -> None:
    # docs/sessions-readers.md (Merger): "Paths containing a symlink are refused with a `symlink_refused`
    # warning." T-UAS-063: "Source absence and a present empty source MUST remain distinguishable."
    # These paths are read through list_dir / _read_optional, which skip a symlink silently: the
    # collection reads as if the file were absent (a symlinked stdio's ::add-mask:: values are dropped
    # without a word).
    outside = tmp_path / "outside"
    (outside / "s1").mkdir(parents=True)
    (outside / "s1" / "events.jsonl").write_text(_COPILOT_EVENTS)
    (outside / "stdio.log").write_text("::add-mask::hunter2\nhello\n")
    (outside / "exit.txt").write_text("1\n")
    root = tmp_path / "root"
    root.mkdir()
    if linked != "copilot-session-state":
        (root / "agent-session.jsonl").write_text('{"type":"user.message","data":{"content":"hi"}}\n')
    target = {"copilot-session-state": outside, "agent-stdio.log": outside / "stdio.log",
              "agent/agent_execution_exit_code.txt": outside / "exit.txt"}[linked]
    (root / linked).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, root / linked)
    out = tmp_path / "aw_session.jsonl"
    report = unify(root, out, env={})
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert b"hello" not in out.read_bytes()  # not followed (this part is right)
    codes = [r["data"]["code"] for r in records if r["type"] == "session.collection_warning"]
    assert "symlink_refused" in codes, report.warnings
