"""The policy in force comes from the environment; every test here chooses its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.store import Store
from capture_verdict.support import ENV_NAMES, invoker, keyed_contract_env, recorded_contract


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
    return keyed_contract_env(tmp_path)


@pytest.fixture
def contract(store: Store, recorder_key: SigningKey, keyed_env: dict[str, str]) -> str:
    """The contract's run recorded under ``keyed_env``'s policy (step 2: the hash-only on_behalf_of)."""
    return recorded_contract(store, recorder_key, keyed_env)
