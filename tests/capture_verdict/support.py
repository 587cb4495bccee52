"""Helpers shared by the capture verdict, CLI and health tests: contract text, keys, policies, runs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bitexact.capture import CapturePolicy, load_policy, parse_policy, read_policy_file
from bitexact.capture.clause import capture_clause
from bitexact.crypto import SigningKey
from bitexact.evidence.export import RunSource, bundle_document
from bitexact.evidence.verify import Pins, Verdict, verify_bundle
from bitexact.recording import CheckpointPolicy, Recorder, RunWriter
from bitexact.store import Store

DATA = Path(__file__).resolve().parent.parent / "data" / "capture_verdict"
CONTRACT: dict[str, Any] = json.loads((DATA / "contract_text.json").read_text(encoding="utf-8"))
VISA = "4111111111111111"
MASTERCARD = "5500000000000004"
IBAN = "DE89370400440532013000"
ENV_NAMES = ("BITEXACT_CAPTURE_POLICY", "BITEXACT_CAPTURE_KEY", "BITEXACT_REQUIRE_DUAL_CONTROL", "BITEXACT_ENV")


def write_key(path: Path, hex_key: str | None = None) -> Path:
    """A capture key file (owner-only); ``hex_key`` for a fixed test key, else a fresh one."""
    if hex_key is None:
        from bitexact.crypto.keysources import generate_key_file

        generate_key_file(path)
        return path
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(hex_key + "\n")
    return path


def contract_key(tmp_path: Path) -> Path:
    """The throwaway key whose id starts 3a9f (the contract's example)."""
    return write_key(tmp_path / "key-3a9f.key", CONTRACT["test_key_3a9f"]["hex"])


def policy_file(tmp_path: Path, document: dict[str, Any], name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def policy_with(document: dict[str, Any]) -> CapturePolicy:
    return parse_policy(document, name="test", env={})


def recorder(store: Store, key: SigningKey, policy: CapturePolicy | str) -> Recorder:
    chosen = load_policy(policy, env={}) if isinstance(policy, str) else policy
    return Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600), policy=chosen)


def verify_stored(store: Store, key: SigningKey, run_id: str, revoked: dict[str, str] | None = None) -> Verdict:
    """The run exported in memory and verified with the capture clause, as `bitexact verify RUN` does."""
    document = bundle_document(RunSource.from_store(store, run_id), key)
    return verify_bundle(document, Pins.from_options(), clauses=[capture_clause(revoked or {})])


def verify_plain(store: Store, key: SigningKey, run_id: str) -> Verdict:
    document = bundle_document(RunSource.from_store(store, run_id), key)
    return verify_bundle(document, Pins.from_options())


def contract_run(writer: RunWriter) -> None:
    """The contract's example: two card numbers in one field, an IBAN in another, one hash-only field."""
    writer.append("tool_call", {"tool": "pay", "args": [f"card {VISA}", f"and {MASTERCARD}"],
                                "kwargs": {"iban": IBAN, "amount": 3490}})
    writer.append("identity", {"principal": "svc:claims", "on_behalf_of": "user:7f3a9c"})
    writer.seal()


CONTRACT_POLICY: dict[str, Any] = {
    "fields": [{"kind": "identity", "path": "on_behalf_of", "mode": "hash-only"},
               {"kind": "*", "path": "*", "mode": "scrub"}],
}


def keyed_contract_env(tmp_path: Path) -> dict[str, str]:
    """The contract's policy with a capture key, as BITEXACT_CAPTURE_POLICY names it."""
    doc = {**CONTRACT_POLICY, "hash_only_key": {"file": str(contract_key(tmp_path))}}
    return {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, doc))}


def recorded_contract(store: Store, key: SigningKey, env: dict[str, str]) -> str:
    """The contract's run recorded under ``env``'s policy (step 2: the hash-only on_behalf_of "user:7f3a9c")."""
    writer = recorder(store, key, read_policy_file(env["BITEXACT_CAPTURE_POLICY"])).start()
    contract_run(writer)
    return writer.run_id


def full_cli() -> Any:
    """The main command group, as the console script runs it."""
    from bitexact.cli import cli as main_cli

    return main_cli


def invoker(home: Path) -> Any:
    """``bx("capture", "test", "x", env={...})``: the real CLI in-process with BITEXACT_HOME set.

    ``env`` adds variables (``None`` unsets one); ``result.stdout`` and
    ``result.stderr`` are kept apart.
    """
    from click.testing import CliRunner

    runner = CliRunner()
    group = full_cli()

    def invoke(*args: str, env: dict[str, str | None] | None = None) -> Any:
        environment: dict[str, str | None] = {"BITEXACT_HOME": str(home), "COLUMNS": "250"}
        environment.update(env or {})
        return runner.invoke(group, list(args), env=environment, catch_exceptions=False)

    return invoke
