"""`bitexact import session`: regression tests, each for a bug a review found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from bitexact.capture.policy import parse_policy
from bitexact.cli import cli
from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.sessions.evidence import import_session, load_session
from bitexact.store import Store, open_store

CLAUDE = Path(__file__).resolve().parent / "fixtures" / "claude" / "jsonl_full_session_with_debug_and_trailing_extension.jsonl"


def _bx(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})


def _claude_log_with(tmp_path: Path, *records: dict[str, Any]) -> Path:
    """The first three records of a real Claude log, then ``records`` (which its reader skips)."""
    head = CLAUDE.read_text().splitlines(keepends=True)[:3]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(head) + "".join(json.dumps(r) + "\n" for r in records))
    return log


# --------------------------------------------------------------------------- the reader's gap marker


def test_a_skipped_records_type_quoting_a_huge_line_number_does_not_leave_half_a_run(tmp_path: Path) -> None:
    # The gap marker's `positions` were read from the diagnostics before their quoted literals were
    # elided, so a skipped record typed "line 99999999999999999999" put an unsafe integer in the
    # marker: the write path refused it after the run was created (exit 1, an unsealed run that
    # every retry then reports as an interrupted import).
    home = tmp_path / "home"
    log = _claude_log_with(tmp_path, {"type": "line 99999999999999999999"})
    result = _bx(home, "import", "session", str(log), "--run-id", "r1")
    assert result.exit_code == 0, result.output
    store = open_store(home)
    try:
        assert store.run("r1").sealed
        marker = store.entry("r1", 1)
    finally:
        store.close()
    assert marker["kind"] == "marker" and marker["data"]["positions"] == [4]


def test_the_gap_markers_positions_hold_no_digits_of_a_skipped_records_type(tmp_path: Path) -> None:
    # docs/sessions-evidence.md: quoted literals of the diagnostics (a skipped record's type) are elided
    # before they reach the chain; `positions` still took a number out of the type.
    home = tmp_path / "home"
    log = _claude_log_with(tmp_path, {"type": "see element 31337"})
    assert _bx(home, "import", "session", str(log), "--run-id", "r1").exit_code == 0
    store = open_store(home)
    try:
        marker = store.entry("r1", 1)
    finally:
        store.close()
    assert marker["data"]["positions"] == [4]
    assert "31337" not in json.dumps(marker["data"])


# --------------------------------------------------------------------------- deep events kept as text


def test_a_too_deep_event_holding_a_non_finite_number_is_recorded_as_text_not_refused(tmp_path: Path) -> None:
    # docs/sessions-evidence.md: non-finite numbers are "recorded as decimal strings and listed in
    # `coerced` [...] rather than refusing the import", and a part nesting too deep is kept as text. An
    # event that is both (1e999 reads as inf) was refused whole: "import stopped: an event cannot be
    # written even as JSON text" (exit 1, an input fault reported as a refusal), nothing recorded.
    home = tmp_path / "home"
    deep = "[" * 130 + "]" * 130
    log = tmp_path / "copilot.jsonl"
    log.write_text('{"type":"session.start","data":{"sessionId":"a"},"id":"0"}\n'
                   '{"type":"user.message","data":{"content":"x","n":1e999,"deep":' + deep + '},"id":"1"}\n')
    result = _bx(home, "import", "session", str(log), "--engine", "copilot", "--run-id", "r1")
    assert result.exit_code == 0, result.output
    store = open_store(home)
    try:
        entry = store.entry("r1", 2)
    finally:
        store.close()
    data = entry["data"]
    assert set(data["as_text"]) == {"data"}
    assert json.loads(data["data_json"])["n"] == "inf"
    assert data["coerced"] == {"non_finite": ["/data/n"]}


# --------------------------------------------------------------------------- guidance keys under path rules


def test_an_event_type_kept_hash_only_by_a_rule_is_not_copied_in_the_clear(store: Store,
                                                                            recorder_key: SigningKey) -> None:
    # docs/sessions-evidence.md leaves `tool` out under path rules "since a rule such as `*.toolName
    # hash-only` must not be undone by a copy"; the context's `name` and the marker's `note` are copies of
    # the event's `type` all the same, and stay in the clear when a rule keeps `type` hash-only.
    policy = parse_policy({"detectors": {"pan": {}, "iban": {}, "credentials": {}},
                           "fields": [{"kind": "*", "path": "type", "mode": "hash-only"},
                                      {"kind": "*", "path": "*", "mode": "scrub"}]}, env={})
    recorder = Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=4, seconds=3600), policy=policy)
    log = (b'{"type":"session.start","data":{},"id":"0"}\n'
           b'{"type":"acme.kyc_case_SECRET","data":{"a":1},"id":"1"}\n'
           b'{"type":"user.SECRET_message","data":{"content":"x"},"id":"2"}\n')
    result = import_session(recorder, load_session(log, "s.jsonl", engine="copilot"))
    entries = list(store.entries(result.run_id))
    assert all(e["data"].get("type") in (None, "[hash-only]") for e in entries if "index" in e["data"])
    assert "SECRET" not in json.dumps(entries)


# --------------------------------------------------------------------------- an import still running


_IMPORTER_HOLDING_ITS_RUN = """
import os, sys
from pathlib import Path
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.sessions.evidence import read_session, run_name
from bitexact.store import open_store
store = open_store()
recorder = Recorder(store, KeyStore(Path(os.environ["BITEXACT_HOME"])).current_or_init())
source = read_session(sys.argv[1])
writer = recorder.start(name=run_name(source), meta={"import": source.describe()})  # an import under way
print(writer.run_id, flush=True)
sys.stdin.readline()
writer.seal()
store.close()
"""


def test_a_reimport_while_the_first_import_runs_does_not_call_it_interrupted(tmp_path: Path) -> None:
    # A second `bitexact import session` of the same bytes, started while the first is still recording,
    # was told "(unsealed: that import was interrupted)"; the first then finished and sealed its run.
    home = tmp_path / "home"
    env = {**os.environ, "BITEXACT_HOME": str(home)}
    first = subprocess.Popen([sys.executable, "-c", _IMPORTER_HOLDING_ITS_RUN, str(CLAUDE)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout is not None and first.stdin is not None
        run_id = first.stdout.readline().strip()
        second = _bx(home, "import", "session", str(CLAUDE))
        first.stdin.write("\n")
        first.stdin.flush()
        assert first.wait(timeout=30) == 0
    finally:
        first.kill()
    assert second.exit_code == 1 and run_id in second.stderr
    store = open_store(home)
    try:
        assert store.run(run_id).sealed  # it was never interrupted ...
    finally:
        store.close()
    assert "still running" in second.stderr  # ... and the refusal must not say it was
