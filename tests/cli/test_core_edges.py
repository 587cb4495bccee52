"""Evidence core and its CLI (export, verify, store, keys): regression tests, each for a bug a review found.

Every test here fails on the code as reviewed and passes once its bug is fixed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli.real_command import clear_bitexact_env
from click.testing import CliRunner, Result

import bitexact.recording.audit as audit_module
from bitexact.cli import cli
from bitexact.crypto.keystore import KeyStore
from bitexact.evidence.verify import Pins, verify_path
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.recording.audit import record_claim
from bitexact.store import open_store

BITEXACT = str(Path(sys.executable).parent / "bitexact")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


def _bx(home: Path, *args: str, **env: str) -> Result:
    runner = CliRunner()
    return runner.invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200", **env},
                         catch_exceptions=False)


def _proc(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    """The real `bitexact` script, with a clean BITEXACT_* environment; stdout kept as bytes."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    environ.update({"BITEXACT_HOME": str(home), "COLUMNS": "200", **env})
    return subprocess.run([BITEXACT, *args], env=environ, capture_output=True, timeout=120)


def _demo_run(home: Path) -> str:
    result = _bx(home, "demo", "--json")
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["run_id"])


# --- the SQLite store: another application's database is left alone ----------------------------------


def test_a_foreign_database_keeps_its_file_mode_when_refused(tmp_path: Path) -> None:
    """docs/store.md: "Another application's database is left alone. A SQLite file found where the store
    goes that holds tables of its own (and no schema version) is refused with a StoreError naming them,
    before anything is written to it"; the error itself says "BitExact leaves it as it is".

    SQLiteStore.__init__ runs _create_private (which tightens an existing database readable by others to
    0600) before connect() refuses the foreign file: the other application's 0644 database is left 0600,
    so the application (a web server reading it as another user, say) can no longer read its own file."""
    home = tmp_path / "home"
    home.mkdir()
    db = home / "bitexact.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    os.chmod(db, 0o644)

    result = _bx(home, "runs")
    assert result.exit_code != 0
    assert "not a BitExact store" in result.output  # the refusal itself works
    assert stat.S_IMODE(db.stat().st_mode) == 0o644, "the refused database's mode was changed"


# --- -o never overwrites a capture key in force ------------------------------------------------------


@pytest.mark.parametrize("command", ["export", "trust-file"])
def test_o_refuses_a_kms_encrypted_capture_key_named_by_the_policy(tmp_path: Path, command: str) -> None:
    """README: "An `-o` that names one of BitExact's own files (...) or a capture key in force is refused
    with exit 2, so a typo cannot overwrite the evidence or the keys it depends on". docs/capture-keys.md:
    a policy's hash_only_key / retired_keys may be {"kms_ciphertext": PATH}, "a KMS ciphertext of the
    32-byte key". AppContext.refuse_own_file (_capture_key_files) only collects {"file": ...} specs, so
    `bitexact export RUN -o <that file>` replaces the encrypted capture key with a bundle (exit 0): every
    hash-only field committed under it can never be opened again."""
    home = tmp_path / "home"
    run_id = _demo_run(home)
    secrets_dir = tmp_path / "secrets"
    secrets_dir.mkdir()
    kms_key = secrets_dir / "capture.kms"
    kms_key.write_bytes(b"\x01\x02\x03\x00AQICAHh-kms-ciphertext-blob")
    original = kms_key.read_bytes()
    policy = secrets_dir / "policy.json"
    policy.write_text(json.dumps({"hash_only_key": {"kms_ciphertext": str(kms_key)}}))

    if command == "export":
        result = _bx(home, "export", run_id, "-o", str(kms_key), BITEXACT_CAPTURE_POLICY=str(policy))
    else:
        result = _bx(home, "keys", "trust-file", "-o", str(kms_key), BITEXACT_CAPTURE_POLICY=str(policy))
    assert kms_key.read_bytes() == original, "the KMS-encrypted capture key was overwritten"
    assert result.exit_code == 2, result.output


# --- export: a redaction claim that lands between the pending check and the fixed prefix --------------


