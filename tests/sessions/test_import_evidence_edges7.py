"""Sessions as evidence (`bitexact import session`, `bitexact sessions conformance`): regression tests,
each for a bug the seventh review found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sessions.probe_suite import probe_suite
from click.testing import CliRunner, Result

from bitexact.capture.policy import parse_policy
from bitexact.cli import cli
from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.sessions.conformance import conformance_report
from bitexact.sessions.evidence import import_session, load_session
from bitexact.store import Store


def _bx(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})


# --------------------------------------------------------------------------- conformance report (T-UAS-051)


@pytest.mark.uas("T-UAS-051")
def test_conformance_report_of_a_missing_test_directory_is_an_error_not_an_empty_pass(tmp_path: Path) -> None:
    """docs/sessions-readers.md: "a suite that cannot run at all is one error line and exit 2". With no
    tests/sessions to run (an installed package, run outside a checkout), pytest stopped on the missing
    path, the plugin still wrote an empty result, and the report said ok: "generated from 0 tests",
    every requirement "no test", exit 0."""
    with pytest.raises(RuntimeError, match="missing"):
        conformance_report(tmp_path / "missing")


def test_conformance_report_of_a_directory_with_no_tests_is_an_error_not_an_empty_pass(tmp_path: Path) -> None:
    """A test directory holding no tests (pytest's exit 5, "no tests collected") was reported ok: every
    requirement "no test", exit 0."""
    (tmp_path / "empty").mkdir()
    with pytest.raises(RuntimeError, match=r"\(exit 5\)"):
        conformance_report(tmp_path / "empty")


@pytest.mark.uas("T-UAS-051")
def test_conformance_report_does_not_depend_on_the_callers_bitexact_settings(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite ran with the caller's environment: an operator who deploys with
    BITEXACT_CAPTURE_POLICY=pci (or a dual-control, checkpoint or key setting) got FAIL rows from
    tests written for the shipped defaults (test_import_evidence_edges6 fails under pci), a report
    about their shell, not about the product."""
    suite = probe_suite(tmp_path, {
        "test_probe.py": '''
        import pytest
        from bitexact.capture import load_policy

        @pytest.mark.uas("T-UAS-076")
        def test_runs_under_the_shipped_policy():
            assert load_policy().name == "default"
    ''',
    })
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "pci")
    report = conformance_report(suite)
    assert report.ok, report.failures
    assert {row.id: row.outcome for row in report.rows}["T-UAS-076"] == "pass"


# --------------------------------------------------------------------------- the capture policy's `where`


def _recorder(store: Store, key: SigningKey, fields: list[dict[str, Any]]) -> Recorder:
    policy = parse_policy({"detectors": {"pan": {}, "iban": {}, "credentials": {}},
                           "fields": [*fields, {"kind": "*", "path": "*", "mode": "scrub"}]}, env={})
    return Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600), policy=policy)


_TOOL_AND_PROMPT = (b'{"type":"session.start","data":{},"id":"0"}\n'
                    b'{"type":"user.message","data":{"content":"PROMPT-SECRET"},"id":"1"}\n'
                    b'{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"bash",'
                    b'"arguments":{"command":"cat CMD-SECRET"}},"id":"2"}\n')


def test_a_where_rule_on_the_tool_display_key_applies_to_imported_tool_calls(store: Store,
                                                                             recorder_key: SigningKey) -> None:
    """capture-controls.md: a rule's `where` holds on the step's own fields; an imported tool call's
    `tool` (docs/sessions-evidence.md guidance keys) is how a rule names one tool's calls. The importer
    dropped `tool` under any policy with path rules, before the policy ran, so `where: {tool: bash}`
    never matched and the hash-only arguments were stored in the clear."""
    recorder = _recorder(store, recorder_key, [
        {"kind": "tool_call", "where": {"tool": "bash"}, "path": "data.arguments", "mode": "hash-only"}])
    result = import_session(recorder, load_session(_TOOL_AND_PROMPT, "s.jsonl", engine="copilot"))
    entries = list(store.entries(result.run_id))
    call = next(e for e in entries if e["kind"] == "tool_call")
    assert call["capture"]["fields"]["data.arguments"]["mode"] == "hash-only"
    assert "CMD-SECRET" not in json.dumps(entries)


def test_a_where_rule_on_the_context_name_applies_to_imported_messages(store: Store,
                                                                       recorder_key: SigningKey) -> None:
    """The same for a context entry's `name` (the event type): it said `engine event` under any path
    rule, so `where: {name: user.message}` never matched and the prompt was stored in the clear."""
    recorder = _recorder(store, recorder_key, [
        {"kind": "context", "where": {"name": "user.message"}, "path": "data.content", "mode": "hash-only"}])
    result = import_session(recorder, load_session(_TOOL_AND_PROMPT, "s.jsonl", engine="copilot"))
    entries = list(store.entries(result.run_id))
    assert "PROMPT-SECRET" not in json.dumps(entries)


def test_a_completions_success_kept_hash_only_by_a_rule_is_not_copied_into_its_status(
        store: Store, recorder_key: SigningKey) -> None:
    """docs/sessions-evidence.md: display keys are left out or neutral when a rule keeps what they copy
    ("must not be undone by a copy"); a completion's `status` (`ok`/`failed`) is `data.success` spelt
    out, and stayed in the clear beside its hash-only commitment."""
    recorder = _recorder(store, recorder_key, [{"kind": "tool_call", "path": "*.success", "mode": "hash-only"}])
    log = (b'{"type":"session.start","data":{},"id":"0"}\n'
           b'{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":false},"id":"1"}\n')
    result = import_session(recorder, load_session(log, "s.jsonl", engine="copilot"))
    done = next(e for e in store.entries(result.run_id) if e["kind"] == "tool_call")
    assert done["capture"]["fields"]["data.success"]["mode"] == "hash-only"
    assert done["data"]["status"] not in ("ok", "failed", "unknown"), done["data"]


# --------------------------------------------------------------------------- re-import after a redaction


@pytest.mark.parametrize("fields", [["0:import.source_sha256"], ["0:import.source_sha256", "0:name"]])
def test_reimport_is_refused_after_the_earlier_runs_digest_was_redacted(tmp_path: Path, fields: list[str]) -> None:
    """docs/sessions-evidence.md: "a redaction never lets the same bytes in twice". find_earlier_import
    confirmed a candidate only by run_meta's import.source_sha256; once that value was destroyed (an
    accountable `bitexact redact`), the same bytes were imported a second time, although the run's
    name and every event entry's own `source` block still carry the digest."""
    home = tmp_path / "home"
    log = tmp_path / "session.jsonl"
    log.write_bytes(b'{"type":"session.start","data":{},"id":"0"}\n'
                    b'{"type":"user.message","data":{"content":"hello"},"id":"1"}\n')
    first = _bx(home, "import", "session", str(log), "--run-id", "first", "--engine", "copilot")
    assert first.exit_code == 0, first.output
    redacted = _bx(home, "redact", "first", *(f for field in fields for f in ("--field", field)),
                   "--by", "alice", "--reason", "test")
    assert redacted.exit_code == 0, redacted.output
    again = _bx(home, "import", "session", str(log), "--engine", "copilot")
    assert again.exit_code == 1, f"the same bytes were imported a second time: {again.output}"
    assert "first" in again.stderr
