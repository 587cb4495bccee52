"""The demo scenario: a claims agent decides on a water-damage claim."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bitexact.crypto.keystore import KeyStore
from bitexact.demo.server import claims_api
from bitexact.evidence.export import ExportResult, RunSource, export_run
from bitexact.evidence.verify import Pins, Verdict, verify_path
from bitexact.recording import Recorder, RunWriter
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


def _http_call(writer: RunWriter, client: httpx.Client, base_url: str, path: str) -> dict[str, Any]:
    response = client.get(base_url + path, headers={"accept": "application/json"})
    writer.append(
        "http_call",
        {
            "request": {"method": "GET", "path": path, "query": {}, "headers": {"accept": "application/json"},
                        "text": ""},
            "response": {"status": response.status_code, "streamed": False,
                         "media_type": response.headers.get("content-type", ""), "complete": True,
                         "headers": {"content-type": response.headers.get("content-type", "")},
                         "text": response.text},
            "model": None,
        },
    )
    return response.json()


def record_demo_run(recorder: Recorder) -> str:
    """Record the scenario through the write path; returns the run id."""
    writer = recorder.start(name="claims-triage-demo")
    writer.append("identity", {"principal": "claims-desk@northwind.example", "agent_id": "claims-triage-agent",
                               "scope": ["claims:read", "claims:decide"], "model_version": "demo-model-2026-10",
                               "environment": "demo"})
    writer.append("context", {"name": "coverage-rules", "content": {"text": POLICY_TEXT},
                              "source": "policy-handbook/v12"})
    writer.append("tool_call", {"tool": "lookup_policy", "args": ["HX-20931"], "kwargs": {},
                                "result": {"policy": "HX-20931", "escape_of_water": True, "excess_eur": 350},
                                "status": "ok"})
    with claims_api() as base_url, httpx.Client(timeout=10) as client:
        claim = _http_call(writer, client, base_url, "/v1/claims/CLM-4471")
    decision = "approve" if claim["estimate_eur"] <= 5000 else "escalate"
    writer.append("human_decision", {"actor": "adjuster:m.okafor", "decision": decision,
                                     "reason": "within single-adjuster limit", "binds_step": writer.steps - 1})
    writer.append("marker", {"note": f"claim {claim['claim']} {decision}d; payout {claim['estimate_eur'] - 350} EUR"})
    writer.seal()
    return writer.run_id


def run_demo(store: Store, home: Path, *, out_dir: Path | None = None) -> DemoResult:
    """Record, export (signed JSON) and verify the demo run, pinning our own key."""
    keys = KeyStore(home)
    key = keys.current_or_init()
    run_id = record_demo_run(Recorder(store, key))
    out_dir = out_dir or home / "exports"
    out_dir.mkdir(parents=True, exist_ok=True)
    result = export_run(RunSource.from_store(store, run_id), out_dir / f"{run_id}.bundle.json", key)
    pins = Pins(bundle_keys=frozenset({key.public_hex}), recorder_keys=frozenset({key.public_hex}),
                require_sealed=True)
    return DemoResult(run_id, result, verify_path(result.path, pins), key.public_hex)