def test_export_racing_a_redaction_claim_never_writes_an_unverifiable_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/store.md: "Exports wait for pending redactions. `bitexact export` of a run with a redaction
    claim not yet applied (...) is refused (...): the bundle would carry the claimed values and fail
    verification"; docs/bundle-format.md: a stored run "is exported as it stands when the export starts:
    its length is fixed then (...) so exporting a run still being recorded gives a verifiable prefix".

    export_command checks pending_claims() *before* RunSource.from_store fixes the run's length. A
    `bitexact redact` by another operator whose claim lands in between (its removal not yet done) is
    inside the fixed prefix but was never seen by the check, and the exporter's race check only looks
    for markers without claims, not claims without markers: the bundle is written, exit 0, and fails
    verification at every tier ("redaction of ... recorded but not applied"). Simulated
    deterministically: the claim is appended right after the pending check returns."""
    home = tmp_path / "home"
    run_id = _demo_run(home)
    real_pending = audit_module.pending_claims

    def pending_then_another_operator_claims(store: Any, rid: str) -> Any:
        found = real_pending(store, rid)
        recorder = Recorder(store, KeyStore(home).current(), checkpoints=CheckpointPolicy(every=1, seconds=3600))
        record_claim(recorder.attach(rid), ["3:result.policy"], by="ops", reason="gdpr erasure")
        return found  # the removal (apply_pending) has not landed yet

    # export_command imports pending_claims from its module when it runs
    monkeypatch.setattr(audit_module, "pending_claims", pending_then_another_operator_claims)
    out = tmp_path / "bundle.json"
    result = _bx(home, "export", run_id, "-o", str(out))
    if result.exit_code != 0:  # refusing, as for any pending claim, is a fix
        assert not out.exists()
        return
    verdict = verify_path(out, Pins(bundle_keys=None, recorder_keys=None))
    assert verdict.ok, verdict.line


# --- --json output is valid JSON whatever stdout's encoding -------------------------------------------


def test_show_json_is_valid_json_on_a_non_utf8_stdout(tmp_path: Path) -> None:
    """Project rule: --json output must be valid JSON. cli/__init__.py reconfigures stdout with
    errors="backslashreplace" and print_json writes ensure_ascii=False, so on a stdout whose encoding is
    not UTF-8 (a Windows console or a redirected cp1252 stream; here PYTHONIOENCODING=cp1252) a
    character the encoding lacks is written as Python's escape: an astral character becomes
    `\\U0001f600`, which is not a JSON escape, and `bitexact show RUN --json` prints a document no JSON
    parser accepts. (print_json already escapes lone surrogates "so the document stays valid JSON".)"""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current_or_init())
        writer = recorder.start(name="emoji")
        writer.append("tool_call", {"tool": "react", "result": {"reply": "done \U0001f600"}})
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()

    shown = _proc(home, "show", run_id, "--json", PYTHONIOENCODING="cp1252")
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout.decode("cp1252"))
    assert document["steps"][1]["data"]["result"]["reply"] == "done \U0001f600"


def test_verify_of_an_empty_target_cannot_read_its_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Path("") is the working directory: an empty TARGET was verified as a bag nobody named.
    monkeypatch.chdir(tmp_path)
    result = _bx(tmp_path / "home", "verify", "")
    assert result.exit_code == 2, result.output
    assert "TARGET is empty" in result.output


def test_a_candidate_file_without_open_is_refused_not_ignored(tmp_path: Path) -> None:
    # `verify RUN --candidate-file F --by X` without --open verified the run and ignored the test asked for.
    home = tmp_path / "home"
    demo = _bx(home, "demo", "--json")
    run_id = json.loads(demo.stdout)["run_id"]
    candidate = tmp_path / "candidate.json"
    candidate.write_text('"svc:claims-agent"')
    result = _bx(home, "verify", run_id, "--candidate-file", str(candidate), "--by", "alice")
    assert result.exit_code == 1 and "--open" in result.output


def test_export_from_a_home_with_no_store_makes_none(tmp_path: Path) -> None:
    # `export RUN` on a data directory holding no store made an empty store (and its directory) first.
    home = tmp_path / "home"
    result = _bx(home, "export", "run-x", "-o", str(tmp_path / "b.json"))
    assert result.exit_code == 2 and "no run 'run-x'" in result.output
    assert not (home / "bitexact.db").exists()
