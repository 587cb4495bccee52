"""A state of the store or a run refuses with exit 1, an input to correct with exit 2 (README, each `--help`).

The line between them: exit 1 when the arguments are good and the same command works once the state changes
(a run's journals folded by `bitexact repair`, a recorder key made by `bitexact keys init`); exit 2 when the
arguments must change (a format that cannot hold the run, a field already redacted). Each state is made for
real in a data directory and the real console script is run against it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from cli.real_command import clear_bitexact_env, demo_run, run_bitexact

from bitexact.crypto.hostkey import load_host_key
from bitexact.recording.journal import JournalRecord, write_journal
from bitexact.sdk.stores import close_stores, recorder_for


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


def _run_with_a_leftover_journal(home: Path, secret: str) -> str:
    """A run whose entry reached the chain while its journal stayed (the process died in between): a state
    in which a redaction waits for `bitexact repair`, since the journal holds a copy of the value."""
    data = {"tool": "lookup", "result": {"account": secret}}
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="crashed")
    writer.append("tool_call", data)
    path = write_journal(home, load_host_key(home), JournalRecord(writer.run_id, 1, "tool_call", data,
                                                                  steps_before=1))
    then = time.time() - 600  # untouched for ten minutes: its process is gone
    os.utime(path, (then, then))
    close_stores()
    return writer.run_id


def _kinds(home: Path, run_id: str) -> list[str]:
    shown = run_bitexact(home, "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    return [step["kind"] for step in json.loads(shown.stdout)["steps"]]


# -- redact: journals to fold first ----------------------------------------------------------------------------


def test_a_redaction_waiting_for_the_run_s_journals_exits_1_and_works_once_they_are_folded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = _run_with_a_leftover_journal(home, "ACCT-5511")
    redact = ("redact", run_id, "--field", "1:result.account", "--by", "dpo:alice", "--reason", "erasure")
    refused = run_bitexact(home, *redact)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.startswith(f"error: run {run_id} has 1 journal(s) not folded into its chain"), refused.stderr
    assert f"run `bitexact repair {run_id} --by NAME --note TEXT` first" in refused.stderr, refused.stderr
    assert "redaction" not in _kinds(home, run_id)  # refused before its claim: nothing on the chain
    assert run_bitexact(home, "repair", run_id, "--by", "ops:bob", "--note", "host lost power").returncode == 0
    done = run_bitexact(home, *redact)  # the same command, its arguments unchanged
    assert done.returncode == 0, done.stderr
    assert "ACCT-5511" not in run_bitexact(home, "show", run_id, "--json").stdout


def test_the_library_still_raises_it_as_an_evidence_error_and_types_it_as_a_state(tmp_path: Path) -> None:
    """Callers that caught the refusal as an ``EvidenceError`` (a ``ValueError``) still do; the command line
    tells it from a bad field by its type, never by its words."""
    from bitexact.errors import EvidenceError, StateRefusedError
    from bitexact.recording.audit import UnfoldedJournalsError, record_claim

    home = tmp_path / "home"
    run_id = _run_with_a_leftover_journal(home, "ACCT-5512")
    recorder, _ = recorder_for(home)
    try:
        with pytest.raises(UnfoldedJournalsError) as refused:
            record_claim(recorder.attach(run_id), ["1:result.account"], by="dpo:alice", reason="erasure")
    finally:
        close_stores()
    assert isinstance(refused.value, EvidenceError) and isinstance(refused.value, StateRefusedError)


def test_a_field_already_redacted_stays_an_input_to_correct_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    redact = ("redact", run_id, "--field", "2:content.text", "--by", "dpo:alice", "--reason", "erasure")
    assert run_bitexact(home, *redact).returncode == 0
    again = run_bitexact(home, *redact)
    assert again.returncode == 2 and "step 2: path content.text is already redacted" in again.stderr, again.stderr


def test_resume_with_nothing_pending_and_repair_of_a_sealed_run_are_not_refused(tmp_path: Path) -> None:
    """Both meet a state, not a bad input, and neither state refuses: nothing pending is what --resume is
    run to reach (a redaction killed after its removal leaves exactly that), and a repair may follow a
    seal (bundle spec: audit entries may), accepting a history found damaged. Exit 0, said in words."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    resumed = run_bitexact(home, "redact", run_id, "--resume")
    assert resumed.returncode == 0 and resumed.stdout.strip() == f"nothing pending on {run_id}", resumed.stdout
    repaired = run_bitexact(home, "repair", run_id, "--by", "ops:bob", "--note", "accept as recorded")
    assert repaired.returncode == 0, repaired.stderr
    assert _kinds(home, run_id)[-2:] == ["run_end", "repair"]


# -- export: no recorder key, and a format that cannot hold the run ------------------------------------------


def test_export_with_no_recorder_key_exits_1_naming_keys_init(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    (home / "keys" / "recorder.key").rename(tmp_path / "recorder.key.elsewhere")
    out = tmp_path / "run.json"
    refused = run_bitexact(home, "export", run_id, "-o", str(out))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (f"error: no key at {home / 'keys' / 'recorder.key'}: create one with"
                                      " `bitexact keys init`"), refused.stderr
    assert not out.exists()
    assert run_bitexact(home, "keys", "init").returncode == 0
    assert run_bitexact(home, "export", run_id, "-o", str(out)).returncode == 0  # the same command


def test_export_with_a_recorder_key_others_may_read_exits_1_as_demo_does(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    key = home / "keys" / "recorder.key"
    key.chmod(0o644)
    refused = run_bitexact(home, "export", run_id, "-o", str(tmp_path / "run.json"))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"it must be owner-only (chmod 600 {key})" in refused.stderr, refused.stderr


@pytest.mark.parametrize("fmt", ["json", "dsse"])
def test_export_of_a_run_too_large_for_one_document_exits_2_and_its_error_names_format_jsonl(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """The format chosen cannot hold the run, now or later (a run only grows): the argument must change,
    exit 2, and the error line itself (not only the hint under it) says which argument to give."""
    from bitexact.cli import cli
    from bitexact.evidence import export

    home = tmp_path / "home"
    run_id = demo_run(home)
    monkeypatch.setattr(export, "MAX_DOCUMENT_BYTES", 2048)  # 256 MiB is more than a test should write
    out = tmp_path / f"run.{fmt}"
    result = CliRunner().invoke(cli, ["export", run_id, "-o", str(out), "--format", fmt],
                                env={"BITEXACT_HOME": str(home), "COLUMNS": "200"}, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert f"run {run_id} as a {fmt} bundle is" in error and "(`--format jsonl`)" in error, error
    assert not out.exists()
