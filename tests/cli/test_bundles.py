"""Export and verify through the CLI: every format, redaction, pins, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, recorded_run


def _pub(bx: Invoke) -> str:
    return json.loads(bx("keys", "show", "--json").output)[0]["public_key"]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "dsse"])
@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
def test_every_format_round_trips_under_every_pin(bx: Invoke, tmp_path: Path, fmt: str, alg: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_HASH_ALG", alg)
    run_id = recorded_run(bx)
    out = tmp_path / f"bundle.{fmt}"
    exported = bx("export", run_id, "-o", str(out), "--format", fmt)
    assert exported.exit_code == 0, exported.output
    pub = _pub(bx)
    line = bx("verify", str(out), "--expect-key", pub, "--expect-recorder-key", pub, "--require-sealed")
    assert line.exit_code == 0, line.output
    assert line.output.startswith(f"OK: {run_id} - 8 steps (observed 4 / asserted 4 / synthetic 0), chain verified, sealed, signed, recorder-attested")
    if fmt == "jsonl":
        assert line.output.rstrip().endswith("(jsonl, streamed)")
    plain = bx("verify", str(out))
    assert plain.exit_code == 0
    assert "signing key not pinned - pass --expect-key" in plain.output


def test_export_time_redaction_verifies_signed_and_fails_the_recorder_tier(bx: Invoke, tmp_path: Path) -> None:
    run_id = recorded_run(bx)
    out = tmp_path / "shared.json"
    result = bx("export", run_id, "-o", str(out), "--redact", "3:result.policy", "--redact", "1:principal")
    assert result.exit_code == 0, result.output
    pub = _pub(bx)
    signed = bx("verify", str(out), "--expect-key", pub)
    assert signed.exit_code == 0, signed.output
    assert "2 field(s) redacted" in signed.output
    recorder = bx("verify", str(out), "--expect-recorder-key", pub)
    assert recorder.exit_code == 1
    assert recorder.output.strip() == (
        "FAIL: step 1: path principal is marked redacted but no on-chain redaction claim records it"
        " - an unaccountable redaction is not recorder-authenticated"
    )
    bundle = json.loads(out.read_text())
    assert "principal" not in bundle["entries"][1]["data"]
    assert "principal" in bundle["entries"][1]["commitments"]


def test_verify_exit_codes(bx: Invoke, tmp_path: Path) -> None:
    missing = bx("verify", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2
    assert missing.output.strip() == f"FAIL: no such file: {tmp_path / 'nope.json'}"
    no_trust = bx("verify", str(tmp_path / "nope.json"), "--trust-file", str(tmp_path / "t.json"))
    assert no_trust.exit_code == 2
    assert no_trust.output.startswith(f"FAIL: no such file: {tmp_path / 't.json'} (")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "bitexact-bundle/1", "format": "x"}')
    dup = bx("verify", str(bad))
    assert dup.exit_code == 1
    assert dup.output.strip() == "FAIL: bundle is not valid JSON: duplicate key 'format'"


def test_verify_json_output_for_scripts(bx: Invoke, tmp_path: Path) -> None:
    run_id = recorded_run(bx)
    out = tmp_path / "b.json"
    bx("export", run_id, "-o", str(out))
    verdict = json.loads(bx("verify", str(out), "--json").output)
    assert verdict["ok"] is True and verdict["steps"] == 8 and verdict["sealed"] is True
    assert verdict["prov_counts"] == {"observed": 4, "asserted": 4, "synthetic": 0}


def test_a_run_in_the_store_can_be_verified_by_id(bx: Invoke) -> None:
    run_id = recorded_run(bx)
    result = bx("verify", run_id, "--require-sealed")
    assert result.exit_code == 0, result.output


def test_export_of_an_unknown_run_is_an_input_error(bx: Invoke, tmp_path: Path) -> None:
    result = bx("export", "run-nope", "-o", str(tmp_path / "x.json"))
    assert result.exit_code == 2
    assert "no run 'run-nope'" in result.output
