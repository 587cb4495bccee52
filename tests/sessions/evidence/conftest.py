"""Fixtures for session import tests: a write path with the capture policy off, export + verify, the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bitexact.canon import canonicalize, loads
from bitexact.capture import load_policy
from bitexact.cli import cli
from bitexact.crypto import SigningKey
from bitexact.evidence.export import RunSource, bundle_document
from bitexact.evidence.verify import Pins, Verdict, verify_bundle
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
"""The parsers' engine fixtures (read-only)."""
DATA = Path(__file__).resolve().parent / "data"
"""This suite's own hand-made inputs."""

Invoke = Callable[..., Result]


@pytest.fixture
def plain_recorder(store: Store, recorder_key: SigningKey) -> Recorder:
    """The write path with the capture policy off, so recorded values can be compared exactly."""
    return Recorder(store, recorder_key, checkpoints=CheckpointPolicy(every=4, seconds=3600),
                    policy=load_policy("off"))


def verify_run(store: Store, key: SigningKey, run_id: str) -> Verdict:
    """Export the run, round-trip it through canonical bytes and the strict reader, verify under a recorder pin."""
    doc = bundle_document(RunSource.from_store(store, run_id), key)
    parsed = loads(canonicalize(doc))
    return verify_bundle(parsed, Pins(recorder_keys=frozenset({key.public_hex}), require_sealed=True))


def entries(store: Store, run_id: str) -> list[dict[str, Any]]:
    return list(store.entries(run_id))


@pytest.fixture
def bx(home: Path) -> Invoke:
    """The real root command."""
    runner = CliRunner()  # click 8.2+: result.stdout and result.stderr are kept apart

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"},
                             catch_exceptions=False)

    return invoke
