"""The demo scenario: a claims agent decides on a water-damage claim."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bitexact.crypto.keystore import KeyStore
from bitexact.demo.server import claims_api
from bitexact.errors import EvidenceError
from bitexact.evidence.export import ExportResult, RunSource, export_run
from bitexact.evidence.verify import Pins, Verdict, verify_path
from bitexact.recording import Recorder
from bitexact.sdk import record_tool, wrap
from bitexact.sdk import run as sdk_run
from bitexact.store import Store

POLICY_TEXT = (
    "Escape of water is covered when the source is a neighbouring property. "
    "The excess of EUR 350 applies once per claim. Claims above EUR 5000 need a second adjuster."
)


@dataclass(frozen=True)
class DemoResult:
    run_id: str
    export: ExportResult
    verdict: Verdict
    public_key: str


@record_tool
def lookup_policy(policy: str) -> dict[str, Any]:
    """The agent's policy lookup tool (a local table in the demo)."""
    return {"policy": policy, "escape_of_water": True, "excess_eur": 350}


def record_demo_run(recorder: Recorder) -> str:
    """Record the scenario through the SDK (into ``recorder``'s store); returns the run id."""
    with sdk_run(name="claims-triage-demo", recorder=recorder, strict=True) as r:
        r.identity(principal="claims-desk@northwind.example", agent_id="claims-triage-agent",
                   scope=["claims:read", "claims:decide"], model_version="demo-model-2026-10",
                   environment="demo")
        r.context("coverage-rules", POLICY_TEXT, source="policy-handbook/v12")
        lookup_policy("HX-20931")
        with claims_api() as base_url, wrap(httpx.Client(timeout=10, trust_env=False)) as client:  # loopback: never through a proxy
            claim = client.get(base_url + "/v1/claims/CLM-4471", headers={"accept": "application/json"}).json()
        fetched = r.last_step("http_call")  # the claim lookup (a gap marker may follow it: not r.steps - 1)
        decision = "approve" if claim["estimate_eur"] <= 5000 else "escalate"
        r.human_decision("adjuster:m.okafor", decision, reason="within single-adjuster limit", binds_step=fetched)
        r.marker(f"claim {claim['claim']} {decision}d; payout {claim['estimate_eur'] - 350} EUR")
    assert r.run_id is not None
    return r.run_id


def run_demo(store: Store, home: Path, *, out_dir: Path | None = None) -> DemoResult:
    """Record, export (signed JSON) and verify the demo run, pinning our own key."""
    keys = KeyStore(home)
    key = keys.current_or_init()
    out_dir = out_dir or home / "exports"
    try:  # before recording: a directory that cannot be made must not leave a run behind
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvidenceError(f"cannot make {out_dir} for the demo's bundle: {exc.strerror or exc}") from None
    # With the key files: a key the store marks compromised is refused naming its file, and a rotation while
    # the demo records is read as every other recording reads it.
    run_id = record_demo_run(Recorder(store, key, keys=keys))
    try:
        result = export_run(RunSource.from_store(store, run_id), out_dir / f"{run_id}.bundle.json", key)
    except OSError as exc:  # a full disk: the run is recorded, its bundle could not be written
        raise EvidenceError(f"run {run_id} is recorded, but its bundle could not be written: {exc}") from None
    pins = Pins(bundle_keys=frozenset({key.public_hex}), recorder_keys=frozenset({key.public_hex}),
                require_sealed=True)
    return DemoResult(run_id, result, verify_path(result.path, pins), key.public_hex)
