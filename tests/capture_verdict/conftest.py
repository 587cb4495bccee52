"""The policy in force comes from the environment; every test here chooses its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bitexact.capture import read_policy_file
from bitexact.crypto import SigningKey
from bitexact.store import Store
from capture_verdict.support import (
    CONTRACT_POLICY,
    ENV_NAMES,
    contract_key,
    contract_run,
    invoker,
    policy_file,
    recorder,
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bx(home: Path) -> Any:
    """The CLI, in process, against the test's data directory."""
    return invoker(home)


@pytest.fixture
def keyed_env(tmp_path: Path) -> dict[str, str]:
    """The contract's policy with a capture key, as BITEXACT_CAPTURE_POLICY names it."""
    doc = {**CONTRACT_POLICY, "hash_only_key": {"file": str(contract_key(tmp_path))}}
    return {"BITEXACT_CAPTURE_POLICY": str(policy_file(tmp_path, doc))}


@pytest.fixture
def contract(store: Store, recorder_key: SigningKey, keyed_env: dict[str, str]) -> str:
    """The contract's run recorded under ``keyed_env``'s policy (step 2: the hash-only on_behalf_of)."""
    writer = recorder(store, recorder_key, read_policy_file(keyed_env["BITEXACT_CAPTURE_POLICY"])).start()
    contract_run(writer)  # step 2 is the hash-only on_behalf_of "user:7f3a9c"
    return writer.run_id
