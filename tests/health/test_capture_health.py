"""`bitexact health`: the capture warnings of capture-controls.md, and the exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bitexact.capture import parse_policy
from bitexact.crypto import SigningKey
from bitexact.health import CHECKS, Finding, HealthContext, run_health
from bitexact.store import Store
from capture_verdict.support import CONTRACT_POLICY, VISA, policy_file, policy_with, recorder, write_key


def _names(report_json: dict) -> list[tuple[str, str]]:
    return [(f["level"], f["name"]) for f in report_json["findings"]]


def test_the_shipped_default_on_an_empty_home_is_healthy(bx: Any, home: Path) -> None:
    result = bx("health", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"status": "healthy", "home": str(home), "findings": []}
    assert not home.exists()  # health never creates a data directory
    assert "healthy" in bx("health").stdout


def test_an_unusable_policy_is_critical(bx: Any, tmp_path: Path) -> None:
    path = policy_file(tmp_path, {"budget_ms": 0})
    result = bx("health", "--json", env={"BITEXACT_CAPTURE_POLICY": str(path)})
    assert result.exit_code == 2
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["level"], finding["name"]) == ("critical", "capture-policy-invalid")
    assert finding["details"]["field"] == "budget_ms"


def test_policy_off_warns_and_is_critical_in_prod(bx: Any) -> None:
    off = bx("health", "--json", env={"BITEXACT_CAPTURE_POLICY": "off"})
    assert off.exit_code == 1 and _names(json.loads(off.stdout)) == [("warn", "capture-policy-off")]
    prod = bx("health", "--json", env={"BITEXACT_CAPTURE_POLICY": "off", "BITEXACT_ENV": "prod"})
    assert prod.exit_code == 2 and _names(json.loads(prod.stdout)) == [("critical", "capture-policy-off")]
    table = bx("health", env={"BITEXACT_CAPTURE_POLICY": "off"})
    assert table.exit_code == 1 and "capture-policy-off" in table.stdout


def test_hash_only_rules_and_no_key_warn_capture_key_missing(bx: Any, tmp_path: Path) -> None:
    env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, CONTRACT_POLICY))}
    result = bx("health", "--json", env=env)
    assert result.exit_code == 1 and _names(json.loads(result.stdout)) == [("warn", "capture-key-missing")]
    keyed = {**CONTRACT_POLICY, "hash_only_key": {"file": str(write_key(tmp_path / "k.key"))}}
    env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, keyed, name="keyed.json"))}
    assert bx("health", "--json", env=env).exit_code == 0


def test_revoked_keys_warn_and_the_active_one_is_critical(bx: Any, tmp_path: Path) -> None:
    active = write_key(tmp_path / "active.key")
    active_id = parse_policy({"hash_only_key": {"file": str(active)}}, env={}).key_id
    other_id = "3a9f0c1d2e4b5a6978c0d1e2f3a4b5c6"
    doc = {"hash_only_key": {"file": str(active)}, "revoked_keys": {other_id: "2026-10-01"}}
    env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, doc))}
    warned = json.loads(bx("health", "--json", env=env).stdout)
    assert _names(warned) == [("warn", "capture-key-revoked")]
    assert other_id in warned["findings"][0]["message"] and "2026-10-01" in warned["findings"][0]["message"]
    doc["revoked_keys"] = {other_id: "2026-10-01", active_id: "2026-11-01"}
    env = {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, doc, name="worse.json"))}
    result = bx("health", "--json", env=env)
    assert result.exit_code == 2
    findings = json.loads(result.stdout)["findings"]
    assert [(f["level"], f["details"]["key_id"]) for f in findings] == [
        ("critical", active_id), ("warn", other_id)]


def test_unopenable_and_scrub_failed_fields_are_named_per_run(
    bx: Any, store: Store, recorder_key: SigningKey
) -> None:
    writer = recorder(store, recorder_key, policy_with(CONTRACT_POLICY)).start()
    writer.append("identity", {"principal": "svc", "on_behalf_of": "user:1"})
    writer.append("tool_call", {"tool": "kyc", "result": "x"}, hints={"result": "hash-only"})
    slow = recorder(store, recorder_key, policy_with({"budget_ms": 1})).start()
    slow.append("tool_call", {"tool": "dump", "args": ["1234 " * 220_000]})
    clean = recorder(store, recorder_key, "default").start()
    clean.append("tool_call", {"tool": "pay", "args": [VISA]})
    report = json.loads(bx("health", "--json").stdout)
    by_name = {f["name"]: f for f in report["findings"]}
    unopenable = by_name["capture-key-unavailable"]
    assert unopenable["run_id"] == writer.run_id and unopenable["level"] == "warn"
    assert unopenable["details"]["fields"] == ["1:on_behalf_of", "3:result"]  # step 2: the gap it declared
    failed = by_name["scrub-failed"]
    assert failed["run_id"] == slow.run_id and failed["details"]["fields"]
    assert all(token.startswith("1:") for token in failed["details"]["fields"])
    assert len(report["findings"]) == 2  # the clean run names nothing
    assert bx("health").exit_code == 1


def test_a_collector_that_sent_what_the_recorder_removes_is_named(
    bx: Any, store: Store, recorder_key: SigningKey
) -> None:
    writer = recorder(store, recorder_key, "default").start()
    # The documented schema: the collector's entry-level declaration, a field the recorder changed with its own.
    block = {"v": 1, "applied_by": "collector-eu-1", "policy": "d" * 64,
             "fields": {"args": {"mode": "scrub", "found": {"pan": 1}, "applied_by": "recorder", "policy": "e" * 64},
                        "content.b64": {"mode": "unscanned", "applied_by": "recorder"},
                        "result": {"mode": "scrub", "found": {"iban": 1}}}}
    writer.append_own("tool_call", {"tool": "pay", "args": ["[PAN ****1111]"], "result": "[IBAN]"}, capture=block)
    result = bx("health", "--json")
    assert result.exit_code == 2
    [finding] = json.loads(result.stdout)["findings"]
    assert (finding["level"], finding["name"], finding["run_id"]) == ("critical", "collector-unscrubbed", writer.run_id)
    assert finding["details"] == {"collector": "collector-eu-1", "fields": ["1:args"], "collector_policy": "d" * 64,
                                  "recorder_policy": "e" * 64, "cause": "other-policy"}
    assert "collector-eu-1" in finding["message"]


def test_a_check_that_raises_is_a_critical_finding_not_a_crash() -> None:
    def broken(ctx: HealthContext) -> list[Finding]:
        raise RuntimeError("boom")

    report = run_health(HealthContext(env={}), (*CHECKS, broken))
    assert [(f.level, f.name) for f in report.findings] == [("critical", "health-check-failed")]
    assert report.exit_code() == 2 and "boom" in report.findings[0].message


def test_a_finding_needs_a_known_level() -> None:
    import pytest

    with pytest.raises(ValueError, match="warn or critical"):
        Finding("info", "x", "y")  # type: ignore[arg-type]
