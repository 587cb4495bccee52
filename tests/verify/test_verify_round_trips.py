"""Round trips (§13 item 13): every form, both algorithms, with and without redaction, under every pin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Verdict, verify_cli

from .conftest import sample_run
from .producer import dumps, to_dsse, to_jsonl

CAVEAT_SIGNED = "signed (signing key not pinned - pass --expect-key to know whose signature it is)"
MARKER_FAIL = (
    "FAIL: step 2: path args is marked redacted but no on-chain redaction claim records it"
    " - an unaccountable redaction is not recorder-authenticated"
)


def build(redaction: str, alg: str, recorder: SigningKey) -> tuple[dict[str, Any], int, str]:
    """The bundle, its redacted count, and its counts clause."""
    run = sample_run(recorder, alg=alg)
    if redaction == "store":
        run.redact((2, "result.n"), (3, "response.text"))
        return run.bundle(), 2, "7 steps (observed 5 / asserted 2 / synthetic 0)"
    export = [(2, "args")] if redaction == "export" else []
    return run.bundle(export_redact=export), len(export), "6 steps (observed 5 / asserted 1 / synthetic 0)"


def write(tmp_path: Path, form: str, bundle: dict[str, Any], key: SigningKey) -> Path:
    path = tmp_path / f"run.{form}"
    if form == "json":
        from .producer import sign_bundle

        path.write_bytes(dumps(sign_bundle(bundle, key)))
    elif form == "jsonl":
        path.write_bytes(to_jsonl(bundle, key))
    else:
        path.write_bytes(dumps(to_dsse(bundle, key)))
    return path


PIN_MODES = ["none", "expect-key", "expect-recorder-key", "trust-file", "require-sealed"]


def verify(path: Path, mode: str, tmp_path: Path, key: SigningKey, recorder: SigningKey) -> Verdict:
    if mode == "expect-key":
        return verify_cli(path, expect_key=key.public_hex)
    if mode == "expect-recorder-key":
        return verify_cli(path, expect_recorder_key=recorder.public_hex)
    if mode == "trust-file":
        trust = tmp_path / "trust.json"
        trust.write_bytes(dumps({
            "bundle_keys": [{"key_id": key.key_id, "public_key": key.public_hex}],
            "recorder_keys": [{"key_id": recorder.key_id, "public_key": recorder.public_hex}],
        }))
        return verify_cli(path, trust_file=trust)
    return verify_cli(path, require_sealed=mode == "require-sealed")


@pytest.mark.parametrize("mode", PIN_MODES)
@pytest.mark.parametrize("redaction", ["none", "store", "export"])
@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
@pytest.mark.parametrize("form", ["json", "jsonl", "dsse"])
def test_round_trip(
    tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey, form: str, alg: str, redaction: str, mode: str
) -> None:
    bundle, redacted, counts = build(redaction, alg, recorder_key)
    verdict = verify(write(tmp_path, form, bundle, bundle_key), mode, tmp_path, bundle_key, recorder_key)
    recorder_tier = mode in ("expect-recorder-key", "trust-file")
    if recorder_tier and redaction == "export":
        assert verdict.line == MARKER_FAIL  # export-time redaction always fails the recorder tier
        return
    signature = "signed" if mode in ("expect-key", "trust-file") else CAVEAT_SIGNED
    expected = f"OK: run-1 - {counts}, chain verified, sealed, {signature}"
    if recorder_tier:
        expected += ", recorder-attested"
    if redacted:
        expected += f", {redacted} field(s) redacted"
    if form == "jsonl":
        expected += " (jsonl, streamed)"
    assert verdict.line == expected
    assert (verdict.ok, verdict.form, verdict.redacted, verdict.signed) == (True, form, redacted, True)


@pytest.mark.parametrize("redaction", ["store", "export"])
def test_unsigned_redaction_caveat(tmp_path: Path, recorder_key: SigningKey, redaction: str) -> None:
    bundle, redacted, counts = build(redaction, "blake2b-256", recorder_key)
    path = tmp_path / "b.json"
    path.write_bytes(dumps(bundle))
    assert verify_cli(path).line == (
        f"OK: run-1 - {counts}, chain verified, sealed, unsigned,"
        f" {redacted} field(s) redacted (unsigned redaction - demand a signed bundle)"
    )
    if redaction == "store":  # a recorder pin lifts the caveat: the checkpoints vouch for the claims
        assert verify_cli(path, expect_recorder_key=recorder_key.public_hex).line == (
            f"OK: run-1 - {counts}, chain verified, sealed, unsigned, recorder-attested, {redacted} field(s) redacted"
        )


def test_injected_clause_and_counts(tmp_path: Path) -> None:
    run = sample_run(None, seal=False)
    run.append("injected", {"source_step": 3, "response": {"status": 500}, "replaced_response": {"status": 200}})
    run.append("injected", {"source_step": 3, "response": {"status": 503}, "replaced_response": {"status": 200}})
    path = tmp_path / "b.json"
    path.write_bytes(dumps(run.bundle()))
    assert verify_cli(path).line == (
        "OK: run-1 - 7 steps (observed 4 / asserted 1 / synthetic 2), 2 injected response(s)"
        " - a counterfactual, not recorded traffic, chain verified, unsealed - end not attested, unsigned"
    )


def test_one_step_reads_1_steps(tmp_path: Path) -> None:
    from .producer import Run

    run = Run("solo")
    run.append("run_meta", {"python": "3.11"})
    path = tmp_path / "b.json"
    path.write_bytes(dumps(run.bundle()))
    assert verify_cli(path).line == (
        "OK: solo - 1 steps (observed 1 / asserted 0 / synthetic 0), chain verified,"
        " unsealed - end not attested, unsigned"
    )


def test_every_clause_together(tmp_path: Path, bundle_key: SigningKey, recorder_key: SigningKey, tsa: Any) -> None:
    run = sample_run(recorder_key)
    run.redact((2, "tool"))
    run.worm_anchor()
    run.rfc3161_anchor(tsa.stamp(run.head, nonce=1), nonce=1)
    path = tmp_path / "b.jsonl"
    path.write_bytes(to_jsonl(run.bundle(), bundle_key))
    expected = (
        "OK: run-1 - 7 steps (observed 5 / asserted 2 / synthetic 0), chain verified, sealed, signed,"
        " recorder-attested, 1 field(s) redacted, 1 worm anchor(s), 1 RFC 3161 timestamp(s)"
    )
    assert verify_cli(path, expect_key=bundle_key.public_hex, expect_recorder_key=recorder_key.public_hex).line == (
        expected + " (RFC 3161 timestamps not pinned - pass --expect-tsa to trust the time) (jsonl, streamed)"
    )
    tsa_file = tmp_path / "tsa.pem"
    tsa_file.write_bytes(tsa.ca_pem)
    assert verify_cli(path, expect_key=bundle_key.public_hex, expect_recorder_key=recorder_key.public_hex,
                      expect_tsa=tsa_file).line == expected + " (jsonl, streamed)"
