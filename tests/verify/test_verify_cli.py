"""The command-line contract of §12.3: inputs, dispatch, --require-sealed, one ASCII line."""

from __future__ import annotations

import json
from pathlib import Path

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_cli, verify_path

from .conftest import sample_run
from .producer import Run, dumps, to_dsse, to_jsonl


def test_missing_bundle(tmp_path: Path) -> None:
    verdict = verify_cli(tmp_path / "nope.json")
    assert verdict.line == f"FAIL: no such file: {tmp_path / 'nope.json'}"
    assert verdict.exit_code() == 1
    assert verify_cli(f"{tmp_path}/./nope.json").line == f"FAIL: no such file: {tmp_path}/./nope.json"


def test_missing_tsa_file_is_read_first(tmp_path: Path) -> None:
    tsa = tmp_path / "tsa.pem"
    verdict = verify_cli(tmp_path / "nope.json", expect_tsa=tsa, trust_file=tmp_path / "trust.json")
    assert verdict.line == f"FAIL: no such file: {tsa} (No such file or directory)"


def test_missing_trust_file(tmp_path: Path) -> None:
    trust = tmp_path / "trust.json"
    assert verify_cli(tmp_path / "nope.json", trust_file=trust).line == (
        f"FAIL: no such file: {trust} (No such file or directory)"
    )


def test_bundle_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(b'{"format": "bitexact-bundle/1", "x": NaN}')
    assert verify_cli(path).line == "FAIL: bundle is not valid JSON: non-finite JSON constant 'NaN' is not allowed"
    path.write_bytes(b'{"a": "\xc3"}')
    assert verify_cli(path).line == "FAIL: bundle is not valid JSON: invalid UTF-8 at byte 7: invalid continuation byte"
    path.write_bytes(b"")
    assert verify_cli(path).line == "FAIL: bundle is not valid JSON: Expecting value: line 1 column 1 (char 0)"


def test_bundle_with_a_duplicate_key(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(b'{"format":"bitexact-bundle/1","run_id":"a","run_id":"b"}')
    assert verify_cli(path).line == "FAIL: bundle is not valid JSON: duplicate key 'run_id'"


def test_bundle_nested_past_the_limit(tmp_path: Path) -> None:
    run = Run("r")
    deep: object = 1
    for _ in range(125):
        deep = {"d": deep}
    run.append("marker", {"note": deep})  # data at 126 levels: 129 with bundle, entries and entry
    path = tmp_path / "b.json"
    path.write_text(json.dumps(run.bundle()))  # our canonical writer refuses this depth itself
    assert verify_cli(path).line == "FAIL: bundle is not valid JSON: nesting deeper than 128 levels is refused"


def test_bundle_nested_at_the_limit_verifies(tmp_path: Path) -> None:
    run = Run("r")
    deep: object = 1
    for _ in range(124):
        deep = {"d": deep}
    run.append("marker", {"note": deep})  # 125 levels of data, the producer's maximum
    path = tmp_path / "b.json"
    path.write_bytes(dumps(run.bundle()))
    assert verify_cli(path).line.startswith("OK: r - 1 steps")


def test_pretty_printed_json_bundle(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps(sample_run(None).bundle(), indent=2))
    verdict = verify_cli(path)
    assert verdict.ok and verdict.form == "json" and verdict.steps == 6


def test_require_sealed(tmp_path: Path, bundle_key: SigningKey) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(dumps(sample_run(None, seal=False).bundle(bundle_key)))
    assert verify_cli(path).line.startswith("OK: run-1 - 5 steps")
    assert "unsealed - end not attested" in verify_cli(path).line
    verdict = verify_cli(path, require_sealed=True)
    assert verdict.line == "FAIL: bundle is unsealed - its end is not attested and --require-sealed was given"
    assert verdict.exit_code() == 1


def test_require_sealed_in_every_form(tmp_path: Path, bundle_key: SigningKey) -> None:
    bundle = sample_run(None, seal=False).bundle()
    (tmp_path / "b.jsonl").write_bytes(to_jsonl(bundle, bundle_key))
    (tmp_path / "b.dsse.json").write_bytes(dumps(to_dsse(bundle, bundle_key)))
    for name in ("b.jsonl", "b.dsse.json"):
        assert verify_cli(tmp_path / name, require_sealed=True).line == (
            "FAIL: bundle is unsealed - its end is not attested and --require-sealed was given"
        )


def test_line_is_ascii_with_backslash_escapes(tmp_path: Path) -> None:
    run = Run("café-\u2603")
    run.append("marker", {"note": "n"})
    path = tmp_path / "b.json"
    path.write_bytes(dumps(run.bundle()))
    verdict = verify_cli(path)
    assert verdict.line.startswith("OK: caf\\xe9-\\u2603 - 1 steps")
    assert verdict.message.startswith("OK: ") is False and verdict.message.startswith("café-\u2603")
    assert verdict.line.isascii()


def test_fail_line_escapes_too(tmp_path: Path) -> None:
    bundle = sample_run(None).bundle()
    bundle["entries"][1]["run_id"] = "ünknown"
    path = tmp_path / "b.json"
    path.write_bytes(dumps(bundle))
    assert verify_cli(path).line == "FAIL: step 1: entry run_id '\\xfcnknown' does not match bundle run_id"


def test_verdict_facts(tmp_path: Path, bundle_key: SigningKey) -> None:
    run = sample_run(None)
    run.redact((2, "tool"))
    path = tmp_path / "b.json"
    path.write_bytes(dumps(run.bundle(bundle_key)))
    verdict = verify_path(path, Pins())
    assert (verdict.ok, verdict.run_id, verdict.steps, verdict.sealed, verdict.signed, verdict.redacted) == (
        True, "run-1", 7, True, True, 1
    )
    assert verdict.prov_counts == {"observed": 5, "asserted": 2, "synthetic": 0}
    assert verdict.exit_code() == 0


def test_failed_verdict_reports_how_far_it_got(tmp_path: Path) -> None:
    bundle = sample_run(None).bundle()
    bundle["entries"][4]["data"]["value"] = 0
    path = tmp_path / "b.json"
    path.write_bytes(dumps(bundle))
    verdict = verify_path(path, Pins())
    assert not verdict.ok and verdict.run_id == "run-1" and verdict.steps == 4
