"""Re-import detection reads the chain, not the run's name: a scrubbed name, or redacted first entries,
never let the same bytes in twice while any entry still declares their digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli
from bitexact.recording import Recorder
from bitexact.sessions.evidence import find_earlier_import, import_session, load_session
from bitexact.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HEX_DETECTOR = {"detectors": {"pan": {}, "iban": {}, "credentials": {},
                              "custom": [{"name": "hextoken", "pattern": "[0-9a-f]{40}"}]}}


def _bx(home: Path, *args: str, policy: Path | None = None) -> Result:
    env = {"BITEXACT_HOME": str(home), "COLUMNS": "300"}
    if policy is not None:
        env["BITEXACT_CAPTURE_POLICY"] = str(policy)
    return CliRunner().invoke(cli, list(args), env=env)


def test_a_policy_that_scrubs_the_digest_in_the_run_name_still_refuses_the_same_bytes(tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(HEX_DETECTOR))
    home, log = tmp_path / "home", FIXTURES / "gemini" / "message_id_snapshots.jsonl"
    first = _bx(home, "import", "session", str(log), "--json", policy=policy)
    assert first.exit_code == 0, first.output
    run_id = json.loads(first.stdout)["run_id"]
    names = [r["meta"].get("name") for r in json.loads(_bx(home, "runs", "--json").stdout)]
    assert names and "[HEXTOKEN]" in names[0]  # the digest did not survive the policy in the name
    again = _bx(home, "import", "session", str(log), policy=policy)
    assert again.exit_code == 1, again.output
    assert run_id in again.stderr and "already imported" in again.stderr
    without_policy = _bx(home, "import", "session", str(log))  # the policy changed since: still the same bytes
    assert without_policy.exit_code == 1 and run_id in without_policy.stderr
    assert len(json.loads(_bx(home, "runs", "--json").stdout)) == 1


@pytest.mark.parametrize("extra", [[], ["3:source.sha256", "4:source.sha256"]])
def test_redacting_the_name_run_meta_and_the_first_entries_digests_still_refuses_the_same_bytes(
        tmp_path: Path, extra: list[str]) -> None:
    home, log = tmp_path / "home", FIXTURES / "opencode" / "run_format_json_session.jsonl"
    first = _bx(home, "import", "session", str(log), "--run-id", "first")
    assert first.exit_code == 0, first.output
    fields = ["0:name", "0:import.source_sha256", "1:source.sha256", "2:source.sha256", *extra]
    redacted = _bx(home, "redact", "first", *(a for f in fields for a in ("--field", f)), "--by", "t:me",
                   "--reason", "test")
    assert redacted.exit_code == 0, redacted.output
    again = _bx(home, "import", "session", str(log))
    assert again.exit_code == 1, f"the same bytes were imported a second time: {again.output}"
    assert "first" in again.stderr


def test_other_bytes_are_still_imported_after_such_a_redaction(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = _bx(home, "import", "session", str(FIXTURES / "opencode" / "run_format_json_session.jsonl"),
                "--run-id", "first")
    assert first.exit_code == 0, first.output
    fields = ["0:name", "0:import.source_sha256", "1:source.sha256", "2:source.sha256"]
    assert _bx(home, "redact", "first", *(a for f in fields for a in ("--field", f)), "--by", "t:me",
               "--reason", "test").exit_code == 0
    other = _bx(home, "import", "session", str(FIXTURES / "gemini" / "message_id_snapshots.jsonl"))
    assert other.exit_code == 0, other.output


def test_ordinary_named_runs_and_other_imports_cost_no_entry_read(plain_recorder: Recorder, store: Store,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(5):
        writer = plain_recorder.start(name=f"agent run {number}")
        writer.append("context", {"name": "step"})
        writer.seal()
        line = json.dumps({"type": "user.message", "data": {"content": f"hi {number}"}, "id": "1"}) + "\n"
        import_session(plain_recorder, load_session(line.encode(), f"s{number}.jsonl", engine="copilot"))
    scrubbed = plain_recorder.start(name="session import x.jsonl sha256:[HEXTOKEN]00")
    scrubbed.append("context", {"name": "step"})
    scrubbed.seal()
    read: list[str] = []
    entry = store.entry

    def counted(run_id: str, step: int) -> dict:
        read.append(run_id)
        return entry(run_id, step)

    monkeypatch.setattr(store, "entry", counted)
    assert find_earlier_import(store, "0" * 64) is None
    assert read == [scrubbed.run_id]  # only the run whose name may be a scrubbed import name is read
